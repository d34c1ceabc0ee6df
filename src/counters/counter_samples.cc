#include "counters/counter_samples.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/errors.h"

namespace cstool {

double CounterTotals::Rate(size_t column) const {
  if (column >= values.size() || last_ts <= first_ts) return 0;
  return static_cast<double>(values[column]) * 1e9 / static_cast<double>(last_ts - first_ts);
}

std::vector<CounterTotals> TotalsByThread(const CounterRecording& recording) {
  std::map<int32_t, std::vector<const CounterSample*>> by_tid;
  for (const CounterSample& s : recording.samples) {
    if (s.values.size() != recording.names.size())
      throw Error(fmt::format("counter sample of thread {} has {} values for {} counters", s.tid,
                              s.values.size(), recording.names.size()));
    by_tid[s.tid].push_back(&s);
  }
  for (const CounterOverflow& o : recording.overflows)
    if (o.values.size() != recording.perf_columns)
      throw Error(fmt::format("counter overflow of thread {} has {} values for {} perf counters",
                              o.tid, o.values.size(), recording.perf_columns));
  std::vector<CounterTotals> out;
  for (auto& [tid, samples] : by_tid) {
    std::stable_sort(samples.begin(), samples.end(),
                     [](const CounterSample* a, const CounterSample* b) { return a->ts < b->ts; });
    const CounterSample& first = *samples.front();
    const CounterSample& last = *samples.back();
    CounterTotals t;
    t.tid = tid;
    t.tgid = first.tgid;
    t.first_ts = first.ts;
    t.last_ts = last.ts;
    t.samples = samples.size();
    t.exited = last.kind == "exit";
    for (size_t i = 0; i < last.values.size(); ++i)
      t.values.push_back(last.values[i] >= first.values[i] ? last.values[i] - first.values[i] : 0);
    for (const CounterSample* s : samples) t.scaled = t.scaled || s->scaled;
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<CounterTotals> SumByProcess(const std::vector<CounterTotals>& threads) {
  std::map<int32_t, CounterTotals> by_pid;
  for (const CounterTotals& t : threads) {
    const int32_t pid = t.tgid != 0 ? t.tgid : t.tid;
    auto [it, inserted] = by_pid.try_emplace(pid);
    CounterTotals& p = it->second;
    if (inserted) {
      p = t;
      p.tid = 0;
      p.tgid = pid;
      continue;
    }
    p.first_ts = std::min(p.first_ts, t.first_ts);
    p.last_ts = std::max(p.last_ts, t.last_ts);
    for (size_t i = 0; i < p.values.size() && i < t.values.size(); ++i) p.values[i] += t.values[i];
    p.scaled = p.scaled || t.scaled;
    p.exited = p.exited && t.exited;
    p.samples += t.samples;
  }
  std::vector<CounterTotals> out;
  out.reserve(by_pid.size());
  for (auto& [pid, p] : by_pid) out.push_back(std::move(p));
  return out;
}

}  // namespace cstool
