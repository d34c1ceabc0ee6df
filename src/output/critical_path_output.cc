#include "output/critical_path_output.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/report_view.h"
#include "base/errors.h"

namespace cstool {
namespace {

// What one thread on the path explains: its time there, by microstate.
struct OnPath {
  const Thread* thread;
  int64_t time_ns = 0;
  MicrostateTimes microstates{};
};

std::vector<OnPath> Totals(const CriticalPath& path) {
  std::vector<OnPath> out;
  for (const PathSegment& s : path.segments) {
    auto it =
        std::find_if(out.begin(), out.end(), [&](const OnPath& p) { return p.thread == s.thread; });
    if (it == out.end()) it = out.insert(out.end(), OnPath{s.thread});
    it->time_ns += s.end - s.start;
    it->microstates[static_cast<size_t>(s.state)] += s.end - s.start;
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const OnPath& a, const OnPath& b) { return a.time_ns > b.time_ns; });
  return out;
}

std::string_view EndKey(PathEnd e) {
  switch (e) {
    case PathEnd::kNone:
      return "";
    case PathEnd::kIrqWaker:
      return "irq_waker";
    case PathEnd::kIdleWaker:
      return "idle_waker";
    case PathEnd::kUnknownWaker:
      return "unknown_waker";
    case PathEnd::kNotWoken:
      return "not_woken";
    case PathEnd::kNotTraced:
      return "not_traced";
    case PathEnd::kTraceStart:
      return "trace_start";
  }
  return "";
}

std::string Note(const PathSegment& s) {
  std::string note(PathEndLabel(s.ends));
  if (!s.source.empty()) note += fmt::format(" {}", s.source);
  if (s.lost_events) note += fmt::format("{}lost events inside", note.empty() ? "" : "; ");
  return note;
}

std::string Ms(int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6); }

static_assert(kMicrostateCount <= 32, "PathRow::states has a bit per microstate");

// A row of the table: one segment, or a thread's consecutive on-CPU segments (a run of
// user/sys alternations is one stretch on a CPU to whoever reads the path; the rows of
// the machine formats stay one per segment). `states` has a bit per microstate.
struct PathRow {
  const PathSegment* first;
  int64_t end;
  uint32_t states;
};

bool JoinsOnCpuRow(const PathRow& row, const PathSegment& s) {
  const PathSegment& f = *row.first;
  return s.thread == f.thread && IsOnCpu(s.state) && IsOnCpu(f.state) && s.start == row.end &&
         f.ends == PathEnd::kNone && s.ends == PathEnd::kNone && !f.lost_events && !s.lost_events;
}

std::vector<PathRow> TableRows(const CriticalPath& path) {
  std::vector<PathRow> rows;
  for (const PathSegment& s : path.segments) {
    const uint32_t bit = 1u << static_cast<size_t>(s.state);
    if (!rows.empty() && JoinsOnCpuRow(rows.back(), s)) {
      rows.back().end = s.end;
      rows.back().states |= bit;
    } else {
      rows.push_back({&s, s.end, bit});
    }
  }
  return rows;
}

// "user", or the on-CPU states of a joined row in microstate order: "user+sys".
std::string RowState(const PathRow& row) {
  std::string out;
  for (size_t i = 0; i < kMicrostateCount; ++i)
    if (row.states & (1u << i))
      out += fmt::format("{}{}", out.empty() ? "" : "+", kMicrostateNames[i].key);
  return out;
}

// Whether a row's note warns that the chain is uncertain there (lost events inside, a
// waker or the state before it unknown) rather than saying where it ends (an interrupt or
// the idle task woke it): a thread woken by its timer ends its chain at every wakeup.
bool Warns(const PathSegment& s) {
  return s.lost_events || s.ends == PathEnd::kUnknownWaker || s.ends == PathEnd::kNotWoken ||
         s.ends == PathEnd::kNotTraced || s.ends == PathEnd::kTraceStart;
}

// Which of `rows` the table shows: all, or with more than `limit` (> 0), the `limit`
// longest (the earlier at a tie) and every row that warns (what the header warns of
// stays in view).
std::vector<bool> ShownRows(const std::vector<PathRow>& rows, size_t limit) {
  if (limit == 0 || rows.size() <= limit) return std::vector<bool>(rows.size(), true);
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto duration = [&](size_t i) { return rows[i].end - rows[i].first->start; };
  std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(limit) - 1,
                   order.end(), [&](size_t x, size_t y) {
                     return duration(x) != duration(y) ? duration(x) > duration(y) : x < y;
                   });
  std::vector<bool> shown(rows.size(), false);
  for (size_t k = 0; k < limit; ++k) shown[order[k]] = true;
  for (size_t i = 0; i < rows.size(); ++i)
    if (Warns(*rows[i].first)) shown[i] = true;
  return shown;
}

void RenderTable(const CriticalPath& path, int64_t trace_start, size_t limit, std::ostream& os) {
  const Thread& t = *path.target;
  const int64_t wall = path.to - path.from;
  const std::vector<PathRow> rows = TableRows(path);
  const std::vector<bool> shown = ShownRows(rows, limit);
  os << fmt::format(
      "CRITICAL PATH of {} {} (pid {}) from {:.6f} s to {:.6f} s: wall {} ms in {} segments "
      "(times from the trace start; a thread's consecutive on-CPU segments share a row)\n",
      t.tid, t.comm, PidText(t), static_cast<double>(path.from - trace_start) / 1e9,
      static_cast<double>(path.to - trace_start) / 1e9, Ms(wall), path.segments.size());
  if (path.lost_events > 0)
    os << fmt::format(
        "NOTE: {} lost-events records inside the interval; the chain may be wrong where a "
        "segment says so\n",
        path.lost_events);
  if (std::find(shown.begin(), shown.end(), false) != shown.end())
    os << fmt::format(
        "the {} longest of {} rows and every row that warns (lost events, an unknown waker "
        "or state), in time order; each \"...\" line holds the rows between (--limit 0: every "
        "row)\n",
        limit, rows.size());
  os << fmt::format("{:>12} {:>10} {:>8} {:<16} {:<22} {}\n", "START(s)", "DUR(ms)", "TID", "COMM",
                    "STATE", "NOTE");
  size_t folded = 0;
  int64_t folded_ns = 0;
  const auto fold = [&] {
    if (folded == 0) return;
    os << fmt::format("{:>12} {:>10} {:>8} {} row{}\n", "...", Ms(folded_ns), "", folded,
                      folded == 1 ? "" : "s");
    folded = 0;
    folded_ns = 0;
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    const PathRow& row = rows[i];
    const PathSegment& s = *row.first;
    if (!shown[i]) {
      ++folded;
      folded_ns += row.end - s.start;
      continue;
    }
    fold();
    os << fmt::format("{:>12.6f} {:>10} {:>8} {:<16} {:<22} {}\n",
                      static_cast<double>(s.start - trace_start) / 1e9, Ms(row.end - s.start),
                      s.thread->tid, s.thread->comm.substr(0, 16), RowState(row), Note(s));
  }
  fold();
  os << "\nON THE PATH (the wall time each thread explains, by microstate)\n";
  os << fmt::format("{:>8} {:>7} {:<16} {:>10} {:>6}  {}\n", "TID", "PID", "COMM", "TIME(ms)", "%",
                    "MICROSTATES (ms)");
  for (const OnPath& p : Totals(path)) {
    std::string states;
    for (size_t i = 0; i < kMicrostateCount; ++i)
      if (p.microstates[i] > 0)
        states += fmt::format("{}{} {}", states.empty() ? "" : ", ", kMicrostateNames[i].key,
                              Ms(p.microstates[i]));
    os << fmt::format("{:>8} {:>7} {:<16} {:>10} {:>6.1f}  {}\n", p.thread->tid, PidText(*p.thread),
                      p.thread->comm.substr(0, 16), Ms(p.time_ns),
                      wall > 0 ? 100.0 * static_cast<double>(p.time_ns) / wall : 0.0, states);
  }
}

nlohmann::json ThreadJson(const Thread& t) {
  return {
      {"tid", t.tid}, {"pid", PidKnown(t) ? nlohmann::json(t.tgid) : nullptr}, {"comm", t.comm}};
}

void RenderCsv(const CriticalPath& path, std::ostream& os) {
  os << "start_ns,dur_ns,tid,pid,comm,state,ends,source,lost_events\n";
  auto quote = [](std::string_view s) {
    if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  for (const PathSegment& s : path.segments)
    os << fmt::format("{},{},{},{},{},{},{},{},{}\n", s.start, s.end - s.start, s.thread->tid,
                      PidKnown(*s.thread) ? std::to_string(s.thread->tgid) : "",
                      quote(s.thread->comm), MicrostateKey(s.state), EndKey(s.ends),
                      quote(s.source), s.lost_events ? 1 : 0);
}

}  // namespace

nlohmann::json CriticalPathToJson(const CriticalPath& path) {
  nlohmann::json segments = nlohmann::json::array();
  for (const PathSegment& s : path.segments) {
    nlohmann::json j = ThreadJson(*s.thread);
    j["state"] = MicrostateKey(s.state);
    j["start_ns"] = s.start;
    j["dur_ns"] = s.end - s.start;
    if (s.ends != PathEnd::kNone) j["ends"] = EndKey(s.ends);
    if (!s.source.empty()) j["source"] = s.source;
    j["lost_events"] = s.lost_events;
    segments.push_back(std::move(j));
  }
  nlohmann::json threads = nlohmann::json::array();
  for (const OnPath& p : Totals(path)) {
    nlohmann::json j = ThreadJson(*p.thread);
    j["time_ns"] = p.time_ns;
    nlohmann::json m = nlohmann::json::object();
    for (size_t i = 0; i < kMicrostateCount; ++i)
      if (p.microstates[i] > 0) m[std::string(kMicrostateNames[i].key)] = p.microstates[i];
    j["microstates_ns"] = std::move(m);
    threads.push_back(std::move(j));
  }
  nlohmann::json j = ThreadJson(*path.target);
  j["from_ns"] = path.from;
  j["to_ns"] = path.to;
  j["wall_ns"] = path.to - path.from;
  j["lost_events"] = path.lost_events;
  j["segments"] = std::move(segments);
  j["threads"] = std::move(threads);
  return {{"critical_path", std::move(j)}};
}

void RenderCriticalPath(const CriticalPath& path, int64_t trace_start, std::string_view format,
                        std::ostream& os, size_t table_rows) {
  if (format == "table") {
    RenderTable(path, trace_start, table_rows, os);
  } else if (format == "json") {
    os << CriticalPathToJson(path).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
       << "\n";
  } else if (format == "csv") {
    RenderCsv(path, os);
  } else {
    throw Error(fmt::format("unknown format '{}' (valid: table, json, csv)", format),
                ExitCode::kUsage);
  }
}

}  // namespace cstool
