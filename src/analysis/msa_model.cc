#include "analysis/msa_model.h"

#include <algorithm>
#include <map>

namespace cstool {
namespace {

void SortCauses(std::vector<std::pair<std::string, uint64_t>>& causes) {
  std::sort(causes.begin(), causes.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
}

}  // namespace

void ComputeShares(MsaRow& row) {
  row.accounted_ns = 0;
  for (int64_t v : row.ns) row.accounted_ns += v;
  for (size_t i = 0; i < kMicrostateCount; ++i)
    row.shares[i] =
        row.accounted_ns > 0 ? 100.0 * static_cast<double>(row.ns[i]) / row.accounted_ns : 0.0;
}

std::vector<MsaRow> BuildThreadRows(const std::unordered_map<uint32_t, IntervalThreadStats>& stats,
                                    const std::deque<Thread>& threads,
                                    const SyscallTable& syscalls) {
  std::vector<MsaRow> rows;
  for (const auto& [id, st] : stats) {
    if (id >= threads.size()) continue;
    const Thread& t = threads[id];
    if (!t.tracked) continue;
    if (st.Accounted() == 0 && st.voluntary == 0 && st.involuntary == 0 && st.syscalls == 0)
      continue;
    MsaRow r;
    r.pid = t.tgid != 0 ? t.tgid : t.tid;
    r.tid = t.tid;
    r.comm = t.comm;
    r.ns = st.microstates;
    r.voluntary = st.voluntary;
    r.involuntary = st.involuntary;
    r.syscalls = st.syscalls;
    for (auto [packed, n] : st.causes)
      r.causes.emplace_back(syscalls.CauseLabel(SwitchCause::Unpack(packed)), n);
    SortCauses(r.causes);
    ComputeShares(r);
    rows.push_back(std::move(r));
  }
  std::sort(rows.begin(), rows.end(), [](const MsaRow& a, const MsaRow& b) {
    return a.pid != b.pid ? a.pid < b.pid : a.tid < b.tid;
  });
  return rows;
}

std::vector<MsaRow> AggregateByProcess(const std::vector<MsaRow>& thread_rows) {
  std::map<int32_t, MsaRow> by_pid;
  std::map<int32_t, std::map<std::string, uint64_t>> causes;
  for (const MsaRow& t : thread_rows) {
    auto [it, inserted] = by_pid.try_emplace(t.pid);
    MsaRow& p = it->second;
    if (inserted) {
      p.pid = t.pid;
      p.tid = 0;
      p.threads = 0;
      p.comm = t.comm;
    }
    if (t.tid == t.pid) p.comm = t.comm;
    p.threads += t.threads;
    for (size_t i = 0; i < kMicrostateCount; ++i) p.ns[i] += t.ns[i];
    p.voluntary += t.voluntary;
    p.involuntary += t.involuntary;
    p.syscalls += t.syscalls;
    if (p.counters.size() < t.counters.size()) p.counters.resize(t.counters.size());
    for (size_t i = 0; i < t.counters.size(); ++i) p.counters[i] += t.counters[i];
    p.counters_scaled = p.counters_scaled || t.counters_scaled;
    for (const auto& [label, n] : t.causes) causes[t.pid][label] += n;
  }
  std::vector<MsaRow> out;
  for (auto& [pid, row] : by_pid) {
    for (const auto& c : causes[pid]) row.causes.push_back(c);
    SortCauses(row.causes);
    ComputeShares(row);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace cstool
