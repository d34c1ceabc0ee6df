#include "tracefs/orphan_buffers.h"

#include <filesystem>
#include <vector>

#include "tracefs/instance_owner.h"
#include "tracefs/trace_pipe_raw.h"
#include "tracefs/tracefs_api.h"
#include "tracefs/tracefs_session.h"

namespace cstool {

void OrphanBuffers::InstanceDeleter::operator()(tracefs_instance* i) const {
  tracefs_instance_free(i);  // the handle only: the instance stays
}

std::optional<int64_t> OrphanBuffers::StampOf(const std::string& name) {
  const std::filesystem::path dir = TracefsSession::InstanceDir(name);
  return dir.empty() ? std::nullopt : ChangedAtWallNs(dir);
}

std::optional<OrphanBuffers> OrphanBuffers::Open(const std::string& name, int pid, int64_t stamp) {
  if (StampOf(name) != stamp || InstanceOwnerRuns(TracefsSession::InstanceDir(name), pid))
    return std::nullopt;
  OrphanBuffers b;
  b.instance_.reset(tracefs_instance_alloc(nullptr, name.c_str()));
  if (!b.instance_) return std::nullopt;
  tracefs_trace_off(b.instance_.get());
  return b;
}

std::vector<std::string> OrphanBuffers::Drain(int cpu) const {
  TracePipeRaw pipe(instance_.get(), cpu);
  std::vector<char> page(pipe.subbuf_size());
  std::vector<std::string> out;
  // (A bound, should the kernel keep handing out pages: a buffer holds far fewer.)
  for (size_t i = 0; i < (size_t{1} << 20); ++i) {
    const int n = tracefs_cpu_flush(pipe.get(), page.data());
    if (n <= 0) break;                           // empty (or an error: what was read stands)
    out.emplace_back(page.data(), page.size());  // a whole sub-buffer, padded with zeros
  }
  return out;
}

}  // namespace cstool
