#include "tracefs/trace_pipe_raw.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/errors.h"

namespace cstool {
namespace {

int OpenCloseOnExec(tracefs_instance* instance, int cpu) {
  const std::string file = fmt::format("per_cpu/cpu{}/trace_pipe_raw", cpu);
  char* path = tracefs_instance_get_file(instance, file.c_str());
  if (!path) return -1;
  int fd = ::open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  tracefs_put_tracing_file(path);
  return fd;
}

// The instance's ring-buffer sub-buffer size (buffer_subbuf_size_kb, 6.x), else a page.
size_t SubbufSize(tracefs_instance* instance) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  if (!tracefs_file_exists(instance, "buffer_subbuf_size_kb")) return page;
  long long kb = 0;
  if (tracefs_instance_file_read_number(instance, "buffer_subbuf_size_kb", &kb) != 0 || kb <= 0)
    return page;
  return static_cast<size_t>(kb) * 1024;
}

}  // namespace

TracePipeRaw::TracePipeRaw(tracefs_instance* instance, int cpu)
    : fd_(OpenCloseOnExec(instance, cpu)) {
  if (fd_.get() < 0)
    throw Error(fmt::format("cannot open trace_pipe_raw of CPU {}: {}", cpu, std::strerror(errno)));
  subbuf_size_ = SubbufSize(instance);
  tcpu_ = tracefs_cpu_alloc_fd(fd_.get(), static_cast<int>(subbuf_size_), /*nonblock=*/true);
  if (!tcpu_) throw Error(fmt::format("cannot read trace_pipe_raw of CPU {}", cpu));
}

TracePipeRaw::~TracePipeRaw() {
  if (tcpu_) tracefs_cpu_free_fd(tcpu_);
}

}  // namespace cstool
