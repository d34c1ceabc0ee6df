// `record --trigger` conditions: parsing, and stretches of one thread's segments.
#include "analysis/state_condition.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>

#include "base/errors.h"

namespace cstool {
namespace {

constexpr uint32_t Bit(Microstate m) { return 1u << static_cast<unsigned>(m); }

TEST(StateCondition, Parses) {
  SyscallTable syscalls;
  StateCondition c = ParseStateCondition("sleep>100ms", syscalls);
  EXPECT_EQ(c.threshold_ns, 100000000);
  EXPECT_TRUE(c.states & Bit(Microstate::kSleepFutex));
  EXPECT_FALSE(c.states & Bit(Microstate::kWaitCpuWakeup));
  c = ParseStateCondition("wait_cpu>5ms", syscalls);
  EXPECT_EQ(c.states, Bit(Microstate::kWaitCpuWakeup) | Bit(Microstate::kWaitCpuPreempted));
  c = ParseStateCondition("sleep:futex>50us", syscalls);
  EXPECT_EQ(c.syscall, "futex");
  EXPECT_EQ(c.threshold_ns, 50000);
  c = ParseStateCondition("sleep_uninterruptible>1.5s", syscalls);
  EXPECT_EQ(c.states, Bit(Microstate::kSleepUninterruptible));
  EXPECT_EQ(c.threshold_ns, 1500000000);
  for (const char* bad :
       {"sleep", "sleep>100", "nap>1ms", "sleep:nosuchcall>1ms", "unknown>1ms", "sleep>>1ms",
        "sleep=>1ms", "sleep>1 parsec", "sleep>1e12s", "sleep>=1e300s"})
    EXPECT_THROW(ParseStateCondition(bad, syscalls), Error) << bad;
}

// Spaces around the parts are what a user types; ">=" is at least the duration, which in
// whole nanoseconds is longer than one less.
TEST(StateCondition, TakesSpacesAndAtLeast) {
  SyscallTable syscalls;
  StateCondition c = ParseStateCondition(" sleep > 10 ms ", syscalls);
  EXPECT_EQ(c.threshold_ns, 10'000'000);
  EXPECT_EQ(c.states, ParseStateCondition("sleep>10ms", syscalls).states);
  c = ParseStateCondition("wait_cpu>=5ms", syscalls);
  EXPECT_EQ(c.threshold_ns, 5'000'000 - 1);
  EXPECT_EQ(c.states, ParseStateCondition("wait_cpu>5ms", syscalls).states);
  c = ParseStateCondition("sleep:futex >= 50us", syscalls);
  EXPECT_EQ(c.syscall, "futex");
  EXPECT_EQ(c.threshold_ns, 50'000 - 1);
  // The error names the part that is wrong, not a missing unit.
  try {
    ParseStateCondition("sleep>=ten", syscalls);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'ten' is not a duration"), std::string::npos) << e.what();
  }
}

// ">=" counts a stretch of exactly the duration; ">" does not.
TEST(StateCondition, AtLeastCountsAStretchOfExactlyTheDuration) {
  SyscallTable syscalls;
  for (const bool at_least : {false, true}) {
    StateConditionObserver o(
        ParseStateCondition(at_least ? "sleep>=100ns" : "sleep>100ns", syscalls), syscalls);
    Thread t;
    t.tracked = true;
    o.OnStateSegment(t, Microstate::kSleep, 0, 0, 100);
    o.OnStateSegment(t, Microstate::kUser, 0, 100, 150);
    EXPECT_EQ(o.Take().has_value(), at_least) << at_least;
  }
}

// The flight trigger's instance records the scheduler events alone where they decide
// the condition; the kinds of sleep, a syscall and user/sys time need the others.
TEST(StateCondition, SchedulerEventsSufficeOnlyWhereSwitchesAndWakeupsDecide) {
  SyscallTable syscalls;
  for (const char* yes : {"sleep>1ms", "wait_cpu>1ms", "wait_cpu_preempted>1ms", "stopped>1s"})
    EXPECT_TRUE(SchedulerEventsSuffice(ParseStateCondition(yes, syscalls))) << yes;
  for (const char* no : {"sleep:futex>1ms", "sleep_futex>1ms", "sleep_uninterruptible>1ms",
                         "user>1ms", "sys>1ms", "irq>1ms"})
    EXPECT_FALSE(SchedulerEventsSuffice(ParseStateCondition(no, syscalls))) << no;
}

// A followed thread, tid 42 "worker".
Thread Worker() {
  Thread t;
  t.id = 1;
  t.tid = 42;
  t.comm = "worker";
  t.tracked = true;
  return t;
}

// The worker asleep in futex() since `since`, as the state machine has it in progress.
Thread FutexSleeper(int64_t since) {
  Thread t = Worker();
  t.syscall = SYS_futex;
  t.state = Microstate::kSleepFutex;
  t.since = since;
  return t;
}

TEST(StateConditionObserver, JoinsContiguousSegmentsOfOneThread) {
  SyscallTable syscalls;
  StateConditionObserver o(ParseStateCondition("sleep>100ns", syscalls), syscalls);
  Thread t = Worker();
  o.OnStateSegment(t, Microstate::kSleep, 0, 0, 60);
  o.OnStateSegment(t, Microstate::kSleepUninterruptible, 0, 60, 120);  // one stretch: 120 ns
  std::optional<StateConditionObserver::Hit> hit = o.Take();
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->ts, 120);
  EXPECT_NE(hit->what.find("tid 42 (worker)"), std::string::npos) << hit->what;
  EXPECT_FALSE(o.Take());

  o.OnStateSegment(t, Microstate::kSleep, 0, 200, 280);
  o.OnStateSegment(t, Microstate::kUser, 0, 280, 290);  // a break
  o.OnStateSegment(t, Microstate::kSleep, 0, 290, 370);
  EXPECT_FALSE(o.Take());

  Thread untracked = t;
  untracked.id = 2;
  untracked.tracked = false;
  o.OnStateSegment(untracked, Microstate::kSleep, 0, 0, 1000);
  EXPECT_FALSE(o.Take());
}

// A thread stuck in the state never ends its stretch: the condition holds once the stretch
// in progress is longer than the threshold, counted from where it began (earlier segments
// of it included), and the end of that stretch is not a second hit.
TEST(StateConditionObserver, AStretchInProgressHoldsOnceItIsLongEnough) {
  SyscallTable syscalls;
  StateConditionObserver o(ParseStateCondition("sleep:futex>100ns", syscalls), syscalls);
  Thread t = FutexSleeper(40);
  o.OnStateSegment(t, Microstate::kSleepFutex, 0, 0, 40);  // and on since 40
  o.CheckOpen(t, 100);                                     // 100 ns so far: not longer
  EXPECT_FALSE(o.Take());
  o.CheckOpen(t, 101);
  std::optional<StateConditionObserver::Hit> hit = o.Take();
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->ts, 101);
  EXPECT_NE(hit->what.find("tid 42 (worker) 0.0 ms so far"), std::string::npos) << hit->what;
  o.CheckOpen(t, 500);
  o.OnStateSegment(t, Microstate::kSleepFutex, 0, 40, 900);  // its end
  EXPECT_FALSE(o.Take());
  // The next stretch is another; asked for at least 500 ns (the flight window), it holds
  // only past that.
  o.OnStateSegment(t, Microstate::kUser, 0, 900, 950);
  t.since = 950;
  o.CheckOpen(t, 1450, 500);
  EXPECT_FALSE(o.Take());
  o.CheckOpen(t, 1451, 500);
  EXPECT_TRUE(o.Take());

  // Another syscall's sleep, a state not yet told apart, or a thread not followed: no.
  Thread u = t;
  u.id = 2;
  u.since = 0;
  u.syscall = SYS_read;
  o.CheckOpen(u, 10'000);
  u.syscall = SYS_futex;
  u.abstract = AbstractState::kSleepInterruptible;
  o.CheckOpen(u, 10'000);
  u.abstract = AbstractState::kNone;
  u.tracked = false;
  o.CheckOpen(u, 10'000);
  EXPECT_FALSE(o.Take());
}

// Segments of a stretch seen in progress may come after CheckOpen from before where it saw
// the stretch (the switch placement holds them up to the kernel's next accounting), after
// a break in the runs: the stretch still holds once.
TEST(StateConditionObserver, HeldSegmentsOfAStretchSeenInProgressAreNoSecondHit) {
  SyscallTable syscalls;
  StateConditionObserver o(ParseStateCondition("sleep:futex>100ns", syscalls), syscalls);
  Thread t = FutexSleeper(1000);
  o.CheckOpen(t, 2000, 500);
  ASSERT_TRUE(o.Take());
  o.OnStateSegment(t, Microstate::kSys, 0, 900, 950);  // held until now
  o.OnStateSegment(t, Microstate::kSleepFutex, 0, 950, 1000);
  o.OnStateSegment(t, Microstate::kSleepFutex, 0, 1000, 5000);
  EXPECT_FALSE(o.Take());
  // A stretch after it is another.
  o.OnStateSegment(t, Microstate::kUser, 0, 5000, 5100);
  o.OnStateSegment(t, Microstate::kSleepFutex, 0, 5100, 5300);
  EXPECT_TRUE(o.Take());
}

}  // namespace
}  // namespace cstool
