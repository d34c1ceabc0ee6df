#include "analysis/diff_matching.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace cstool {
namespace {

// Older first: threads that existed before the trace by tid, then the ones it saw
// created, by when.
using Age = std::tuple<bool, int64_t, int32_t>;
Age AgeOf(const DiffThread& t) {
  return {t.created_in_trace, t.created_in_trace ? t.first_ts : int64_t{t.tid}, t.tid};
}

}  // namespace

std::string SubjectKey::Text() const {
  std::string p = process_nth > 1 ? fmt::format("{}#{}", process, process_nth) : process;
  if (!is_thread) return p;
  if (main_thread) return p + " (main)";
  return thread_nth > 1 ? fmt::format("{}/{}#{}", p, thread, thread_nth)
                        : fmt::format("{}/{}", p, thread);
}

KeyedRecording KeyRecording(const DiffRecording& recording) {
  const std::vector<DiffThread>& threads = recording.threads;
  KeyedRecording out;
  out.thread_keys.resize(threads.size());

  // Group by process; order each group's threads and the processes by age.
  std::map<int32_t, std::vector<size_t>> by_pid;
  std::vector<size_t> ungrouped;
  for (size_t i = 0; i < threads.size(); ++i)
    (threads[i].pid != 0 ? by_pid[threads[i].pid] : ungrouped).push_back(i);
  auto older = [&](size_t a, size_t b) { return AgeOf(threads[a]) < AgeOf(threads[b]); };
  for (auto& [pid, members] : by_pid) {
    std::sort(members.begin(), members.end(), older);
    KeyedProcess p;
    p.pid = pid;
    p.threads = members;
    // The process's name is its main thread's, else its oldest thread's.
    auto main = std::find_if(members.begin(), members.end(),
                             [&](size_t i) { return threads[i].tid == p.pid; });
    p.key.process = threads[main != members.end() ? *main : members.front()].comm;
    out.processes.push_back(std::move(p));
  }
  std::sort(out.processes.begin(), out.processes.end(),
            [&](const KeyedProcess& a, const KeyedProcess& b) {
              return older(a.threads.front(), b.threads.front());
            });
  std::map<std::string, uint32_t> process_count;
  for (KeyedProcess& p : out.processes) {
    p.key.process_nth = ++process_count[p.key.process];
    std::map<std::string, uint32_t> thread_count;
    for (size_t i : p.threads) {
      SubjectKey k = p.key;
      k.is_thread = true;
      k.main_thread = threads[i].tid == p.pid;
      k.thread = threads[i].comm;
      if (!k.main_thread) k.thread_nth = ++thread_count[k.thread];
      out.thread_keys[i] = std::move(k);
    }
  }
  std::sort(ungrouped.begin(), ungrouped.end(), older);
  std::map<std::string, uint32_t> ungrouped_count;
  for (size_t i : ungrouped) {
    SubjectKey& k = out.thread_keys[i];
    k.process.assign(1, '-');  // (not = "-": GCC 12's -Wrestrict false positive)
    k.is_thread = true;
    k.thread = threads[i].comm;
    k.thread_nth = ++ungrouped_count[k.thread];
  }
  return out;
}

}  // namespace cstool
