// Known leaks inside system libraries, kept out of LeakSanitizer's report in the
// sanitizer builds: libtracecmd 3.1's tracecmd_open() keeps the trace clock name it
// sscanf'ed ("%ms"), and its tracecmd_buffer_instance_handle() drops its new handle when
// the instance cannot be read; libtraceevent 1.7's tep_parse_event() loses a string when
// it rejects a damaged format. cstool gets no pointer to free in any of these.
//
// Allocations made while a LibraryLeaksIgnored lives on this thread are not reported.
// This holds however the stack looks: the libraries have no frame pointers, so without
// a symbolizer (or with ASan's fast unwinder) a leak's stack shows only libc frames and
// no suppression by function or module name could match it.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define CSTOOL_HAS_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CSTOOL_HAS_LSAN 1
#endif
#endif

#ifdef CSTOOL_HAS_LSAN
#include <sanitizer/lsan_interface.h>
#endif

namespace cstool {

class [[maybe_unused]] LibraryLeaksIgnored {
 public:
#ifdef CSTOOL_HAS_LSAN
  LibraryLeaksIgnored() { __lsan_disable(); }
  ~LibraryLeaksIgnored() { __lsan_enable(); }
#else
  LibraryLeaksIgnored() = default;
#endif
  LibraryLeaksIgnored(const LibraryLeaksIgnored&) = delete;
  LibraryLeaksIgnored& operator=(const LibraryLeaksIgnored&) = delete;
};

}  // namespace cstool
