#include "check/kernel_match.h"

#include <algorithm>
#include <limits>

#include "base/enum_names.h"
#include "base/errors.h"

namespace cstool {
namespace {

constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

}  // namespace

constexpr EnumNames<WindowMode, 4> kWindowModeNames{{"none", "absolute", "delta", "partial"},
                                                    "none"};
static_assert(static_cast<size_t>(WindowMode::kPartial) + 1 == kWindowModeNames.size());

std::string_view WindowModeName(WindowMode m) { return kWindowModeNames(m); }

KernelMatcher::KernelMatcher(const KernelRecording& recording,
                             const std::vector<ThreadReport>& threads)
    : recording_(recording) {
  for (const ThreadReport& r : threads)
    if (r.thread) by_tid_[r.thread->tid].push_back(r.thread);
  // In the order the tid named them: a thread that took its leader's tid in an exec was
  // created before the leader exited, and the leader's exit record is still the leader's.
  for (auto& [tid, list] : by_tid_)
    std::stable_sort(list.begin(), list.end(),
                     [](const Thread* a, const Thread* b) { return a->tid_since < b->tid_since; });
}

KernelMatch KernelMatcher::Match(const ThreadReport& r) const {
  KernelMatch m;
  const Thread& t = *r.thread;
  auto it = by_tid_.find(t.tid);
  if (it == by_tid_.end()) return m;
  const auto& same = it->second;
  auto pos = std::find(same.begin(), same.end(), &t);
  // The next thread of the tid owns what comes after it took the tid. One that took it in
  // an exec did so as this one (its leader) exited, maybe before the listener stamped
  // this one's exit record: this one's records end where that one's exit record was
  // taken instead (the earliest exit record after each one's exit is each one's).
  const Thread* next = pos != same.end() && pos + 1 != same.end() ? *(pos + 1) : nullptr;
  const bool next_execed = next != nullptr && next->tid_since > next->first_ts;
  const int64_t owned_until = next == nullptr             ? kForever
                              : !next_execed              ? next->tid_since
                              : next->exit_record_ts >= 0 ? next->exit_record_ts
                                                          : kForever;
  const bool first_of_tid = pos == same.begin();

  const KernelTaskCounters* start = nullptr;
  const KernelTaskCounters* end_sample = nullptr;
  const KernelTaskCounters* exit_record = nullptr;
  const KernelTaskCounters* early_exit_record = nullptr;
  const int64_t exit_ts = r.counter_window.exit_ts;
  for (const KernelTaskCounters* c : recording_.counters.FindAll(t.tid)) {
    const int64_t at = c->taken_at_ns;
    if (at >= owned_until) continue;
    if (c->source == KernelTaskCounters::Source::kTaskstatsExit) {
      if (at < t.tid_since) continue;
      if (exit_ts >= 0 && at < exit_ts) {
        // do_exit() sends taskstats before sched_process_exit, and exit_mm() between
        // them can take a while (the last thread unmaps the whole process): a listener
        // on another CPU may stamp the record before the tracepoint. Used when nothing
        // is stamped after the exit (that one is surely this thread's).
        if (!early_exit_record || at > early_exit_record->taken_at_ns) early_exit_record = c;
        continue;
      }
      if (!exit_record || at < exit_record->taken_at_ns) exit_record = c;
    } else if (recording_.IsStartSample(*c)) {
      bool before_ok = !t.created_in_trace && first_of_tid;
      if ((at >= t.tid_since || before_ok) && (!start || at > start->taken_at_ns)) start = c;
    } else if (recording_.IsEndSample(*c)) {
      if (at >= t.tid_since && (!end_sample || at > end_sample->taken_at_ns)) end_sample = c;
    }
  }

  if (!exit_record) exit_record = early_exit_record;
  if (t.exiting) {
    m.end = exit_record;
    if (!m.end) m.why = "no taskstats exit record";
  } else if (end_sample) {
    m.end = end_sample;
  } else if (exit_record) {
    m.end = exit_record;
    m.mode = WindowMode::kPartial;
    // Its exit switch alone does not date the record: do_exit() sent it earlier, and only
    // sched_process_exit (recorded by default) marks where.
    m.why = t.exit_switch_ts >= 0
                ? "exit switch in the trace but not sched_process_exit, which dates the exit "
                  "record (record -e sched:sched_process_exit)"
                : "exit not in the trace (after tracing stopped, or lost)";
    return m;
  } else {
    m.why = "no kernel counters for this thread";
  }
  if (!m.end) return m;
  if (t.created_in_trace) {
    m.mode = WindowMode::kAbsolute;
  } else if (start) {
    m.mode = WindowMode::kDelta;
    m.start = start;
  } else {
    m.mode = WindowMode::kPartial;
    m.why = "alive before tracing began, without a start sample";
  }
  return m;
}

nlohmann::json KernelJson(const KernelMatch& m) {
  if (!m.end) return nullptr;
  nlohmann::json j = CounterValuesJson(*m.end);
  j["window"] = WindowModeName(m.mode);
  if (m.start) j["start"] = CounterValuesJson(*m.start);
  if (!m.why.empty()) j["note"] = m.why;
  return j;
}

std::string AttachKernelCounters(ReportModel& model) {
  if (!model.trace.has_recording_info || model.trace.recording.kernel_counters.is_null()) return {};
  KernelRecording recording;
  try {
    recording = KernelRecording::FromJson(model.trace.recording.kernel_counters);
  } catch (const Error& e) {
    return std::string("kernel counters unreadable: ") + e.what();
  }
  KernelMatcher matcher(recording, model.threads);
  for (ThreadReport& r : model.threads)
    if (r.thread) r.kernel = KernelJson(matcher.Match(r));
  return {};
}

}  // namespace cstool
