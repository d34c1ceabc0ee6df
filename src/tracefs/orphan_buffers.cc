#include "tracefs/orphan_buffers.h"

#include <filesystem>
#include <vector>

#include "tracefs/instance_owner.h"
#include "tracefs/trace_pipe_raw.h"
#include "tracefs/tracefs_api.h"

namespace cstool {

void OrphanBuffers::InstanceDeleter::operator()(tracefs_instance* i) const {
  tracefs_instance_free(i);  // the handle only: the instance stays
}

std::optional<OrphanBuffers> OrphanBuffers::Open(const std::string& name, int pid) {
  const char* tracing = tracefs_tracing_dir();
  if (tracing == nullptr || !tracefs_instance_exists(name.c_str()) ||
      InstanceOwnerRuns(std::filesystem::path(tracing) / "instances" / name, pid))
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
    if (n <= 0) break;
    out.emplace_back(page.data(), page.size());
  }
  return out;
}

}  // namespace cstool
