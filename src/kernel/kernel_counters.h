// The kernel's own per-thread counters ("ground truth", design.md): what a recording
// captured from taskstats exit notifications (kernel/taskstats_listener.h) and from /proc
// snapshots of live threads (kernel/proc_task_counters.h). The recorder stores a
// KernelCounterSet as JSON in RecordingInfo::kernel_counters; the report reads it back
// and compares it with what it reconstructed from the trace.
//
// Field sources (all times in nanoseconds, all counts cumulative since the thread began):
//
// | field            | taskstats (struct taskstats)          | /proc/<pid>/task/<tid>/...        |
// |------------------|---------------------------------------|-----------------------------------|
// | nvcsw            | nvcsw                                 | status: voluntary_ctxt_switches   |
// | nivcsw           | nivcsw                                | status: nonvoluntary_ctxt_switches|
// | exec_runtime_ns  | cpu_run_virtual_total (*)             | schedstat field 1                 |
// | run_delay_ns     | cpu_delay_total                       | schedstat field 2                 |
// | run_delay_count  | cpu_count                             | schedstat field 3 ("timeslices")  |
// | blkio_delay_ns   | blkio_delay_total                     | (not available)                   |
// | swapin_delay_ns  | swapin_delay_total                    | (not available)                   |
//
// (*) Despite its name, taskstats' cpu_run_virtual_total is the scheduler's precise
// se.sum_exec_runtime (the value schedstat shows), whereas cpu_run_real_total is
// utime+stime, which on CONFIG_TICK_CPU_ACCOUNTING kernels is sampled at the tick. See
// kernel/delayacct.c, delayacct_add_tsk().
//
// run_delay_ns / run_delay_count come from sched_info (CONFIG_SCHED_INFO) and are kept
// whether or not kernel.task_delayacct is on. blkio/swapin delays are only accumulated
// while kernel.task_delayacct=1 (see kernel/delay_accounting.h); otherwise they read 0.
// run_delay_count is sched_info.pcount: how many times the thread was switched in.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cstool {

struct KernelTaskCounters {
  enum class Source {
    kTaskstatsExit,  // taskstats exit notification: final values, taken in do_exit()
    kProcSnapshot,   // /proc read of a live thread
  };

  int32_t tid = 0;
  int32_t tgid = 0;  // 0 when the source did not say (taskstats older than v12)
  int32_t ppid = 0;  // parent process (tgid of real_parent); 0 when unknown
  std::string comm;
  uint64_t nvcsw = 0;   // voluntary context switches
  uint64_t nivcsw = 0;  // involuntary context switches
  int64_t exec_runtime_ns = 0;
  int64_t run_delay_ns = 0;                // time runnable but waiting for a CPU
  uint64_t run_delay_count = 0;            // times switched in (schedstat "timeslices")
  std::optional<int64_t> blkio_delay_ns;   // taskstats only
  std::optional<int64_t> swapin_delay_ns;  // taskstats only
  // Bytes passed to read(2)/write(2) and friends (rchar/wchar of /proc/PID/io): taskstats
  // only, for the recorder's -V counters of a thread released at its exit; not stored in
  // the file (0 on kernels without CONFIG_TASK_XACCT).
  std::optional<uint64_t> read_char;
  std::optional<uint64_t> write_char;
  // CLOCK_MONOTONIC when the values were read: for exits, when the listener received
  // the notification (shortly after the thread's exit); for /proc, after reading.
  int64_t taken_at_ns = 0;
  // /proc only: the status read (the switch counts) lay between these two instants, so a
  // switch traced inside them may be on either side of the counts. 0: not recorded
  // (taskstats; older recordings): the counts hold at taken_at_ns.
  int64_t switches_read_from_ns = 0;
  int64_t switches_read_to_ns = 0;
  Source source = Source::kProcSnapshot;

  struct Span {
    int64_t from;
    int64_t to;
  };
  // Where the switch counts were read: the recorded bracket, else [taken_at, taken_at].
  Span SwitchesRead() const {
    return switches_read_to_ns > 0 ? Span{switches_read_from_ns, switches_read_to_ns}
                                   : Span{taken_at_ns, taken_at_ns};
  }

  bool operator==(const KernelTaskCounters&) const = default;
};

std::string_view SourceName(KernelTaskCounters::Source s);  // "taskstats_exit", "proc_snapshot"
std::optional<KernelTaskCounters::Source> ParseSourceName(const std::string& name);

// The one JSON encoding of the counters: the values and where they came from (what a
// report shows per thread), and with the thread's identity (what a recording stores).
nlohmann::json CounterValuesJson(const KernelTaskCounters& c);
void to_json(nlohmann::json& j, const KernelTaskCounters& c);
void from_json(const nlohmann::json& j, KernelTaskCounters& c);

// All kernel counters of one recording, plus named counters and notes describing how
// complete they are (e.g. "taskstats_enobufs": exit notifications lost to a full socket
// buffer), so that a report can say why a thread has no kernel counters.
//
// A tid can occur more than once: a /proc snapshot at the start and a taskstats exit
// record, or (system-wide) two threads that reused a tid. Records keep insertion order.
class KernelCounterSet {
 public:
  void Add(KernelTaskCounters c);
  void AddAll(const std::vector<KernelTaskCounters>& cs);

  // Best record for tid: the latest exit record if any, else the latest /proc snapshot.
  // nullptr when there is none.
  const KernelTaskCounters* Find(int32_t tid) const;
  // Latest record for tid from that source, or nullptr.
  const KernelTaskCounters* Find(int32_t tid, KernelTaskCounters::Source source) const;
  // Every record for tid, in insertion order.
  std::vector<const KernelTaskCounters*> FindAll(int32_t tid) const;

  const std::vector<KernelTaskCounters>& records() const { return records_; }
  size_t size() const { return records_.size(); }
  bool empty() const { return records_.empty(); }

  // Named counters (summed by AddCounter) and one-line notes for the report.
  void AddCounter(const std::string& name, uint64_t n) { counters_[name] += n; }
  void AddNote(std::string note) { notes_.push_back(std::move(note)); }
  const std::map<std::string, uint64_t>& counters() const { return counters_; }
  const std::vector<std::string>& notes() const { return notes_; }

  // {"version": 1, "records": [...], "counters": {...}, "notes": [...]}.
  nlohmann::json ToJson() const;
  // Accepts what ToJson() wrote; null (a recording without kernel counters) gives an
  // empty set. Throws cstool::Error on a value of the wrong shape.
  static KernelCounterSet FromJson(const nlohmann::json& j);

 private:
  std::vector<KernelTaskCounters> records_;
  std::multimap<int32_t, size_t> by_tid_;  // tid -> index into records_
  std::map<std::string, uint64_t> counters_;
  std::vector<std::string> notes_;
};

// Monotonic clock now, in ns (the clock of taken_at_ns).
int64_t MonotonicNowNs();

}  // namespace cstool
