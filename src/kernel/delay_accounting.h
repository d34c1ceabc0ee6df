// RAII switch for the kernel.task_delayacct sysctl (/proc/sys/kernel/task_delayacct).
// Delay accounting (blkio/swapin/... delays in taskstats) is off by default on recent
// kernels; the guard turns it on for the duration of a recording and restores the
// previous value on destruction. It never throws: when the file is missing (kernel
// without CONFIG_TASK_DELAY_ACCT, or older than 5.14) or not writable (not root, read-only
// /proc/sys in a container), state() says so and message() gives the one line the caller
// prints once; the recording goes on without delay accounting.
//
// Only tasks' delays measured while it is on are counted: threads that were already
// running when it was turned on report delays from that moment only. The CPU run delay
// (run_delay_ns) does not depend on it (CONFIG_SCHED_INFO keeps it always).
#pragma once

#include <string>

namespace cstool {

class DelayAccountingGuard {
 public:
  enum class State {
    kAlreadyOn,    // was 1; left alone
    kEnabled,      // was 0; set to 1, restored to 0 by the destructor
    kMissing,      // the sysctl file does not exist
    kNotWritable,  // was 0 and could not be set (EACCES, EPERM, EROFS, ...)
    kUnreadable,   // exists but could not be read or parsed
  };

  explicit DelayAccountingGuard(std::string path = "/proc/sys/kernel/task_delayacct");
  ~DelayAccountingGuard();
  DelayAccountingGuard(const DelayAccountingGuard&) = delete;
  DelayAccountingGuard& operator=(const DelayAccountingGuard&) = delete;

  State state() const { return state_; }
  // True when delay accounting is on for the recording.
  bool active() const { return state_ == State::kAlreadyOn || state_ == State::kEnabled; }
  // One line for the user: empty for kAlreadyOn, informative for kEnabled, a warning
  // ("delay accounting unavailable: ...") otherwise.
  const std::string& message() const { return message_; }
  // Restores the previous value now (idempotent; the destructor calls it). Returns false
  // and sets message() if the restore failed.
  bool Restore();

 private:
  std::string path_;
  State state_ = State::kUnreadable;
  std::string message_;
  bool restored_ = false;
};

std::string_view DelayAccountingStateName(DelayAccountingGuard::State s);

}  // namespace cstool
