// The ring buffers of a killed recorder's instance: what it had not read yet. A recorder
// moves only whole sub-buffers to its page files while it records (the partial last one
// of each CPU at the end), so after kill -9 a workload that traces slowly may have all
// of its events still there. Tracing is turned off in the instance first (it was still
// tracing the command, which may live on), then each CPU's buffer is read to its end.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct tracefs_instance;

namespace cstool {

class OrphanBuffers {
 public:
  // What tells one instance of a name from another made later under it (a recorder with
  // the same pid, after pids wrapped): its directory's status-change time, ns of the wall
  // clock; nullopt when there is no such instance.
  static std::optional<int64_t> StampOf(const std::string& name);

  // The instance `name` of the dead process `pid`, tracing turned off in it; nullopt when
  // there is none, when its stamp is not `stamp` (another's), or when a live process owns
  // it.
  static std::optional<OrphanBuffers> Open(const std::string& name, int pid, int64_t stamp);

  // The sub-buffers left in `cpu`'s ring buffer, oldest first, each `page_size` bytes
  // (a partial one padded as the kernel hands it out). Throws cstool::Error.
  std::vector<std::string> Drain(int cpu) const;

 private:
  struct InstanceDeleter {
    void operator()(tracefs_instance* i) const;
  };
  std::unique_ptr<tracefs_instance, InstanceDeleter> instance_;
};

}  // namespace cstool
