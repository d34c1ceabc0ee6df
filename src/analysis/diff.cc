#include "analysis/diff.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "base/saturating_add.h"

namespace cstool {
namespace {

// A process's totals: the sum over its threads.
DiffThread ProcessSum(const DiffRecording& recording, const KeyedProcess& p) {
  DiffThread sum;
  sum.tid = p.pid;
  sum.pid = p.pid;
  sum.comm = p.key.process;
  for (size_t i : p.threads) {
    const DiffThread& t = recording.threads[i];
    sum.lifetime_ns = SaturatingAdd(sum.lifetime_ns, t.lifetime_ns);
    for (size_t m = 0; m < kMicrostateCount; ++m)
      sum.microstates[m] = SaturatingAdd(sum.microstates[m], t.microstates[m]);
    for (auto& [label, n] : t.causes) sum.causes[label] += n;
    for (auto& [name, s] : t.syscalls) sum.syscalls[name] += s;
    for (auto& [name, s] : t.irqs) sum.irqs[name] += s;
  }
  return sum;
}

// Every subject of one recording by key: its threads and its processes' sums.
std::map<SubjectKey, DiffThread> SubjectsOf(const DiffRecording& recording) {
  std::map<SubjectKey, DiffThread> out;
  const KeyedRecording keyed = KeyRecording(recording);
  for (size_t i = 0; i < recording.threads.size(); ++i)
    out.emplace(keyed.thread_keys[i], recording.threads[i]);
  for (const KeyedProcess& p : keyed.processes) out.emplace(p.key, ProcessSum(recording, p));
  return out;
}

// A subject's totals in each recording of one side (nullopt where it is absent).
using Appearances = std::vector<const DiffThread*>;

std::vector<double> ValuesOf(const Appearances& side,
                             const std::function<double(const DiffThread&)>& value) {
  std::vector<double> out;
  for (const DiffThread* t : side)
    if (t) out.push_back(value(*t));
  return out;
}

class RowBuilder {
 public:
  RowBuilder(size_t subject, const Appearances& base, const Appearances& after,
             std::vector<DiffRow>& rows)
      : subject_(subject), base_(base), after_(after), rows_(rows) {}

  using Value = std::function<double(const DiffThread&)>;
  struct MeasureSpec {
    std::string field;
    DiffUnit unit;
    Value value;
  };

  // Adds the row unless every value of every measure is zero on both sides.
  void Add(DiffKind kind, std::string name, const std::vector<MeasureSpec>& specs) {
    DiffRow row;
    row.subject = subject_;
    row.kind = kind;
    row.name = std::move(name);
    bool any = false;
    for (const MeasureSpec& s : specs) {
      DiffMeasure m{
          s.field, s.unit,
          Compare(ValuesOf(base_, s.value), ValuesOf(after_, s.value), DiffResolution(s.unit))};
      for (const SideStats* side : {&m.comparison.base, &m.comparison.after})
        any = any || side->min != 0 || side->max != 0;
      row.measures.push_back(std::move(m));
    }
    if (any) rows_.push_back(std::move(row));
  }

 private:
  size_t subject_;
  const Appearances& base_;
  const Appearances& after_;
  std::vector<DiffRow>& rows_;
};

// The union of the names a map member holds over both sides.
template <typename Member>
std::set<std::string> NamesOf(const Appearances& base, const Appearances& after, Member member) {
  std::set<std::string> out;
  for (const Appearances* side : {&base, &after})
    for (const DiffThread* t : *side)
      if (t)
        for (auto& [name, v] : t->*member) out.insert(name);
  return out;
}

void AddRows(size_t subject, const Appearances& base, const Appearances& after,
             std::vector<DiffRow>& rows) {
  RowBuilder b(subject, base, after, rows);
  using Spec = RowBuilder::MeasureSpec;
  for (size_t m = 0; m < kMicrostateCount; ++m)
    b.Add(DiffKind::kMicrostate, std::string(kMicrostateNames[m].key),
          {Spec{"time_ns", DiffUnit::kNs,
                [m](const DiffThread& t) { return static_cast<double>(t.microstates[m]); }},
           Spec{"share_percent", DiffUnit::kPercent, [m](const DiffThread& t) {
                  return t.lifetime_ns > 0 ? 100.0 * static_cast<double>(t.microstates[m]) /
                                                 static_cast<double>(t.lifetime_ns)
                                           : 0.0;
                }}});
  for (const std::string& name : NamesOf(base, after, &DiffThread::syscalls)) {
    auto field = [name](auto member) {
      return [name, member](const DiffThread& t) {
        auto it = t.syscalls.find(name);
        return it == t.syscalls.end() ? 0.0 : static_cast<double>(it->second.*member);
      };
    };
    b.Add(DiffKind::kSyscall, name,
          {Spec{"time_ns", DiffUnit::kNs, field(&SyscallStats::time_ns)},
           Spec{"blocked", DiffUnit::kCount, field(&SyscallStats::blocked)},
           Spec{"calls", DiffUnit::kCount, field(&SyscallStats::calls)}});
  }
  for (const std::string& label : NamesOf(base, after, &DiffThread::causes))
    b.Add(DiffKind::kSwitchCause, label,
          {Spec{"count", DiffUnit::kCount, [label](const DiffThread& t) {
                  auto it = t.causes.find(label);
                  return it == t.causes.end() ? 0.0 : static_cast<double>(it->second);
                }}});
  for (const std::string& name : NamesOf(base, after, &DiffThread::irqs)) {
    auto field = [name](auto member) {
      return [name, member](const DiffThread& t) {
        auto it = t.irqs.find(name);
        return it == t.irqs.end() ? 0.0 : static_cast<double>(it->second.*member);
      };
    };
    b.Add(DiffKind::kIrq, name,
          {Spec{"time_ns", DiffUnit::kNs, field(&IrqStats::time_ns)},
           Spec{"count", DiffUnit::kCount, field(&IrqStats::count)}});
  }
}

bool Present(const std::vector<int32_t>& ids) {
  return std::any_of(ids.begin(), ids.end(), [](int32_t id) { return id != 0; });
}

}  // namespace

double DiffResolution(DiffUnit u) {
  // 1 us: the tables' 0.001 ms; a count's mean over recordings and a share in percentage
  // points are shown to the tenth.
  return u == DiffUnit::kNs ? 1000 : 0.1;
}

std::string_view DiffUnitName(DiffUnit u) {
  switch (u) {
    case DiffUnit::kNs:
      return "ns";
    case DiffUnit::kCount:
      return "count";
    case DiffUnit::kPercent:
      return "percent";
  }
  return "?";
}

bool DiffSubject::in_base() const { return Present(base_ids); }
bool DiffSubject::in_after() const { return Present(after_ids); }

bool DiffResult::significance_known() const {
  return base_files.size() >= kMinRunsForSignificance &&
         after_files.size() >= kMinRunsForSignificance;
}

bool RowComesFirst(const DiffResult& result, const DiffRow& a, const DiffRow& b) {
  const DiffSubject& sa = result.subjects[a.subject];
  const DiffSubject& sb = result.subjects[b.subject];
  if (sa.key.is_thread != sb.key.is_thread) return sa.key.is_thread;
  if (a.kind != b.kind) return a.kind < b.kind;
  const bool fa = a.primary().comparison.significant.value_or(false);
  const bool fb = b.primary().comparison.significant.value_or(false);
  if (fa != fb) return fa;
  const double ca = std::fabs(a.primary().comparison.change);
  const double cb = std::fabs(b.primary().comparison.change);
  if (ca != cb) return ca > cb;
  if (sa.key != sb.key) return sa.key < sb.key;
  return a.name < b.name;
}

DiffResult DiffRecordings(const std::vector<DiffRecording>& base,
                          const std::vector<DiffRecording>& after) {
  DiffResult result;
  for (const DiffRecording& r : base) result.base_files.push_back(r.file);
  for (const DiffRecording& r : after) result.after_files.push_back(r.file);

  std::vector<std::map<SubjectKey, DiffThread>> base_subjects, after_subjects;
  for (const DiffRecording& r : base) base_subjects.push_back(SubjectsOf(r));
  for (const DiffRecording& r : after) after_subjects.push_back(SubjectsOf(r));

  // Every key of either side; threads first, then processes.
  std::set<SubjectKey> keys;
  for (auto* side : {&base_subjects, &after_subjects})
    for (auto& subjects : *side)
      for (auto& [key, t] : subjects) keys.insert(key);
  std::vector<SubjectKey> ordered(keys.begin(), keys.end());
  std::stable_partition(ordered.begin(), ordered.end(),
                        [](const SubjectKey& k) { return k.is_thread; });

  for (const SubjectKey& key : ordered) {
    DiffSubject s;
    s.key = key;
    s.text = key.Text();
    Appearances in_base, in_after;
    auto appear = [&key](const std::vector<std::map<SubjectKey, DiffThread>>& side,
                         Appearances& where, std::vector<int32_t>& ids) {
      for (const auto& subjects : side) {
        auto it = subjects.find(key);
        where.push_back(it == subjects.end() ? nullptr : &it->second);
        ids.push_back(it == subjects.end() ? 0 : it->second.tid);
      }
    };
    appear(base_subjects, in_base, s.base_ids);
    appear(after_subjects, in_after, s.after_ids);
    auto lifetime = [](const DiffThread& t) { return static_cast<double>(t.lifetime_ns); };
    s.lifetime = Compare(ValuesOf(in_base, lifetime), ValuesOf(in_after, lifetime),
                         DiffResolution(DiffUnit::kNs));
    const size_t index = result.subjects.size();
    const bool matched = s.matched();
    result.subjects.push_back(std::move(s));
    if (matched) AddRows(index, in_base, in_after, result.rows);
  }
  std::stable_sort(
      result.rows.begin(), result.rows.end(),
      [&result](const DiffRow& a, const DiffRow& b) { return RowComesFirst(result, a, b); });
  return result;
}

}  // namespace cstool
