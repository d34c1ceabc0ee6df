// Live-attach seeding (`cstool msa`, `record -p`): threads that exist before the first
// event enter the state machine in the state /proc showed for them, so that their
// first interval is labelled instead of unknown.
#include <algorithm>
#include <vector>

#include "sched/state_machine.h"
#include "sched/state_machine_inl.h"

namespace cstool {

void StateMachine::SeedThread(const AttachSeed& seed, int64_t ts) {
  BeginAt(ts);
  threads_.HintTgid(seed.tid, seed.tgid);
  Thread& t = NewThread(seed.tid, seed.comm, ts, false);
  t.tgid = seed.tgid;
  t.tracked = true;
  t.cpu = seed.cpu;
  if (seed.kernel_thread) {
    ThreadTracker::MarkKernelThread(t);
  } else if (seed.syscall != kSyscallUnknown || !caps_.syscalls) {
    t.syscall = caps_.syscalls ? seed.syscall : kNotInSyscall;
    t.user_thread = true;
  }
  uint16_t bits = 0;
  switch (seed.state.empty() ? '?' : seed.state[0]) {
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

void StateMachine::SeedUnseenThread(const AttachSeed& seed, int64_t ts) {
  if (threads_.Find(seed.tid) != nullptr) return;
  SeedThread(seed, ts);
}

}  // namespace cstool
