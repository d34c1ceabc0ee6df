// RAII owners for the C handles of libtraceevent and libtracecmd.
#pragma once

#include <traceevent/event-parse.h>

#include <memory>
extern "C" {
#include <traceevent/kbuffer.h>  // has no extern "C" of its own
}

#include "format/tracecmd_api.h"

namespace cstool {

struct TepDeleter {
  void operator()(tep_handle* t) const { tep_free(t); }
};
struct KbufferDeleter {
  void operator()(kbuffer* k) const { kbuffer_free(k); }
};
struct TracecmdInputDeleter {
  void operator()(tracecmd_input* h) const { tracecmd_close(h); }
};
struct TepRecordDeleter {
  void operator()(tep_record* r) const { tracecmd_free_record(r); }
};

using TepHandlePtr = std::unique_ptr<tep_handle, TepDeleter>;
using KbufferPtr = std::unique_ptr<kbuffer, KbufferDeleter>;
using TracecmdInputPtr = std::unique_ptr<tracecmd_input, TracecmdInputDeleter>;
using TepRecordPtr = std::unique_ptr<tep_record, TepRecordDeleter>;

}  // namespace cstool
