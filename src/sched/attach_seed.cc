// Live-attach seeding (`cstool msa`, `record -p`): threads that exist before the first
// event enter the state machine in the state /proc showed for them, so that their
// first interval is labelled instead of unknown.
#include <algorithm>
#include <vector>

#include "sched/state_machine.h"
#include "sched/state_machine_inl.h"

namespace cstool {

void StateMachine::SeedThread(int32_t tid, int32_t tgid, std::string_view comm, char letter,
                              int64_t syscall, int32_t cpu, int64_t ts) {
  if (first_ts_ < 0) first_ts_ = ts;
  threads_.HintTgid(tid, tgid);
  Thread& t = NewThread(tid, comm, ts, false);
  t.tgid = tgid;
  t.tracked = true;
  t.cpu = cpu;
  if (syscall != kSyscallUnknown || !caps_.syscalls) {
    t.syscall = caps_.syscalls ? syscall : kNotInSyscall;
    t.user_thread = true;
  }
  uint16_t bits = 0;
  switch (letter) {
    case 'R':
      // Running or queued: which one, /proc does not say; the first event will.
      t.state = Microstate::kUnknown;
      return;
    case 'S':
      bits = kStateInterruptible;
      break;
    case 'D':
      bits = kStateUninterruptible;
      break;
    case 'T':
      bits = kStateStopped;
      break;
    case 't':
      bits = kStateTraced;
      break;
    case 'Z':
      bits = kStateZombie;
      break;
    case 'I':
      bits = kStateInterruptible;
      break;
    default:
      return;
  }
  AbstractState abstract;
  t.state = causes_.SleepState(bits, t, &abstract);
  t.abstract = abstract;
}

}  // namespace cstool
