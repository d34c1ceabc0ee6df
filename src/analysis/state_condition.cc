#include "analysis/state_condition.h"

#include <fmt/core.h>

#include <algorithm>

#include "base/duration_text.h"
#include "base/errors.h"
#include "base/text_fields.h"

namespace cstool {
namespace {

constexpr uint32_t Bit(Microstate m) { return 1u << static_cast<unsigned>(m); }

constexpr uint32_t kSleepStates =
    Bit(Microstate::kSleep) | Bit(Microstate::kSleepFutex) | Bit(Microstate::kSleepPoll) |
    Bit(Microstate::kSleepUninterruptible) | Bit(Microstate::kSleepPaging);
constexpr uint32_t kWaitCpuStates =
    Bit(Microstate::kWaitCpuWakeup) | Bit(Microstate::kWaitCpuPreempted);

}  // namespace

StateCondition ParseStateCondition(std::string_view text, const SyscallTable& syscalls) {
  auto usage = [&](std::string_view why) {
    return Error(fmt::format("--trigger '{}': {} (e.g. 'sleep>100ms', 'wait_cpu>5ms', "
                             "'sleep:futex>50ms', or a microstate key such as "
                             "'sleep_uninterruptible>20ms')",
                             text, why),
                 ExitCode::kUsage);
  };
  const size_t gt = text.find('>');
  if (gt == std::string_view::npos) throw usage("expected STATE>DURATION");
  StateCondition c;
  c.text = std::string(text);
  const std::string_view state = Trim(text.substr(0, gt));
  // ">=": at least the duration, which in whole nanoseconds is longer than one less.
  const bool at_least = gt + 1 < text.size() && text[gt + 1] == '=';
  const std::string_view duration = Trim(text.substr(gt + (at_least ? 2 : 1)));
  const std::optional<int64_t> ns = ParseDurationNs(duration);
  if (!ns)
    throw usage(
        fmt::format("'{}' is not a duration: a number and a unit (ns, us, ms or s), under 292 "
                    "years",
                    duration));
  c.threshold_ns = at_least ? std::max<int64_t>(*ns - 1, -1) : *ns;
  if (state == "sleep") {
    c.states = kSleepStates;
  } else if (state == "wait_cpu") {
    c.states = kWaitCpuStates;
  } else if (state.starts_with("sleep:")) {
    c.states = kSleepStates;
    c.syscall = std::string(state.substr(6));
    if (!syscalls.Knows(c.syscall)) throw usage(fmt::format("no syscall named '{}'", c.syscall));
  } else {
    for (size_t m = 0; m < kMicrostateCount; ++m)
      if (kMicrostateNames[m].key == state && m != static_cast<size_t>(Microstate::kUnknown))
        c.states = Bit(static_cast<Microstate>(m));
    if (c.states == 0) throw usage(fmt::format("unknown state '{}'", state));
  }
  return c;
}

bool StateConditionObserver::Counts(const Thread& thread, Microstate state) const {
  if (!thread.tracked || (condition_.states & Bit(state)) == 0) return false;
  // A syscall's sleep: the thread is still inside it when the sleep ends.
  return condition_.syscall.empty() ||
         (thread.syscall >= 0 && syscalls_.Name(thread.syscall) == condition_.syscall);
}

void StateConditionObserver::OnStateSegment(const Thread& thread, Microstate state, int32_t /*cpu*/,
                                            int64_t start, int64_t end) {
  if (!Counts(thread, state)) {
    runs_.erase(thread.id);
    return;
  }
  auto [it, fresh] = runs_.try_emplace(thread.id, Run{start, end});
  Run& run = it->second;
  if (!fresh) {
    if (run.end != start) run = Run{start, end};  // not contiguous: a new stretch
    run.end = end;
  }
  if (run.end - run.start > condition_.threshold_ns && !hit_ && !Reported(thread, run)) {
    hit_ = Hit{run.end,
               fmt::format("{}: tid {} ({}) {:.1f} ms, ending at {}", condition_.text, thread.tid,
                           thread.comm, static_cast<double>(run.end - run.start) / 1e6,
                           TraceTimeText(run.end))};
    reported_[thread.id] = run.start;  // the stretch is reported once
  }
}

bool StateConditionObserver::Reported(const Thread& thread, const Run& run) {
  auto it = reported_.find(thread.id);
  if (it == reported_.end()) return false;
  if (it->second < run.start) {  // an earlier stretch's
    reported_.erase(it);
    return false;
  }
  return it->second <= run.end;
}

void StateConditionObserver::CheckOpen(const Thread& thread, int64_t now, int64_t at_least_ns) {
  // (A state still to be told apart, "asleep in a syscall not yet known", is no answer.)
  // (Nor a thread its parent is still creating: not runnable yet, in no state.)
  if (hit_ || thread.freed || thread.abstract != AbstractState::kNone ||
      thread.awaits_first_wakeup || !Counts(thread, thread.state))
    return;
  Run open{thread.since, now};
  if (auto it = runs_.find(thread.id); it != runs_.end() && it->second.end == thread.since)
    open.start = it->second.start;
  if (now - open.start <= std::max(condition_.threshold_ns, at_least_ns) || Reported(thread, open))
    return;
  hit_ = Hit{now, fmt::format("{}: tid {} ({}) {:.1f} ms so far, still at {}", condition_.text,
                              thread.tid, thread.comm, static_cast<double>(now - open.start) / 1e6,
                              TraceTimeText(now))};
  // An instant inside the stretch: whatever segments of it come later (the switch
  // placement may hold some from before `since`), any run that covers it was reported.
  reported_[thread.id] = thread.since;
}

std::optional<StateConditionObserver::Hit> StateConditionObserver::Take() {
  std::optional<Hit> h = std::move(hit_);
  hit_.reset();
  return h;
}

bool SchedulerEventsSuffice(const StateCondition& condition) {
  if (!condition.syscall.empty()) return false;
  if (condition.states == kSleepStates) return true;
  return (condition.states &
          ~(kWaitCpuStates | Bit(Microstate::kStopped) | Bit(Microstate::kZombie))) == 0;
}

}  // namespace cstool
