// The comparison of `report --check` with synthetic reconstructions and kernel records:
// window cuts, delta vs absolute windows, partial threads, the exit adjustment, tid reuse
// and the documented time tolerance.
#include "check/kernel_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <sstream>
#include <tuple>

#include "analysis/counter_window.h"
#include "base/errors.h"
#include "check/kernel_match.h"
#include "kernel/kernel_recording.h"
#include "output/check_output.h"

namespace cstool {
namespace {

constexpr int64_t kMs = 1'000'000;
using Source = KernelTaskCounters::Source;

KernelTaskCounters Rec(int32_t tid, Source src, int64_t at, uint64_t nvcsw, uint64_t nivcsw,
                       int64_t exec_ns, int64_t delay_ns) {
  KernelTaskCounters c;
  c.tid = tid;
  c.tgid = 1000;
  c.source = src;
  c.taken_at_ns = at;
  c.nvcsw = nvcsw;
  c.nivcsw = nivcsw;
  c.exec_runtime_ns = exec_ns;
  c.run_delay_ns = delay_ns;
  return c;
}

// A model with threads and a recording, as AnalyzeTrace + CounterWindowObserver leave it.
class Fixture {
 public:
  Fixture() {
    rec.start_snapshot = {10 * kMs, 11 * kMs};
    rec.end_snapshot = {900 * kMs, 901 * kMs};
  }
  // The reference is valid until the next AddThread.
  ThreadReport& AddThread(int32_t tid, int64_t first, int64_t end, bool created) {
    Thread& t = threads.emplace_back();
    t.id = static_cast<uint32_t>(threads.size() - 1);
    t.tid = tid;
    t.tgid = 1000;
    t.comm = "w";
    t.tracked = true;
    t.first_ts = first;
    t.tid_since = first;
    t.end_ts = end;
    t.created_in_trace = created;
    ThreadReport& r = model.For(t);
    // Cuts at every /proc sample of the tid, as the observer registers them.
    for (const KernelTaskCounters& c : rec.counters.records())
      if (c.tid == tid && c.source == Source::kProcSnapshot)
        r.counter_window.AddSample(c.taken_at_ns, c.SwitchesRead().from, c.SwitchesRead().to);
    return r;
  }
  KernelCheckResult Check() {
    model.has_kernel_windows = true;
    model.trace.has_recording_info = true;
    model.trace.recording.kernel_counters = rec.ToJson();
    std::vector<const ThreadReport*> sel;
    for (const ThreadReport& r : model.threads)
      if (r.thread) sel.push_back(&r);
    return CheckAgainstKernel(model, sel);
  }
  // The trace saw the thread's sched_process_exit at `ts`, and its exit syscall placed
  // the exit record's reading of the run time there.
  void Exit(ThreadReport& r, int64_t ts) {
    ExitWithoutSyscall(r, ts);
    threads[r.thread->id].accounted_at_exit = ts;
  }
  // The same without an exit syscall in the trace: nothing placed the record's reading.
  void ExitWithoutSyscall(ThreadReport& r, int64_t ts) {
    threads[r.thread->id].exiting = true;
    r.counter_window.exit_ts = ts;
  }
  KernelMatch Match(const ThreadReport& r) { return KernelMatcher(rec, model.threads).Match(r); }
  // Thread 1001, alive from 100 to 460 ms, ran 30 ms of user time from 100 ms; its exit
  // record (500 ms) holds those 30 ms and `kernel_wait` of run delay. What follows the
  // run, and the exit, are each test's own.
  ThreadReport& AddThreadThatRan30Ms(int64_t kernel_wait) {
    rec.counters.Add(Rec(1001, Source::kTaskstatsExit, 500 * kMs, 0, 0, 30 * kMs, kernel_wait));
    ThreadReport& r = AddThread(1001, 100 * kMs, 460 * kMs, true);
    r.counter_window.AddSegment(Microstate::kUser, 100 * kMs, 130 * kMs);
    return r;
  }

  KernelRecording rec;
  std::deque<Thread> threads;
  ReportModel model;
};

TEST(KernelCheck, RefusesAModelAnalysedWithoutKernelWindows) {
  ReportModel model;  // as AnalyzeTrace leaves it without AnalyzeOptions::counter_windows
  EXPECT_THROW(CheckAgainstKernel(model, {}), std::logic_error);
}

// `--check` asked for proof: a recording without the kernel's counters (a trace-cmd
// file) proves nothing, and neither do counters with no thread to compare them with.
TEST(KernelCheck, NothingComparedIsNotAPass) {
  ReportModel model;
  model.has_kernel_windows = true;  // and no recording info: no counters
  KernelCheckResult none = CheckAgainstKernel(model, {});
  EXPECT_FALSE(none.has_counters);
  EXPECT_FALSE(none.passed());
  EXPECT_EQ(none.Verdict(),
            "kernel check: NOT CHECKED: nothing to compare: the recording holds no kernel "
            "counters (cstool record takes them)");

  // A cstool file without them says why it has none.
  model.trace.has_recording_info = true;
  model.trace.recording.window_start_ts = 5;
  EXPECT_NE(CheckAgainstKernel(model, {}).Verdict().find(
                "a flight recorder's dump holds no kernel counters (they cover the run, not the "
                "window)"),
            std::string::npos);
  model.trace.recording.window_start_ts = 0;
  model.trace.recording.recovered = true;
  EXPECT_NE(CheckAgainstKernel(model, {}).Verdict().find("a recovered recording holds no kernel "
                                                         "counters"),
            std::string::npos);

  Fixture f;  // counters, but no thread
  KernelCheckResult empty = f.Check();
  EXPECT_TRUE(empty.has_counters);
  EXPECT_EQ(empty.Considered(), 0u);
  EXPECT_FALSE(empty.passed());
  EXPECT_EQ(empty.Verdict().rfind("kernel check: NOT CHECKED: nothing to compare (", 0), 0u);
}

TEST(CounterWindow, CutsSplitSegmentsAndIgnoreArrivalOrder) {
  CounterWindow w;
  w.cuts = {{100, {}}, {200, {}}};
  w.AddSegment(Microstate::kUser, 50, 150);  // 50 before the first cut
  w.AddSwitch(180, true);
  w.AddSwitch(90, false);  // emitted late (cause resolved later): still before cut 100
  w.AddSegment(Microstate::kWaitCpuPreempted, 150, 250);
  w.AddSegment(Microstate::kUnknown, 250, 300);
  EXPECT_EQ(w.Before(100).on_cpu_ns, 50);
  EXPECT_EQ(w.Before(100).involuntary, 1u);
  EXPECT_EQ(w.Before(100).voluntary, 0u);
  EXPECT_EQ(w.Before(200).on_cpu_ns, 100);
  // The wait [150, 250) ends after the cut: like run_delay, it counts once it has ended.
  EXPECT_EQ(w.Before(200).wait_cpu_ns, 0);
  EXPECT_EQ(w.Before(200).voluntary, 1u);
  EXPECT_EQ(w.total.wait_cpu_ns, 100);
  EXPECT_EQ(w.total.unknown_ns, 50);
}

TEST(CounterWindow, StateAtTheCutDecidesWhetherTimesAreCovered) {
  CounterWindow asleep;
  asleep.cuts = {{100, {}}};
  asleep.AddSegment(Microstate::kWaitCpuWakeup, 150, 160);  // first seen when woken
  asleep.AddSegment(Microstate::kUser, 160, 200);
  EXPECT_TRUE(asleep.cuts[0].TimeCovered());

  CounterWindow unseen_running;
  unseen_running.cuts = {{100, {}}};
  unseen_running.AddSegment(Microstate::kUser, 150, 200);  // first seen on a CPU
  EXPECT_FALSE(unseen_running.cuts[0].TimeCovered());

  CounterWindow unknown_then_preempted;
  unknown_then_preempted.cuts = {{100, {}}};
  unknown_then_preempted.AddSegment(Microstate::kWaitCpuPreempted, 120, 130);  // out of order
  unknown_then_preempted.AddSegment(Microstate::kUnknown, 50, 120);
  EXPECT_FALSE(unknown_then_preempted.cuts[0].TimeCovered());

  CounterWindow known;
  known.cuts = {{100, {}}};
  known.AddSegment(Microstate::kSleepFutex, 50, 150);
  EXPECT_TRUE(known.cuts[0].TimeCovered());
}

// Enqueue notes wait for their wait segment; several can be outstanding (segments held
// back while the thread's syscall is unknown), and a wait whose segment was empty (never
// sent) must not leave its note behind to grow without bound.
TEST(CounterWindow, EnqueueNotesMatchTheirWaitAndStaleOnesAreDropped) {
  CounterWindow w;
  EnqueueLag lag;
  w.NoteEnqueued(100, 103);  // a zero-length wait: its segment never comes
  w.NoteEnqueued(200, 204);
  w.NoteEnqueued(300, 301);
  EXPECT_EQ(w.TakeWaitAdjust(200, 210, lag).unqueued, 4);  // drops the stale note at 100
  EXPECT_EQ(w.TakeWaitAdjust(250, 260, lag).unqueued, 0);  // a wait without a note
  EXPECT_EQ(w.TakeWaitAdjust(300, 300 + 1, lag).unqueued, 1);
  EXPECT_EQ(w.TakeWaitAdjust(300, 320, lag).unqueued, 0);  // each note is used once
  w.NoteEnqueued(400, 450);
  EXPECT_EQ(w.TakeWaitAdjust(400, 420, lag).unqueued, 20);  // never more than the wait itself
  EXPECT_EQ(lag.count(), 0u);  // none of these enqueues was dated at its event
}

// An enqueue dated at its sched_wakeup (no increment gave its clock): the kernel read that
// clock some lag before the event. Waits that ended before the event (the kernel switched
// in at the enqueue's clock) measure the lag; a wait that went on past the event starts
// its run delay that median lag before it.
TEST(CounterWindow, EnqueuesDatedAtTheirEventMoveBackByTheLagTheZeroDelayOnesShow) {
  CounterWindow w;
  EnqueueLag lag;
  // No lag measured yet: the event's time stands.
  w.NoteEnqueued(0, 10'000, {.at_event = true});
  EXPECT_EQ(w.TakeWaitAdjust(0, 30'000, lag).unqueued, 10'000);
  // Three zero-delay wakeups: switched in 1.5, 1.8 and 2.5 us before their event.
  for (const int64_t early : {1'500, 1'800, 2'500}) {
    w.NoteEnqueued(100'000, 110'000, {.at_event = true});
    EXPECT_EQ(w.TakeWaitAdjust(100'000, 110'000 - early, lag).unqueued, 10'000 - early);
  }
  EXPECT_EQ(lag.count(), 3u);
  EXPECT_EQ(lag.Median(), 1'850);  // the middle of the 1.8 us bin
  // A wakeup that waited 20 us past its event: queued 1.85 us before it.
  w.NoteEnqueued(200'000, 210'000, {.at_event = true});
  EXPECT_EQ(w.TakeWaitAdjust(200'000, 230'000, lag).unqueued, 10'000 - 1'850);
  // An enqueue an increment dated is exact: left as it is.
  w.NoteEnqueued(300'000, 310'000, {.at_event = false});
  EXPECT_EQ(w.TakeWaitAdjust(300'000, 330'000, lag).unqueued, 10'000);
  // Never before the wait began.
  w.NoteEnqueued(400'000, 401'000, {.at_event = true});
  EXPECT_EQ(w.TakeWaitAdjust(400'000, 430'000, lag).unqueued, 0);
}

// A wakeup switched in at its own event's time (the model dated the CPU's clock by it)
// was, if queued in place, switched at the enqueue's own clock: no run delay. Only a
// file that records every wakelist flush can tell; and a flushed one keeps the lag.
TEST(CounterWindow, AWakeupQueuedInPlaceAndSwitchedInAtItsEventHadNoRunDelay) {
  CounterWindow w;
  EnqueueLag lag;
  lag.Add(1'500);  // median 1'550
  w.NoteEnqueued(0, 10'000, {.at_event = true, .flushes_traced = true});
  EXPECT_EQ(w.TakeWaitAdjust(0, 10'000, lag).unqueued, 10'000);
  w.NoteEnqueued(100'000, 110'000, {.at_event = true});  // flushes not recorded
  EXPECT_EQ(w.TakeWaitAdjust(100'000, 110'000, lag).unqueued, 10'000 - 1'550);
  w.NoteEnqueued(200'000, 210'000, {.at_event = true, .flush_ts = 205'000, .flushes_traced = true});
  EXPECT_EQ(w.TakeWaitAdjust(200'000, 210'000, lag).unqueued, 10'000 - 1'550);
  // Went on past its event: moved back by the lag, as any.
  w.NoteEnqueued(300'000, 310'000, {.at_event = true, .flushes_traced = true});
  EXPECT_EQ(w.TakeWaitAdjust(300'000, 320'000, lag).unqueued, 10'000 - 1'550);
  EXPECT_EQ(lag.count(), 1u);  // none of them measured a lag
}

// The host can stall a virtual CPU between an enqueue's clock read and its sched_wakeup
// (40 us seen, with the wakelist flush that did the enqueue right before the clock read):
// of a wait that went on past its event, the kernel's run delay may then start as early
// as the flush. Only the part before the dated enqueue, and only with a flush.
TEST(CounterWindow, AnEnqueueDatedAtItsEventMayLieAsFarBackAsItsWakelistFlush) {
  CounterWindow w;
  EnqueueLag lag;
  lag.Add(1'500);  // median 1'550
  w.NoteEnqueued(0, 50'000, {.at_event = true, .flush_ts = 8'000});
  WaitAdjust a = w.TakeWaitAdjust(0, 70'000, lag);
  EXPECT_EQ(a.unqueued, 50'000 - 1'550);
  EXPECT_EQ(a.enqueue_maybe_earlier, 50'000 - 1'550 - 8'000);
  // Switched in before its event: the kernel switched at the enqueue's clock, no run
  // delay either way (the wait measures the lag instead).
  w.NoteEnqueued(100'000, 150'000, {.at_event = true, .flush_ts = 108'000});
  EXPECT_EQ(w.TakeWaitAdjust(100'000, 149'000, lag).enqueue_maybe_earlier, 0);
  // Without a flush, or dated by an increment: nothing.
  w.NoteEnqueued(200'000, 250'000, {.at_event = true});
  EXPECT_EQ(w.TakeWaitAdjust(200'000, 270'000, lag).enqueue_maybe_earlier, 0);
  w.NoteEnqueued(300'000, 350'000, {.at_event = false, .flush_ts = 308'000});
  EXPECT_EQ(w.TakeWaitAdjust(300'000, 370'000, lag).enqueue_maybe_earlier, 0);
  // Never more than the part of the wait left out.
  w.NoteEnqueued(400'000, 450'000, {.at_event = true, .flush_ts = 390'000});
  a = w.TakeWaitAdjust(400'000, 460'000, lag);
  EXPECT_EQ(lag.Median(), 1'050);  // the wakeup switched in 1 us before its event joined
  EXPECT_EQ(a.unqueued, 50'000 - 1'050);
  EXPECT_EQ(a.enqueue_maybe_earlier, 50'000 - 1'050);
}

// The host can stall a virtual CPU inside one call of try_to_wake_up(), between its
// sched_waking and its sched_wakeup on one CPU (2 ms seen, under load): the enqueue's clock
// read may lie before the stall, and the kernel's run delay then start as early as the
// waking. Only a gap past the call's usual length (a few us) is such a stall.
TEST(CounterWindow, AnEnqueueDatedAtItsEventMayLieAsFarBackAsItsWakingWhenTheCallStalled) {
  CounterWindow w;
  EnqueueLag lag;
  lag.Add(1'500);  // median 1'550
  // Waking at 0, event 2 ms later, switched in at 2.5 ms.
  w.NoteEnqueued(0, 2'000'000, {.at_event = true, .waking_ts = 0});
  WaitAdjust a = w.TakeWaitAdjust(0, 2'500'000, lag);
  EXPECT_EQ(a.unqueued, 2'000'000 - 1'550);
  EXPECT_EQ(a.enqueue_maybe_earlier, 2'000'000 - 1'550);
  // A call of 20 us is no stall; one of 20.001 us is.
  w.NoteEnqueued(3'000'000, 3'020'000, {.at_event = true, .waking_ts = 3'000'000});
  EXPECT_EQ(w.TakeWaitAdjust(3'000'000, 3'100'000, lag).enqueue_maybe_earlier, 0);
  w.NoteEnqueued(4'000'000, 4'020'001, {.at_event = true, .waking_ts = 4'000'000});
  EXPECT_EQ(w.TakeWaitAdjust(4'000'000, 4'100'000, lag).enqueue_maybe_earlier, 20'001 - 1'550);
  // A waking on another CPU (waking_ts -1): the gap is the hand-over, not a stall.
  w.NoteEnqueued(5'000'000, 5'500'000, {.at_event = true});
  EXPECT_EQ(w.TakeWaitAdjust(5'000'000, 5'600'000, lag).enqueue_maybe_earlier, 0);
  // Dated by an increment, or switched in before its event: nothing.
  w.NoteEnqueued(6'000'000, 6'500'000, {.at_event = false, .waking_ts = 6'000'000});
  EXPECT_EQ(w.TakeWaitAdjust(6'000'000, 6'600'000, lag).enqueue_maybe_earlier, 0);
  w.NoteEnqueued(7'000'000, 7'500'000, {.at_event = true, .waking_ts = 7'000'000});
  EXPECT_EQ(w.TakeWaitAdjust(7'000'000, 7'400'000, lag).enqueue_maybe_earlier, 0);
}

TEST(CounterWindow, AfterExitHoldsTheFinalSwitchAndTime) {
  CounterWindow w;
  w.AddSegment(Microstate::kUser, 0, 100);
  w.AddSwitch(40, true);
  w.exit_ts = 90;
  w.AddSegment(Microstate::kSys, 100, 120);
  w.AddSwitch(120, true);  // final switch
  EXPECT_EQ(w.after_exit.voluntary, 1u);
  EXPECT_EQ(w.after_exit.on_cpu_ns, 20);
  EXPECT_EQ((w.total - w.after_exit).voluntary, 1u);
}

// The run the kernel had not accounted when the exit record read the run time is in the
// THREADS table's on-CPU time but not in ONCPU: the row says how much (a third of a thread's time
// went unjudged behind an "agree" with only the final switch's exclusion shown).
TEST(KernelCheck, TheRunAfterTheExitRecordIsSaid) {
  Fixture f;
  f.rec.counters.Add(Rec(1001, Source::kTaskstatsExit, 500 * kMs, 1, 0, 30 * kMs, 0));
  ThreadReport& r = f.AddThread(1001, 100 * kMs, 460 * kMs, true);
  r.counter_window.AddSwitch(200 * kMs, true);
  r.counter_window.AddSegment(Microstate::kUser, 100 * kMs, 130 * kMs);
  f.Exit(r, 130 * kMs);
  r.counter_window.AddSegment(Microstate::kSys, 130 * kMs, 132'790'000);
  r.counter_window.AddSwitch(133 * kMs, true);

  ThreadCheck c = CompareThread(r, f.Match(r), {});
  EXPECT_EQ(c.status, CheckStatus::kAgree);
  EXPECT_EQ(c.traced.on_cpu_ns, 30 * kMs);
  EXPECT_EQ(c.exit_cut_on_cpu_ns, 2'790'000);
  KernelCheckResult res = f.Check();
  std::ostringstream table;
  RenderCheckTable(res, table);
  EXPECT_NE(table.str().find("[1 switch from the exit record on left out; ONCPU leaves out its "
                             "last 2.790 ms, "
                             "not yet accounted at the exit record]"),
            std::string::npos)
      << table.str();
}

// A thread's note beside a disagreement is an aside: "DISAGREE (wait): ONCPU leaves out
// 0.042 ms of steal" read as the cause of a 2.7 ms wait difference.
TEST(KernelCheck, ANoteBesideADisagreementIsNotItsCause) {
  KernelCheckResult res;
  res.has_counters = true;
  res.compared = 2;
  ThreadCheck a;
  a.tid = 11;
  a.pid = 10;
  a.status = CheckStatus::kAgree;
  a.on_cpu_ok = a.wait_ok = a.switches_ok = a.times_judged = true;
  a.note = "ONCPU leaves out 0.042 ms of steal while it ran";
  ThreadCheck b = a;
  b.tid = 12;
  b.status = CheckStatus::kDisagree;
  b.wait_ok = false;
  res.threads = {a, b};
  std::ostringstream table;
  RenderCheckTable(res, table);
  EXPECT_NE(table.str().find("agree: ONCPU leaves out 0.042 ms"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("DISAGREE (wait); ONCPU leaves out 0.042 ms"), std::string::npos)
      << table.str();
}

// A process row whose sums agree while one of its threads does not says which thread
// ("DISAGREE" alone read as the sums'); a worst thread whose kernel value is 0 has no
// percentage ("+0.00%" read as no difference).
TEST(KernelCheck, AProcessRowNamesItsDisagreeingThreadAndAZeroKernelValueHasNoPercentage) {
  KernelCheckResult res;
  res.has_counters = true;
  res.compared = 2;
  res.agreeing = 1;
  ThreadCheck a;
  a.tid = 11;
  a.pid = 10;
  a.status = CheckStatus::kAgree;
  ThreadCheck b = a;
  b.tid = 12;
  b.status = CheckStatus::kDisagree;
  res.threads = {a, b};
  ProcessCheck p;
  p.pid = 10;
  p.threads = 2;
  p.status = CheckStatus::kDisagree;
  p.switches_ok = p.on_cpu_ok = p.wait_ok = true;
  res.processes = {p};
  res.worst_on_cpu = {12, 733'000, 0.0, 3.6, 0};
  std::ostringstream table;
  RenderCheckTable(res, table);
  EXPECT_NE(table.str().find("DISAGREE (thread 12)"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("on-CPU +0.733 ms (the kernel's: 0, tid 12)"), std::string::npos)
      << table.str();
  EXPECT_TRUE(CheckToJson(res)["worst_thread"]["on_cpu"]["diff_pct"].is_null())
      << CheckToJson(res).dump();
}

// A difference too small to show is 0.000, not -0.000 (in the rows and the worst thread).
TEST(KernelCheck, ADifferenceTooSmallToShowHasNoSign) {
  EXPECT_EQ(ShownDiff(-0.0004, 3), 0.0);
  EXPECT_FALSE(std::signbit(ShownDiff(-0.0004, 3)));
  EXPECT_EQ(ShownDiff(-0.0006, 3), -0.001);
  EXPECT_FALSE(std::signbit(ShownDiff(-0.004, 2)));
  KernelCheckResult res;
  res.has_counters = true;
  res.compared = res.agreeing = 1;
  ThreadCheck a;
  a.tid = 11;
  a.pid = 10;
  a.pid_known = true;
  a.status = CheckStatus::kAgree;
  a.mode = WindowMode::kDelta;
  a.traced.on_cpu_ns = 5'000'000 - 300;  // 0.3 us under the kernel's
  a.kernel.on_cpu_ns = 5'000'000;
  res.threads = {a};
  res.worst_on_cpu = {11, -300, -0.004, 0.0, 5'000'000};
  std::ostringstream table;
  RenderCheckTable(res, table);
  EXPECT_EQ(table.str().find("-0.0"), std::string::npos) << table.str();
  EXPECT_NE(res.Verdict().find("on-CPU +0.000 ms (+0.00%, tid 11)"), std::string::npos)
      << res.Verdict();
  // A difference that shows, of a percentage that rounds to nothing, keeps its sign there.
  res.worst_on_cpu = {11, -3'000, -0.004, 0.0, 80'000'000};
  EXPECT_NE(res.Verdict().find("worst thread (the most of its tolerance): on-CPU -0.003 ms "
                               "(-0.00%, tid 11)"),
            std::string::npos)
      << res.Verdict();
}

TEST(KernelCheck, CreatedThreadComparesAbsoluteValuesWithoutTheFinalSwitch) {
  Fixture f;
  f.rec.counters.Add(Rec(1001, Source::kTaskstatsExit, 500 * kMs, 10, 2, 30 * kMs, 4 * kMs));
  ThreadReport& r = f.AddThread(1001, 100 * kMs, 460 * kMs, true);
  for (int i = 0; i < 10; ++i) r.counter_window.AddSwitch((200 + i) * kMs, true);
  r.counter_window.AddSwitch(300 * kMs, false);
  r.counter_window.AddSwitch(310 * kMs, false);
  r.counter_window.AddSegment(Microstate::kUser, 100 * kMs, 130 * kMs);
  r.counter_window.AddSegment(Microstate::kWaitCpuWakeup, 130 * kMs, 134 * kMs);
  f.Exit(r, 450 * kMs);
  r.counter_window.AddSwitch(455 * kMs, true);  // final switch: taskstats never counts it

  KernelMatch m = f.Match(r);
  EXPECT_EQ(m.mode, WindowMode::kAbsolute);
  ThreadCheck c = CompareThread(r, m, {});
  EXPECT_EQ(c.status, CheckStatus::kAgree);
  EXPECT_EQ(c.exit_adjust, 1u);
  EXPECT_EQ(c.traced.voluntary, 10);
  EXPECT_EQ(c.traced.involuntary, 2);
  EXPECT_EQ(c.traced.on_cpu_ns, 30 * kMs);
  EXPECT_EQ(c.traced.wait_cpu_ns, 4 * kMs);
  KernelCheckResult res = f.Check();
  EXPECT_TRUE(res.passed());
  EXPECT_EQ(res.compared, 1u);
  EXPECT_EQ(res.processes.size(), 1u);
  EXPECT_TRUE(res.processes[0].switches_ok);
}

// Unknown time widens a thread's tolerance only up to the base tolerance: a thread
// mostly unknown to the trace is shown, not judged, and kept out of the worst thread.
TEST(KernelCheck, ThreadMostlyUnknownIsNotJudgedOnTimes) {
  Fixture f;
  ThreadReport& r = f.AddThreadThatRan30Ms(50 * kMs);
  r.counter_window.AddSegment(Microstate::kUnknown, 130 * kMs, 180 * kMs);
  f.Exit(r, 450 * kMs);
  ThreadCheck c = CompareThread(r, f.Match(r), {});
  EXPECT_FALSE(c.times_judged);
  EXPECT_NE(c.note.find("50.000 ms the trace could not classify"), std::string::npos) << c.note;
  EXPECT_EQ(c.status, CheckStatus::kAgree);  // switch counts still judged
  EXPECT_EQ(f.Check().worst_wait.tid, 0);

  // A little unknown time (within the base tolerance) keeps the times judged.
  Fixture g;
  ThreadReport& q = g.AddThreadThatRan30Ms(0);
  q.counter_window.AddSegment(Microstate::kUnknown, 130 * kMs, 130 * kMs + 100'000);
  g.Exit(q, 450 * kMs);
  EXPECT_TRUE(CompareThread(q, g.Match(q), {}).times_judged);
}

// The host stole 6 ms while the thread ran: on CPU in the microstates, not in the
// kernel's exec runtime. The check leaves it out, says so, and still judges the rest.
TEST(KernelCheck, TimeTheHostStoleWhileTheThreadRanIsNotExecRuntime) {
  for (const int64_t exec : {30 * kMs, 36 * kMs}) {
    Fixture f;
    f.rec.counters.Add(Rec(1001, Source::kTaskstatsExit, 500 * kMs, 0, 0, exec, 0));
    ThreadReport& r = f.AddThread(1001, 100 * kMs, 460 * kMs, true);
    r.counter_window.AddSegment(Microstate::kUser, 100 * kMs, 136 * kMs);
    r.counter_window.AddStolen(110 * kMs, 116 * kMs);
    f.Exit(r, 450 * kMs);
    ThreadCheck c = CompareThread(r, f.Match(r), {});
    EXPECT_EQ(c.traced.on_cpu_ns, 30 * kMs);
    EXPECT_EQ(c.stolen_ns, 6 * kMs);
    EXPECT_NE(c.note.find("leaves out 6.000 ms of steal"), std::string::npos) << c.note;
    EXPECT_EQ(c.status, exec == 30 * kMs ? CheckStatus::kAgree : CheckStatus::kDisagree);
  }
}

// run_delay starts at the enqueue: the time between sched_waking and sched_wakeup is
// left out of the comparison (it is still wait_cpu_wakeup in the microstates).
TEST(KernelCheck, WaitIsComparedFromTheEnqueue) {
  Fixture f;
  ThreadReport& r = f.AddThreadThatRan30Ms(4 * kMs);
  r.counter_window.AddSegment(Microstate::kWaitCpuWakeup, 130 * kMs, 164 * kMs, {30 * kMs});
  f.Exit(r, 450 * kMs);
  ThreadCheck c = CompareThread(r, f.Match(r), {});
  EXPECT_EQ(c.traced.wait_cpu_ns, 4 * kMs);
  EXPECT_EQ(c.status, CheckStatus::kAgree);
}

// Sleep after an untraced move between CPUs may be run delay to the kernel: the kernel's
// run delay may exceed the traced wait by up to that much (one-sided, no more), and the
// worst thread is named by what that does not explain.
TEST(KernelCheck, AnUntracedMoveWhileAsleepWidensTheWaitCheckOnOneSideOnly) {
  auto check = [](int64_t kernel_wait) {
    Fixture f;
    ThreadReport& r = f.AddThreadThatRan30Ms(kernel_wait);
    r.counter_window.AddSegment(Microstate::kSleep, 130 * kMs, 330 * kMs);
    r.counter_window.AddSegment(Microstate::kWaitCpuWakeup, 330 * kMs, 340 * kMs,
                                {0, 0, 200 * kMs});
    f.Exit(r, 450 * kMs);
    return std::make_pair(CompareThread(r, f.Match(r), {}), f.Check());
  };
  auto [moved, moved_result] = check(10 * kMs + 150 * kMs);  // 150 ms of the sleep
  EXPECT_EQ(moved.status, CheckStatus::kAgree) << moved.note;
  EXPECT_EQ(moved.wait_maybe_more_ns, 200 * kMs);
  EXPECT_NE(moved.note.find("up to 200.000 ms more (a move not traced)"), std::string::npos)
      << moved.note;
  EXPECT_EQ(moved_result.worst_wait.diff_ns, 0);  // all of it explained
  EXPECT_EQ(check(10 * kMs + 200 * kMs).first.status, CheckStatus::kAgree);
  // Past the bound and the 1 % tolerance (2.13 ms of 213 ms):
  EXPECT_EQ(check(10 * kMs + 203 * kMs).first.status, CheckStatus::kDisagree);
  EXPECT_EQ(check(10 * kMs - 1 * kMs).first.status, CheckStatus::kDisagree);  // not the other way
}

// Enqueues dated at their sched_wakeup whose wakelist flush came earlier: the kernel's run
// delay may exceed the traced wait by up to that much, one-sided, with a note.
TEST(KernelCheck, AnEnqueueAStallMayHaveMovedEarlierWidensTheWaitCheckOnOneSideOnly) {
  auto check = [](int64_t kernel_wait) {
    Fixture f;
    ThreadReport& r = f.AddThreadThatRan30Ms(kernel_wait);
    r.counter_window.AddSegment(Microstate::kWaitCpuWakeup, 130 * kMs, 160 * kMs,
                                {5 * kMs, 0, 0, 4 * kMs});
    f.Exit(r, 450 * kMs);
    return CompareThread(r, f.Match(r), {});
  };
  const ThreadCheck stalled = check(25 * kMs + 3 * kMs);
  EXPECT_EQ(stalled.status, CheckStatus::kAgree) << stalled.note;
  EXPECT_EQ(stalled.enqueue_maybe_earlier_ns, 4 * kMs);
  EXPECT_EQ(stalled.wait_maybe_more_ns, 4 * kMs);
  EXPECT_NE(stalled.note.find("WAIT may be up to 4.000 ms short"), std::string::npos)
      << stalled.note;
  EXPECT_EQ(stalled.note.find("a move not traced"), std::string::npos) << stalled.note;
  // Past the bound and the 0.29 ms tolerance of 29.3 ms:
  EXPECT_EQ(check(25 * kMs + 4 * kMs + 400'000).status, CheckStatus::kDisagree);
  EXPECT_EQ(check(25 * kMs - 1 * kMs).status, CheckStatus::kDisagree);     // not the other way
  EXPECT_EQ(check(25 * kMs).note.find("WAIT may be"), std::string::npos);  // nothing short
}

// A thread alive at both samples that the trace never showed on a CPU, though the kernel
// switched it (this kernel records nothing of some tasks' switches): shown, not judged.
// One the trace did show running, with the same counts, is a disagreement.
TEST(KernelCheck, AThreadNeverShownRunningThatTheKernelSwitchedIsUntraced) {
  for (const bool seen : {false, true}) {
    SCOPED_TRACE(seen);
    Fixture f;
    f.rec.counters.Add(Rec(1001, Source::kProcSnapshot, 10 * kMs, 4, 0, 20 * kMs, 0));
    f.rec.counters.Add(Rec(1001, Source::kProcSnapshot, 900 * kMs, 4, 1, 23 * kMs, 0));
    ThreadReport& r = f.AddThread(1001, 0, 950 * kMs, false);
    f.threads[r.thread->id].seen_running = seen;
    r.counter_window.AddSegment(Microstate::kUnknown, 0, 950 * kMs);
    ThreadCheck c = CompareThread(r, f.Match(r), {});
    EXPECT_FALSE(c.switches_ok);
    EXPECT_FALSE(c.times_judged);
    EXPECT_EQ(c.status, seen ? CheckStatus::kDisagree : CheckStatus::kUntraced) << c.note;
    EXPECT_EQ(c.note.find("never shown on a CPU") != std::string::npos, !seen) << c.note;
  }
}

// With the move traced, the kernel's run delay holds the sleep from the move on, exactly.
TEST(KernelCheck, ATracedMoveWhileAsleepIsRunDelayExactly) {
  Fixture f;
  ThreadReport& r = f.AddThreadThatRan30Ms(110 * kMs);
  r.counter_window.AddSegment(Microstate::kSleep, 130 * kMs, 330 * kMs);
  r.counter_window.AddSegment(Microstate::kWaitCpuWakeup, 330 * kMs, 340 * kMs, {0, 100 * kMs});
  f.Exit(r, 450 * kMs);
  ThreadCheck c = CompareThread(r, f.Match(r), {});
  EXPECT_EQ(c.traced.wait_cpu_ns, 110 * kMs);
  EXPECT_EQ(c.asleep_queued_ns, 100 * kMs);
  EXPECT_EQ(c.status, CheckStatus::kAgree);
}

// A wait after a preemption on the way to sleep is a wait, but not run delay to the
// kernel: the check leaves it out of the traced wait, exactly, and says how much.
TEST(KernelCheck, AWaitAfterAPreemptionOnTheWayToSleepIsLeftOutExactly) {
  auto check = [](int64_t kernel_wait) {
    Fixture f;
    ThreadReport& r = f.AddThreadThatRan30Ms(kernel_wait);
    WaitAdjust adjust;
    adjust.preempted_asleep = 35 * kMs;
    r.counter_window.AddSegment(Microstate::kWaitCpuPreempted, 130 * kMs, 170 * kMs, adjust);
    f.Exit(r, 450 * kMs);
    return CompareThread(r, f.Match(r), {});
  };
  const ThreadCheck c = check(5 * kMs);
  EXPECT_EQ(c.status, CheckStatus::kAgree) << c.note;
  EXPECT_EQ(c.traced.wait_cpu_ns, 5 * kMs);
  EXPECT_EQ(c.preempted_asleep_ns, 35 * kMs);
  EXPECT_NE(c.note.find("WAIT leaves out 35.000 ms queued after preemptions on the way to sleep"),
            std::string::npos)
      << c.note;
  EXPECT_EQ(check(40 * kMs).status, CheckStatus::kDisagree);  // the kernel's blind spot
}

// taskstats is sent in do_exit() before sched_process_exit, with exit_mm() in between:
// the listener may stamp the record before the trace's exit event.
TEST(KernelCheck, ExitRecordStampedBeforeTheExitTracepointStillMatches) {
  Fixture f;
  f.rec.counters.Add(Rec(1001, Source::kTaskstatsExit, 449 * kMs, 1, 0, 30 * kMs, 0));
  ThreadReport& r = f.AddThread(1001, 100 * kMs, 460 * kMs, true);
  r.counter_window.AddSegment(Microstate::kUser, 100 * kMs, 130 * kMs);
  r.counter_window.AddSwitch(120 * kMs, true);
  f.Exit(r, 450 * kMs);
  KernelMatch m = f.Match(r);
  ASSERT_NE(m.end, nullptr) << m.why;
  EXPECT_EQ(m.end->taken_at_ns, 449 * kMs);
  EXPECT_EQ(CompareThread(r, m, {}).status, CheckStatus::kAgree);
}

// A tick came between the exit's start and the record (the state machine cut the window
// before it, at 126 ms, and after it, at 130 ms): the record's exec runtime picks the cut,
// and a value that is neither still disagrees.
TEST(KernelCheck, ExitRecordBeforeOrAfterATickInTheExitPicksItsCut) {
  for (const auto& [exec_ms, status, picked_before] :
       {std::tuple{26, CheckStatus::kAgree, true}, std::tuple{30, CheckStatus::kAgree, false},
        std::tuple{28, CheckStatus::kDisagree, false}}) {
    Fixture f;
    f.rec.counters.Add(Rec(1001, Source::kTaskstatsExit, 131 * kMs, 0, 0, exec_ms * kMs, 0));
    ThreadReport& r = f.AddThread(1001, 100 * kMs, 140 * kMs, true);
    r.counter_window.exit_before_tick_ts = 126 * kMs;
    f.Exit(r, 130 * kMs);
    r.counter_window.AddSegment(Microstate::kUser, 100 * kMs, 135 * kMs);
    r.counter_window.AddSwitch(135 * kMs, true);
    ThreadCheck c = CompareThread(r, f.Match(r), {});
    EXPECT_EQ(c.status, status) << exec_ms;
    EXPECT_EQ(c.traced.on_cpu_ns, (picked_before ? 26 : 30) * kMs) << exec_ms;
    EXPECT_EQ(c.note.find("exit record read before an increment") != std::string::npos,
              picked_before)
        << exec_ms << ": " << c.note;
    EXPECT_EQ(c.exit_adjust, 1u);
  }
}

// A switch between the two candidates (a tracer's stop in the exit, with an increment
// before it): the record holds it, so the cut after it stands even when the exec runtime
// is nearer the one before (a 14 us increment).
TEST(KernelCheck, ExitRecordCandidateThatLeavesOutASwitchTheKernelCountedIsNotPicked) {
  Fixture f;
  f.rec.counters.Add(Rec(1001, Source::kTaskstatsExit, 131 * kMs, 1, 0, 26 * kMs, 0));
  ThreadReport& r = f.AddThread(1001, 100 * kMs, 140 * kMs, true);
  r.counter_window.exit_before_tick_ts = 126 * kMs;
  f.Exit(r, 126 * kMs + 14'000);
  r.counter_window.AddSegment(Microstate::kUser, 100 * kMs, 127 * kMs);
  r.counter_window.AddSwitch(126 * kMs + 10'000, true);  // the stop, between the two
  r.counter_window.AddSwitch(135 * kMs, true);           // the final switch
  ThreadCheck c = CompareThread(r, f.Match(r), {});
  EXPECT_EQ(c.traced.voluntary, 1);
  EXPECT_EQ(c.traced.on_cpu_ns, 26 * kMs + 14'000);
  EXPECT_EQ(c.status, CheckStatus::kAgree) << c.note;
  EXPECT_EQ(c.note.find("exit record read before an increment"), std::string::npos) << c.note;
}

// Without an exit syscall (no raw_syscalls events), where the exit record read the run
// time is unknown: its last run may be in ONCPU and not in EXEC (a 0.7 ms run here), so
// the times are not judged; the switches still are.
TEST(KernelCheck, ExitRecordWithoutAnExitSyscallIsNotJudgedOnTimes) {
  // The kernel's counts: `nvcsw` switches and 29 ms, against 30 ms traced.
  auto check = [](uint64_t nvcsw) {
    Fixture f;
    f.rec.counters.Add(Rec(1001, Source::kTaskstatsExit, 449 * kMs, nvcsw, 0, 29 * kMs, 0));
    ThreadReport& r = f.AddThread(1001, 100 * kMs, 460 * kMs, true);
    r.counter_window.AddSegment(Microstate::kUser, 100 * kMs, 130 * kMs);
    r.counter_window.AddSwitch(120 * kMs, true);
    f.ExitWithoutSyscall(r, 450 * kMs);
    return CompareThread(r, f.Match(r), {});
  };
  const ThreadCheck c = check(1);
  EXPECT_EQ(c.status, CheckStatus::kAgree);
  EXPECT_FALSE(c.times_judged);
  EXPECT_TRUE(c.switches_ok);
  EXPECT_NE(c.note.find("where the exit record read the run time is unknown"), std::string::npos)
      << c.note;
  EXPECT_EQ(check(2).status, CheckStatus::kDisagree);  // off by one switch it still fails
}

// A record stamped after the exit is preferred to one stamped before it.
TEST(KernelCheck, ExitRecordAfterTheExitIsPreferred) {
  Fixture f;
  f.rec.counters.Add(Rec(1001, Source::kTaskstatsExit, 300 * kMs, 9, 9, 1 * kMs, 0));
  f.rec.counters.Add(Rec(1001, Source::kTaskstatsExit, 451 * kMs, 1, 0, 30 * kMs, 0));
  ThreadReport& r = f.AddThread(1001, 100 * kMs, 460 * kMs, true);
  f.Exit(r, 450 * kMs);
  KernelMatch m = f.Match(r);
  ASSERT_NE(m.end, nullptr) << m.why;
  EXPECT_EQ(m.end->taken_at_ns, 451 * kMs);
}

TEST(KernelCheck, ThreadAliveAtStartComparesDeltasCutAtTheSamples) {
  Fixture f;
  // Before the start sample (10.5 ms) the thread had 100/7 switches and 1 s on CPU.
  f.rec.counters.Add(Rec(2000, Source::kProcSnapshot, 10500000, 100, 7, 1000 * kMs, 50 * kMs));
  f.rec.counters.Add(Rec(2000, Source::kProcSnapshot, 900500000, 105, 8, 1200 * kMs, 60 * kMs));
  ThreadReport& r = f.AddThread(2000, 5 * kMs, 950 * kMs, false);
  CounterWindow& w = r.counter_window;
  ASSERT_EQ(w.cuts.size(), 2u);
  w.AddSwitch(8 * kMs, true);  // between trace start and the start sample: not in the delta
  w.AddSegment(Microstate::kUnknown, 5 * kMs, 9 * kMs);
  w.AddSegment(Microstate::kUser, 9 * kMs, 209 * kMs);  // 198.5 ms inside the window
  w.AddSegment(Microstate::kWaitCpuPreempted, 209 * kMs, 219 * kMs);
  for (int i = 0; i < 5; ++i) w.AddSwitch((300 + i) * kMs, true);
  w.AddSwitch(400 * kMs, false);
  w.AddSwitch(920 * kMs, true);                          // after the end sample: not in the delta
  w.AddSegment(Microstate::kSys, 219 * kMs, 950 * kMs);  // 681.5 ms inside the window

  KernelMatch m = f.Match(r);
  ASSERT_EQ(m.mode, WindowMode::kDelta);
  ThreadCheck c = CompareThread(r, m, {});
  EXPECT_EQ(c.traced.voluntary, 5);
  EXPECT_EQ(c.traced.involuntary, 1);
  EXPECT_EQ(c.kernel.voluntary, 5);
  EXPECT_EQ(c.kernel.involuntary, 1);
  EXPECT_EQ(c.kernel.on_cpu_ns, 200 * kMs);
  EXPECT_EQ(c.traced.on_cpu_ns, 198500000 + 681500000);
  // 880 ms traced against 200 ms of kernel exec time: far outside the tolerance.
  EXPECT_EQ(c.status, CheckStatus::kDisagree);
  EXPECT_TRUE(c.switches_ok);
  EXPECT_FALSE(c.on_cpu_ok);
  EXPECT_TRUE(c.wait_ok);
  EXPECT_FALSE(f.Check().passed());
}

// A sample whose status read (the switch counts) lay in [from, to], read at `at`.
KernelTaskCounters ReadBetween(KernelTaskCounters c, int64_t from, int64_t to) {
  c.switches_read_from_ns = from;
  c.switches_read_to_ns = to;
  return c;
}

// The start sample's counts were read in [10.40, 10.45] ms, the end's in [900.40, 900.45].
ThreadReport& AddThreadSampledWithReads(Fixture& f, uint64_t start_nv, uint64_t start_niv,
                                        uint64_t end_nv, uint64_t end_niv) {
  f.rec.counters.Add(ReadBetween(
      Rec(2200, Source::kProcSnapshot, 10500000, start_nv, start_niv, 100 * kMs, 10 * kMs),
      10400000, 10450000));
  f.rec.counters.Add(
      ReadBetween(Rec(2200, Source::kProcSnapshot, 900500000, end_nv, end_niv, 100 * kMs, 10 * kMs),
                  900400000, 900450000));
  ThreadReport& r = f.AddThread(2200, 5 * kMs, 950 * kMs, false);
  r.counter_window.AddSegment(Microstate::kSleep, 5 * kMs, 950 * kMs);
  return r;
}

TEST(KernelCheck, ASwitchDuringTheEndReadMayBeAfterTheCounts) {
  Fixture f;
  // 3 involuntary switches in the window, the last one traced while the end sample's
  // status was read: the kernel's counts (2) were read before it.
  ThreadReport& r = AddThreadSampledWithReads(f, 50, 10, 50, 12);
  CounterWindow& w = r.counter_window;
  ASSERT_EQ(w.cuts.size(), 4u);  // each sample's instant and the end of its read
  w.AddSwitch(100 * kMs, false);
  w.AddSwitch(900420000, false);  // inside the end read, arriving before the next one
  w.AddSwitch(200 * kMs, false);
  ThreadCheck c = CompareThread(r, f.Match(r), {});
  EXPECT_EQ(c.switches_during_reads, 1u);
  EXPECT_EQ(c.switches_placed_after_reads, 1u);
  EXPECT_EQ(c.traced.involuntary, 2);
  EXPECT_TRUE(c.switches_ok);
  EXPECT_EQ(c.status, CheckStatus::kAgree);
  EXPECT_NE(c.note.find("1 switch traced during a /proc read"), std::string::npos) << c.note;

  // Had the kernel counted it, the counts agree at the read's end, nothing moved.
  Fixture g;
  ThreadReport& r2 = AddThreadSampledWithReads(g, 50, 10, 50, 13);
  for (int64_t ts : {100 * kMs, 900420000L, 200 * kMs}) r2.counter_window.AddSwitch(ts, false);
  c = CompareThread(r2, g.Match(r2), {});
  EXPECT_EQ(c.switches_placed_after_reads, 0u);
  EXPECT_EQ(c.traced.involuntary, 3);
  EXPECT_EQ(c.status, CheckStatus::kAgree);
  EXPECT_EQ(c.note, "");

  // A switch at the read's very end is inside it; one just after is outside (not in the
  // delta, the counts were read before it).
  Fixture h;
  ThreadReport& r3 = AddThreadSampledWithReads(h, 50, 10, 50, 12);
  for (int64_t ts : {100 * kMs, 200 * kMs, 900450000L}) r3.counter_window.AddSwitch(ts, false);
  r3.counter_window.AddSwitch(900450001, false);  // after the read: not in the delta
  c = CompareThread(r3, h.Match(r3), {});
  EXPECT_EQ(c.switches_during_reads, 1u);
  EXPECT_EQ(c.traced.involuntary, 2);  // the one at the read's end moved after it
  EXPECT_EQ(c.status, CheckStatus::kAgree);
  r3.counter_window.AddSwitch(300 * kMs, false);  // one too many, whichever way
  EXPECT_EQ(CompareThread(r3, h.Match(r3), {}).status, CheckStatus::kDisagree);
}

TEST(KernelCheck, ASwitchDuringTheStartReadMayBeAfterTheCounts) {
  Fixture f;
  // The start sample's counts (10 involuntary) were read before the switch at 10.42 ms:
  // the window holds it.
  ThreadReport& r = AddThreadSampledWithReads(f, 50, 10, 50, 12);
  r.counter_window.AddSwitch(10420000, false);
  r.counter_window.AddSwitch(100 * kMs, false);
  ThreadCheck c = CompareThread(r, f.Match(r), {});
  EXPECT_EQ(c.traced.involuntary, 2);
  EXPECT_EQ(c.switches_placed_after_reads, 1u);
  EXPECT_EQ(c.status, CheckStatus::kAgree);
  // Only one instant per read: the counts cannot take the involuntary switch before the
  // read and leave the voluntary one after it, when the voluntary one came first.
  Fixture g;
  ThreadReport& r2 = AddThreadSampledWithReads(g, 50, 10, 51, 11);
  r2.counter_window.AddSwitch(10430000, false);
  r2.counter_window.AddSwitch(10410000, true);
  // Kernel delta: 1 voluntary, 1 involuntary; the trace's, cut at the read's end: 0, 0,
  // and at most the last switch (involuntary) or both after the read: (0, 1) or (1, 1).
  c = CompareThread(r2, g.Match(r2), {});
  EXPECT_EQ(c.switches_during_reads, 2u);
  EXPECT_EQ(c.switches_placed_after_reads, 2u);
  EXPECT_EQ(c.status, CheckStatus::kAgree);
  Fixture h;
  ThreadReport& r3 = AddThreadSampledWithReads(h, 50, 10, 51, 10);  // needs (1, 0): impossible
  r3.counter_window.AddSwitch(10430000, false);
  r3.counter_window.AddSwitch(10410000, true);
  c = CompareThread(r3, h.Match(r3), {});
  EXPECT_EQ(c.status, CheckStatus::kDisagree);
  EXPECT_EQ(c.switches_placed_after_reads, 0u);
  EXPECT_EQ(c.traced.voluntary, 0);
}

TEST(KernelCheck, ThreadRunnableAndUnseenAtTheStartSampleIsJudgedOnSwitchesOnly) {
  Fixture f;
  f.rec.counters.Add(Rec(2100, Source::kProcSnapshot, 10500000, 10, 1, 500 * kMs, 80 * kMs));
  f.rec.counters.Add(Rec(2100, Source::kProcSnapshot, 900500000, 12, 2, 560 * kMs, 120 * kMs));
  ThreadReport& r = f.AddThread(2100, 30 * kMs, 950 * kMs, false);
  CounterWindow& w = r.counter_window;
  w.AddSegment(Microstate::kUser, 30 * kMs, 40 * kMs);  // first seen on a CPU after the sample
  w.AddSwitch(40 * kMs, true);
  w.AddSwitch(41 * kMs, true);
  w.AddSwitch(42 * kMs, false);
  ThreadCheck c = CompareThread(r, f.Match(r), {});
  EXPECT_FALSE(c.times_judged);
  EXPECT_TRUE(c.switches_ok);
  EXPECT_FALSE(c.wait_ok);  // 40 ms of run delay the trace could not see
  EXPECT_EQ(c.status, CheckStatus::kAgree);
  KernelCheckResult res = f.Check();
  EXPECT_TRUE(res.passed());
  EXPECT_EQ(res.worst_wait.tid, 0);  // unjudged times stay out of the worst thread
  // Its process says the same as the thread: the comparison, and that it was not judged
  // (the process row said its wait was fine where the thread's said it was not).
  ASSERT_EQ(res.processes.size(), 1u);
  EXPECT_FALSE(res.processes[0].times_judged);
  EXPECT_FALSE(res.processes[0].wait_ok);
  // And the verdict says that only switch counts were: a bare PASS read as one on times.
  EXPECT_EQ(res.times_judged, 0u);
  EXPECT_EQ(res.Verdict().rfind("kernel check: PASS on switch counts only: 1/1 threads agree", 0),
            0u)
      << res.Verdict();
  EXPECT_NE(res.Verdict().find(
                "switch counts only: 1/1 threads agree with the kernel, 1 of 1 checked (0 "
                "partial, 0 with lost events, 0 with switches the kernel did not record, 0 "
                "without counters); times judged for 0 of 1; worst thread (the most of its "
                "tolerance): on-CPU -"),
            std::string::npos)
      << res.Verdict();
  // The process row's "agree" says it too (it read as an agreement on 40 ms of wait).
  std::ostringstream table;
  RenderCheckTable(res, table);
  EXPECT_NE(table.str().find("sum     "), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("agree: times not judged\n"), std::string::npos) << table.str();

  w.AddSwitch(43 * kMs, false);  // one switch too many still fails
  EXPECT_EQ(CompareThread(r, f.Match(r), {}).status, CheckStatus::kDisagree);
}

// A thread that neither ran nor waited agrees on its times (0 against 0) and proves
// nothing about them: the verdict says so. A -p recording of a busy process judged the
// times of its one idle thread only, and read as a PASS on times.
TEST(KernelCheck, AThreadThatNeitherRanNorWaitedIsNamedAmongTheTimesJudged) {
  Fixture f;
  f.rec.counters.Add(Rec(2100, Source::kProcSnapshot, 10500000, 10, 1, 500 * kMs, 80 * kMs));
  f.rec.counters.Add(Rec(2100, Source::kProcSnapshot, 900500000, 12, 2, 560 * kMs, 120 * kMs));
  ThreadReport& busy = f.AddThread(2100, 30 * kMs, 950 * kMs, false);
  busy.counter_window.AddSegment(Microstate::kUser, 30 * kMs, 40 * kMs);
  busy.counter_window.AddSwitch(40 * kMs, true);
  busy.counter_window.AddSwitch(41 * kMs, true);
  busy.counter_window.AddSwitch(42 * kMs, false);
  f.rec.counters.Add(Rec(2101, Source::kProcSnapshot, 10500000, 3, 0, 7 * kMs, 1 * kMs));
  f.rec.counters.Add(Rec(2101, Source::kProcSnapshot, 900500000, 3, 0, 7 * kMs, 1 * kMs));
  ThreadReport& idle = f.AddThread(2101, 5 * kMs, 950 * kMs, false);
  idle.counter_window.AddSegment(Microstate::kSleep, 5 * kMs, 950 * kMs);
  ThreadCheck c = CompareThread(idle, f.Match(idle), {});
  ASSERT_TRUE(c.times_judged);
  EXPECT_EQ(c.status, CheckStatus::kAgree);
  KernelCheckResult res = f.Check();
  EXPECT_TRUE(res.passed());
  EXPECT_EQ(res.times_judged, 1u);
  EXPECT_EQ(res.times_judged_idle, 1u);
  EXPECT_NE(res.Verdict().find("; times judged for 1 of 2, 1 of them with nothing to compare (no "
                               "run or wait inside its window) (the rest: switch counts only); "
                               "worst thread (the most of its tolerance): "),
            std::string::npos)
      << res.Verdict();
  // No time was compared with anything: the verdict is on the switch counts only.
  EXPECT_TRUE(res.Verdict().starts_with("kernel check: PASS on switch counts only: "))
      << res.Verdict();
}

TEST(KernelCheck, ThreadWithoutStartSampleIsPartialAndNotJudged) {
  Fixture f;
  f.rec.counters.Add(Rec(3000, Source::kProcSnapshot, 900500000, 999, 999, 1, 1));
  ThreadReport& r = f.AddThread(3000, 5 * kMs, 950 * kMs, false);
  r.counter_window.AddSwitch(100 * kMs, true);
  KernelMatch m = f.Match(r);
  EXPECT_EQ(m.mode, WindowMode::kPartial);
  KernelCheckResult res = f.Check();
  EXPECT_EQ(res.partial, 1u);
  EXPECT_EQ(res.compared, 0u);
  EXPECT_FALSE(res.passed());  // counters were recorded, yet nothing could be checked
  EXPECT_NE(res.Verdict().find("nothing to compare"), std::string::npos);
}

TEST(KernelCheck, ExitAfterTracingStoppedIsPartial) {
  Fixture f;
  f.rec.counters.Add(Rec(3100, Source::kTaskstatsExit, 990 * kMs, 5, 0, kMs, 0));
  ThreadReport& r = f.AddThread(3100, 50 * kMs, 950 * kMs, true);  // exit not seen
  EXPECT_EQ(f.Match(r).mode, WindowMode::kPartial);
  EXPECT_EQ(f.Match(r).why, "exit not in the trace (after tracing stopped, or lost)");
  // A recording without sched_process_exit (record --no-defaults -e sched:sched_switch) has
  // the exit switch, which does not say where do_exit() sent the record: still partial,
  // and the reason says what to record.
  f.threads[r.thread->id].exit_switch_ts = 940 * kMs;
  EXPECT_EQ(f.Match(r).mode, WindowMode::kPartial);
  EXPECT_EQ(f.Match(r).why,
            "exit switch in the trace but not sched_process_exit, which dates the exit record "
            "(record -e sched:sched_process_exit)");
}

TEST(KernelCheck, ReusedTidMatchesEachThreadByTime) {
  Fixture f;
  f.rec.counters.Add(Rec(42, Source::kTaskstatsExit, 195 * kMs, 3, 0, 2 * kMs, 0));
  f.rec.counters.Add(Rec(42, Source::kTaskstatsExit, 395 * kMs, 7, 1, 9 * kMs, 0));
  f.AddThread(42, 100 * kMs, 192 * kMs, true);
  f.AddThread(42, 300 * kMs, 392 * kMs, true);  // may move the first ThreadReport
  ThreadReport& a = f.model.threads[0];
  ThreadReport& b = f.model.threads[1];
  f.Exit(a, 190 * kMs);
  f.Exit(b, 390 * kMs);
  for (int i = 0; i < 3; ++i) a.counter_window.AddSwitch((110 + i) * kMs, true);
  for (int i = 0; i < 7; ++i) b.counter_window.AddSwitch((310 + i) * kMs, true);
  b.counter_window.AddSwitch(320 * kMs, false);
  a.counter_window.AddSegment(Microstate::kUser, 100 * kMs, 102 * kMs);
  b.counter_window.AddSegment(Microstate::kUser, 300 * kMs, 309 * kMs);
  KernelMatch ma = f.Match(a), mb = f.Match(b);
  ASSERT_NE(ma.end, nullptr);
  ASSERT_NE(mb.end, nullptr);
  EXPECT_EQ(ma.end->taken_at_ns, 195 * kMs);
  EXPECT_EQ(mb.end->taken_at_ns, 395 * kMs);
  KernelCheckResult res = f.Check();
  EXPECT_EQ(res.compared, 2u);
  EXPECT_TRUE(res.passed()) << res.Verdict();
}

// A thread created at 150 ms took its leader's tid 42 in an exec at 200 ms, as the
// leader exited: both exit records name 42. The leader's was stamped after the take-over
// (the listener ran late); each thread's is the first after its own exit.
TEST(KernelCheck, AThreadThatTookItsLeadersTidInAnExecLeavesTheLeaderItsRecord) {
  Fixture f;
  f.rec.counters.Add(Rec(42, Source::kTaskstatsExit, 201 * kMs, 3, 0, 2 * kMs, 0));
  f.rec.counters.Add(Rec(42, Source::kTaskstatsExit, 395 * kMs, 7, 1, 9 * kMs, 0));
  f.AddThread(42, 100 * kMs, 199 * kMs, true);
  f.AddThread(42, 150 * kMs, 392 * kMs, true);
  f.threads[1].tid_since = 200 * kMs;
  f.threads[1].exit_record_ts = 391 * kMs;
  ThreadReport& leader = f.model.threads[0];
  ThreadReport& execed = f.model.threads[1];
  f.Exit(leader, 198 * kMs);
  f.Exit(execed, 390 * kMs);
  KernelMatch ml = f.Match(leader), me = f.Match(execed);
  ASSERT_NE(ml.end, nullptr);
  ASSERT_NE(me.end, nullptr);
  EXPECT_EQ(ml.end->taken_at_ns, 201 * kMs);
  EXPECT_EQ(me.end->taken_at_ns, 395 * kMs);
  // Without its own record the leader has none, rather than the thread's.
  f.rec = KernelRecording{};
  f.rec.counters.Add(Rec(42, Source::kTaskstatsExit, 395 * kMs, 7, 1, 9 * kMs, 0));
  EXPECT_EQ(f.Match(leader).end, nullptr);
  EXPECT_EQ(f.Match(execed).end->taken_at_ns, 395 * kMs);
}

TEST(KernelCheck, StartSampleOfAnEarlierThreadIsNotReusedByACreatedOne) {
  Fixture f;
  f.rec.counters.Add(Rec(77, Source::kProcSnapshot, 10500000, 50, 5, 5 * kMs, 0));
  f.rec.counters.Add(Rec(77, Source::kTaskstatsExit, 400 * kMs, 2, 0, kMs, 0));
  ThreadReport& r = f.AddThread(77, 300 * kMs, 392 * kMs, true);
  f.Exit(r, 390 * kMs);
  KernelMatch m = f.Match(r);
  EXPECT_EQ(m.mode, WindowMode::kAbsolute);
  EXPECT_EQ(m.start, nullptr);
}

TEST(KernelCheck, MissingCountersAreReportedNotJudged) {
  Fixture f;
  f.AddThread(5000, 0, 100 * kMs, true);
  KernelCheckResult res = f.Check();
  EXPECT_EQ(res.no_counters, 1u);
  EXPECT_FALSE(res.passed());  // counters were recorded, yet none covers the only thread
}

// A verdict on a few threads of many is no verdict: PASS needs at least half of the
// threads that had (or needed) counters compared.
TEST(KernelCheck, VerdictIsIncompleteWhenMostThreadsWereNotChecked) {
  auto agreeing = [](Fixture& f, int32_t tid) {  // it ran 10 ms: its times are compared
    f.rec.counters.Add(Rec(tid, Source::kTaskstatsExit, 500 * kMs, 1, 0, 10 * kMs, 0));
    ThreadReport& r = f.AddThread(tid, 100 * kMs, 460 * kMs, true);
    r.counter_window.AddSegment(Microstate::kUser, 100 * kMs, 110 * kMs);
    f.Exit(r, 450 * kMs);
    r.counter_window.AddSwitch(200 * kMs, true);
  };
  Fixture few;
  agreeing(few, 1001);
  for (int32_t tid : {1002, 1003, 1004}) few.AddThread(tid, 0, 100 * kMs, true);
  KernelCheckResult res = few.Check();
  EXPECT_EQ(res.agreeing, 1u);
  EXPECT_EQ(res.no_counters, 3u);
  EXPECT_FALSE(res.passed());
  EXPECT_NE(res.Verdict().find("INCOMPLETE: 1/1 threads agree with the kernel, 1 of 4 checked"),
            std::string::npos)
      << res.Verdict();

  Fixture most;
  agreeing(most, 1001);
  agreeing(most, 1002);
  most.AddThread(1003, 0, 100 * kMs, true);
  res = most.Check();
  EXPECT_TRUE(res.passed()) << res.Verdict();
  EXPECT_NE(res.Verdict().find("PASS: 2/2 threads agree with the kernel, 2 of 3 checked"),
            std::string::npos)
      << res.Verdict();
}

TEST(KernelCheck, OneSwitchOffFails) {
  Fixture f;
  f.rec.counters.Add(Rec(1001, Source::kTaskstatsExit, 500 * kMs, 11, 0, 0, 0));
  ThreadReport& r = f.AddThread(1001, 100 * kMs, 460 * kMs, true);
  f.Exit(r, 450 * kMs);
  for (int i = 0; i < 10; ++i) r.counter_window.AddSwitch((200 + i) * kMs, true);
  KernelCheckResult res = f.Check();
  EXPECT_FALSE(res.passed());
  EXPECT_EQ(res.threads[0].status, CheckStatus::kDisagree);
  EXPECT_NE(res.Verdict().find("FAIL"), std::string::npos);
}

// record -C: a thread that also ran on a CPU left out has fewer switches in the trace than
// the kernel counted; shown, not judged. More than the kernel counted still fails. No
// thread's times are judged (it may have run there without a counted switch).
TEST(KernelCheck, SwitchesShortOnACpuLeftOutAreUntracedNotAFailure) {
  for (const int traced : {10, 12}) {
    SCOPED_TRACE(traced);
    Fixture f;
    f.model.trace.recording.untraced_cpus = {1};
    f.rec.counters.Add(Rec(1001, Source::kTaskstatsExit, 500 * kMs, 11, 0, 0, 0));
    ThreadReport& r = f.AddThread(1001, 100 * kMs, 460 * kMs, true);
    f.Exit(r, 450 * kMs);
    for (int i = 0; i < traced; ++i) r.counter_window.AddSwitch((200 + i) * kMs, true);
    KernelCheckResult res = f.Check();
    if (traced < 11) {
      EXPECT_EQ(res.threads[0].status, CheckStatus::kUntraced);
      EXPECT_FALSE(res.threads[0].times_judged);
      EXPECT_NE(res.threads[0].note.find("1 switch short: it ran on CPU 1 too"), std::string::npos)
          << res.threads[0].note;
      EXPECT_EQ(res.untraced, 1u);
    } else {
      EXPECT_EQ(res.threads[0].status, CheckStatus::kDisagree);
    }
    EXPECT_NE(res.threads[0].note.find("times not judged: CPU 1 not recorded (-C)"),
              std::string::npos)
        << res.threads[0].note;
  }
}

TEST(KernelCheck, LostEventsThreadIsShownButNotJudged) {
  Fixture f;
  f.rec.counters.Add(Rec(1001, Source::kTaskstatsExit, 500 * kMs, 11, 0, 0, 0));
  ThreadReport& r = f.AddThread(1001, 100 * kMs, 460 * kMs, true);
  f.threads.back().lost_touched = true;
  f.Exit(r, 450 * kMs);
  KernelCheckResult res = f.Check();
  EXPECT_EQ(res.threads[0].status, CheckStatus::kLostEvents);
  EXPECT_FALSE(res.passed());  // shown, but the only thread was not judged
  EXPECT_EQ(res.lost, 1u);
}

TEST(CheckTolerance, LargerOfAbsoluteAndRelativePlusUnknownTime) {
  CheckTolerance tol;
  EXPECT_EQ(tol.TimeFor(10 * kMs, 0), tol.time_abs_ns);
  EXPECT_EQ(tol.time_abs_ns, kMs / 5);  // the documented values (man/cstool-report.1)
  EXPECT_DOUBLE_EQ(tol.time_rel, 0.01);
  EXPECT_EQ(tol.TimeFor(1000 * kMs, 0), 10 * kMs);
  EXPECT_EQ(tol.TimeFor(1000 * kMs, 3 * kMs), 13 * kMs);
  EXPECT_EQ(tol.TimeFor(-1000 * kMs, 0), 10 * kMs);
}

TEST(KernelCheck, TimeJustInsideAndJustOutsideTheTolerance) {
  for (int64_t diff :
       {int64_t{0}, CheckTolerance{}.time_abs_ns, CheckTolerance{}.time_abs_ns + 1}) {
    Fixture f;
    f.rec.counters.Add(Rec(1001, Source::kTaskstatsExit, 500 * kMs, 0, 0, 10 * kMs, 0));
    ThreadReport& r = f.AddThread(1001, 100 * kMs, 460 * kMs, true);
    f.Exit(r, 450 * kMs);
    r.counter_window.AddSegment(Microstate::kUser, 100 * kMs, 110 * kMs + diff);
    KernelCheckResult res = f.Check();
    EXPECT_EQ(res.passed(), diff <= CheckTolerance{}.time_abs_ns) << diff;
  }
}

TEST(KernelRecording, JsonRoundTripKeepsPhases) {
  KernelRecording rec;
  rec.start_snapshot = {1, 2};
  rec.end_snapshot = {30, 40};
  rec.taskstats = "available";
  rec.counters.Add(Rec(1, Source::kProcSnapshot, 2, 1, 2, 3, 4));
  rec.counters.Add(ReadBetween(Rec(1, Source::kProcSnapshot, 35, 1, 2, 3, 4), 31, 33));
  KernelRecording back = KernelRecording::FromJson(rec.ToJson());
  EXPECT_EQ(back.counters.records()[0].SwitchesRead().from, 2);  // none recorded: the instant
  EXPECT_EQ(back.counters.records()[0].SwitchesRead().to, 2);
  EXPECT_EQ(back.counters.records()[1].SwitchesRead().from, 31);
  EXPECT_EQ(back.counters.records()[1].SwitchesRead().to, 33);
  nlohmann::json bad = rec.ToJson();
  bad["records"][1]["switches_read_to_ns"] = 36;  // after the read's end
  EXPECT_THROW(KernelRecording::FromJson(bad), Error);
  bad = rec.ToJson();
  bad["records"][1].erase("switches_read_from_ns");  // a read from the start of time
  EXPECT_THROW(KernelRecording::FromJson(bad), Error);
  EXPECT_EQ(back.start_snapshot.end_ns, 2);
  EXPECT_EQ(back.end_snapshot.begin_ns, 30);
  EXPECT_EQ(back.taskstats, "available");
  ASSERT_EQ(back.counters.size(), 2u);
  EXPECT_TRUE(back.IsStartSample(back.counters.records()[0]));
  EXPECT_TRUE(back.IsEndSample(back.counters.records()[1]));
  EXPECT_TRUE(KernelRecording::FromJson(nullptr).counters.empty());
}

// A failed verdict of a recording without some of cstool's default events says which
// (the tolerance is measured with them); a passing one, or one with them all, says nothing.
TEST(KernelCheck, FailedVerdictNamesTheMissingEvents) {
  KernelCheckResult res;
  res.has_counters = true;
  res.compared = 3;
  res.agreeing = 2;
  res.missing_events = {"raw_syscalls:sys_enter", "irq:irq_handler_entry"};
  EXPECT_NE(res.Verdict().find("FAIL"), std::string::npos) << res.Verdict();
  EXPECT_NE(res.Verdict().find("; recorded without raw_syscalls:sys_enter, "
                               "irq:irq_handler_entry (the tolerance is for cstool's default "
                               "events; see the notes)"),
            std::string::npos)
      << res.Verdict();
  res.agreeing = 3;
  EXPECT_EQ(res.MissingEventsText(), "");
  res.agreeing = 2;
  res.missing_events.clear();
  EXPECT_EQ(res.MissingEventsText(), "");
}

// record's one-line summary has no table: it names the threads that disagree, the
// first three in the report's order, and counts the rest.
TEST(KernelCheck, DisagreeingTextNamesTheFirstThreeThatDisagree) {
  KernelCheckResult res;
  EXPECT_EQ(res.DisagreeingText(), "");
  auto add = [&res](int32_t tid, std::string comm, CheckStatus status) {
    ThreadCheck t;
    t.tid = tid;
    t.comm = std::move(comm);
    t.status = status;
    res.threads.push_back(t);
  };
  add(10, "agrees", CheckStatus::kAgree);
  add(11, "lost", CheckStatus::kLostEvents);
  EXPECT_EQ(res.DisagreeingText(), "");
  add(12, "first", CheckStatus::kDisagree);
  EXPECT_EQ(res.DisagreeingText(), "; disagreeing: 12 (first)");
  add(13, "second", CheckStatus::kDisagree);
  add(14, "partial", CheckStatus::kPartial);
  add(15, "third", CheckStatus::kDisagree);
  EXPECT_EQ(res.DisagreeingText(), "; disagreeing: 12 (first), 13 (second), 15 (third)");
  add(16, "fourth", CheckStatus::kDisagree);
  add(17, "fifth", CheckStatus::kDisagree);
  EXPECT_EQ(res.DisagreeingText(), "; disagreeing: 12 (first), 13 (second), 15 (third) and 2 more");
  res.threads[2].comm.clear();  // a thread the trace never named
  EXPECT_EQ(res.DisagreeingText(), "; disagreeing: 12, 13 (second), 15 (third) and 2 more");
}

}  // namespace
}  // namespace cstool
