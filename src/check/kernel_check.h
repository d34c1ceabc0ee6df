// `report --check`: the reconstruction against the kernel's own counters, per thread
// and per process, over the window where both are defined (check/kernel_match.h).
//
// Quantities compared, traced vs kernel:
//   voluntary      switches with a sleeping prev_state  vs nvcsw
//   involuntary    R / R+ switches                      vs nivcsw
//   on-CPU         user + sys + irq + softirq           vs exec runtime (sum_exec_runtime)
//   wait-for-CPU   wait_cpu_wakeup + wait_cpu_preempted vs run delay (sched_info.run_delay)
//
// Exit adjustment: taskstats samples a dying thread in do_exit() just before the
// sched_process_exit tracepoint, so the trace's switches (and time) at or after that
// event — the final switch — are left out of the traced side.
//
// Cuts: the trace is cut where the kernel's values were taken. A /proc sample holds a
// running thread's exec runtime as of its last update (the increment spanning the
// sample starts there, analysis/counter_window.h); run delay grows when a waiting thread
// gets the CPU or is moved to another runqueue, so a wait belongs to the window in which
// it ended, up to its last move to the one it was in then, and a wait the trace's end cut
// short to none after its last move.
//
// Switches during a read: /proc's counts were read at one instant between two clock
// reads (KernelTaskCounters::SwitchesRead); a switch traced between them may be on either
// side, so the switch counts agree when they are equal at some instant inside each read.
//
// Tolerances (CheckTolerance): switch counts must be equal. Times may differ by
// max(time_abs_ns, time_rel * kernel value) plus the thread's unknown time (what the
// trace could not classify), and the kernel's run delay may exceed the traced wait by
// what it may have counted unseen (ThreadCheck::wait_maybe_more_ns). Times are shown but
// not judged (ThreadCheck::times_judged) when the unknown time alone exceeds the base
// tolerance (it would make any difference pass), when a thread alive at the start was
// running or queued, unseen, when it was sampled, when an exit has no exit syscall in the
// trace to place the exit record's reading, and with CPUs left out (-C).
// Measured on the reference VM: see man/cstool-report.1, "KERNEL CHECK".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/report_model.h"
#include "check/kernel_match.h"

namespace cstool {

// The times follow the kernel's accounting (switches placed at the kernel's instants,
// state_machine.cc), so what is left is the trace's own resolution: with
// sched_stat_runtime, each increment's clock is known to within its lag after the clock
// read (0.2-1.5 us), once per run, and a few microseconds per batch of moves (the clock
// reads around it). `make fidelity` (fourteen workloads, idle and under a parallel build;
// docs/accounting.md keeps each run) has met up to 0.16 % on a thread past the floor,
// and once 0.30 % (1.866 ms): a hackbench parent's wait after a preemption inside
// wait4() that no wakeup reached, which the kernel does not count and the trace cannot
// tell from any other (a wakeup proves the case, and is then left out). The relative
// term holds such waits.
struct CheckTolerance {
  int64_t time_abs_ns = 200'000;
  double time_rel = 0.01;

  // Allowed |traced - kernel| for a time whose kernel value is `kernel_ns`.
  int64_t TimeFor(int64_t kernel_ns, int64_t unknown_ns) const;
};

enum class CheckStatus {
  kAgree,
  kDisagree,
  kLostEvents,  // compared but not judged: lost events touched the thread
  kUntraced,    // compared but not judged: the kernel recorded some of its switches not at all
  kPartial,     // window not covered (check/kernel_match.h)
  kNoCounters,  // the recording has no kernel record for it
};
// "agree", "DISAGREE", "lost", "untraced", "partial", "none"
std::string_view CheckStatusName(CheckStatus s);

struct CheckQuantities {
  int64_t voluntary = 0;
  int64_t involuntary = 0;
  int64_t on_cpu_ns = 0;
  int64_t wait_cpu_ns = 0;
};

struct ThreadCheck {
  int32_t tid = 0;
  int32_t pid = 0;         // its process; the tid when that is unknown (!pid_known)
  bool pid_known = false;  // (a trace-cmd file names no process of a thread not seen forking)
  std::string comm;
  CheckStatus status = CheckStatus::kNoCounters;
  WindowMode mode = WindowMode::kNone;
  std::string note;
  CheckQuantities traced;
  CheckQuantities kernel;
  int64_t unknown_ns = 0;    // traced time of unknown state inside the window
  uint64_t exit_adjust = 0;  // switches at/after sched_process_exit left out
  // On-CPU time the kernel had not yet accounted when the exit record read the run time
  // (the run since its last update, early in the exit), left out of traced.on_cpu_ns: the
  // table's on-CPU time holds it, EXEC does not.
  int64_t exit_cut_on_cpu_ns = 0;
  // Switches traced while /proc read the counts of the start or end sample (either side
  // of the counts), and how many of them the traced counts place after the read.
  uint32_t switches_during_reads = 0;
  uint32_t switches_placed_after_reads = 0;
  int64_t on_cpu_tolerance_ns = 0;
  int64_t wait_tolerance_ns = 0;
  // Of traced.wait_cpu_ns, sleep the kernel counts as run delay (moved between CPUs while
  // asleep, Thread::SwitchPlacement); and how much more it may count: for moves the trace
  // did not show, and before enqueues dated at their sched_wakeup back to the wakelist
  // flush that did them, or to the sched_waking of a wakeup call that stalled on its CPU
  // (`enqueue_maybe_earlier_ns`, part of it): the kernel's run delay may exceed the traced
  // wait by that much more.
  int64_t asleep_queued_ns = 0;
  // Waits after preemptions that caught the thread on its way to sleep, which the kernel
  // does not count as run delay (WindowTotals::wait_preempted_asleep_ns): already left
  // out of traced.wait_cpu_ns.
  int64_t preempted_asleep_ns = 0;
  // Waits between two runqueues while a load balancer's batch moved the thread, which the
  // kernel does not count as run delay (WindowTotals::wait_between_runqueues_ns): already
  // left out of traced.wait_cpu_ns.
  int64_t between_runqueues_ns = 0;
  int64_t wait_maybe_more_ns = 0;
  int64_t enqueue_maybe_earlier_ns = 0;
  // On-CPU time in the window the run-time clock did not count (steal), left out of
  // traced.on_cpu_ns.
  int64_t stolen_ns = 0;
  bool switches_ok = false;
  bool on_cpu_ok = false;
  bool wait_ok = false;
  // False when the thread was on a CPU or queued, unseen by the trace, at its start
  // sample: the kernel's delta holds run time / run delay the trace cannot see, so only
  // the switch counts are judged.
  bool times_judged = true;
};

struct ProcessCheck {
  int32_t pid = 0;
  bool pid_known = false;  // else a thread of no known process, grouped by its tid
  std::string comm;
  uint32_t threads = 0;  // threads compared (agree, disagree or lost)
  CheckStatus status = CheckStatus::kNoCounters;
  CheckQuantities traced;
  CheckQuantities kernel;
  int64_t unknown_ns = 0;
  bool switches_ok = false;
  // The sums' comparison, as for a thread; judged only when every thread's times were.
  bool on_cpu_ok = false;
  bool wait_ok = false;
  bool times_judged = true;
};

// A difference as the check prints it, in ms to the microsecond (or % to two decimals):
// rounded first, so that one too small to show is 0.000, not -0.000.
double ShownDiff(double value, int decimals);

struct KernelCheckResult {
  CheckTolerance tolerance;
  bool has_counters = false;  // the recording carried kernel counters
  // Without them: why this recording has none ("a flight recorder's dump holds none ...").
  std::string no_counters_reason;
  std::vector<std::string> notes;  // from the recording (taskstats status, losses)
  std::vector<ThreadCheck> threads;
  std::vector<ProcessCheck> processes;
  uint32_t compared = 0;  // agree + disagree
  uint32_t agreeing = 0;
  uint32_t times_judged = 0;  // of `compared`: the rest had only their switch counts judged
  // Of `times_judged`: threads that neither ran nor waited for a CPU in their window, by the
  // trace and by the kernel (0 against 0 proves nothing about times).
  uint32_t times_judged_idle = 0;
  // Whether any thread's times were compared with something: else a verdict is on the
  // switch counts only, and says so.
  bool TimesCompared() const { return times_judged > times_judged_idle; }
  uint32_t lost = 0;
  uint32_t untraced = 0;
  uint32_t partial = 0;
  uint32_t no_counters = 0;
  // The judged thread whose difference used the most of its tolerance, per quantity.
  struct WorstThread {
    int32_t tid = 0;
    int64_t diff_ns = 0;  // traced - kernel
    double pct = 0;       // of the kernel value
    double of_tolerance = 0;
    int64_t kernel_ns = 0;  // the kernel value (0: no percentage of it)
  };
  WorstThread worst_on_cpu;
  WorstThread worst_wait;
  // Steal time the recording met on all CPUs (-1: not known): in the traced times, in
  // neither of the kernel's.
  int64_t host_steal_ns = -1;
  // The lag by which waits from an enqueue that only its sched_wakeup dates start before
  // the event (ReportModel::enqueue_lag): -1 when no wakeup measured it.
  int64_t enqueue_lag_ns = -1;
  uint64_t enqueue_lag_wakeups = 0;
  bool times_disagree = false;  // a judged thread's on-CPU or wait is out of tolerance
  // Events the recording lacks (TraceSummary::missing_events): the tolerance is measured
  // with cstool's default events, so a failure says which were missing.
  std::vector<std::string> missing_events;

  uint32_t Considered() const { return compared + lost + untraced + partial + no_counters; }
  // At least half of the threads that had counters or needed them were compared: a
  // verdict on 2 of 162 threads is no verdict.
  bool Covered() const { return compared * 2 >= Considered(); }
  // A check proves something only when a thread was compared: without kernel counters,
  // or with none of their threads comparable, `--check` fails (NOT CHECKED).
  bool passed() const { return has_counters && compared > 0 && agreeing == compared && Covered(); }
  // "kernel check: PASS: 5/5 threads agree (...)" — the one verdict line.
  std::string Verdict() const;
  // "; recorded without E1, E2 (...)" after a failed verdict of a recording that lacks
  // events, else "".
  std::string MissingEventsText() const;
  // "; times judged for N of M ..." when not every compared thread's times were judged
  // (empty when they were): the verdict's and `record`'s summary's qualifier.
  std::string JudgedText() const;
  // "; disagreeing: 12 (comm), 13 (comm) and 2 more" when a compared thread disagrees,
  // else "": `record`'s one-line summary, which has no table to say which.
  std::string DisagreeingText() const;
};

// Pure comparison of one thread (unit-testable with synthetic inputs). `untraced_cpus`:
// the online CPUs a `record -C` left out (RecordingInfo::untraced_cpus).
ThreadCheck CompareThread(const ThreadReport& r, const KernelMatch& m, const CheckTolerance& tol,
                          const std::vector<int32_t>& untraced_cpus = {});

// Checks `threads` (the report's selection) of `model`.
KernelCheckResult CheckAgainstKernel(const ReportModel& model,
                                     const std::vector<const ThreadReport*>& threads,
                                     const CheckTolerance& tol = {});

}  // namespace cstool
