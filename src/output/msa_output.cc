#include "output/msa_output.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cmath>

#include "base/errors.h"
#include "counters/derived_metrics.h"

namespace cstool {
namespace {

constexpr std::string_view kClearScreen = "\033[H\033[2J";

// Local wall-clock time of a trace timestamp, "HH:MM:SS.mmm".
std::string ClockTime(int64_t mono_ns, int64_t wall_offset_ns) {
  int64_t wall = mono_ns + wall_offset_ns;
  time_t secs = static_cast<time_t>(wall / 1000000000);
  struct tm tm {};
  localtime_r(&secs, &tm);
  return fmt::format("{:02}:{:02}:{:02}.{:03}", tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (wall % 1000000000) / 1000000);
}

double Round2(double v) { return std::round(v * 100.0) / 100.0; }

// The row's counters by name, whether they were scaled, and the metrics derived from them.
void AddCountersJson(nlohmann::json& j, const MsaRow& r, const std::vector<std::string>& names) {
  if (names.empty() || r.counters.size() != names.size()) return;
  nlohmann::json counters = nlohmann::json::object();
  for (size_t i = 0; i < names.size(); ++i) counters[names[i]] = r.counters[i];
  j["counters"] = counters;
  j["counters_scaled"] = r.counters_scaled;
  nlohmann::json derived = nlohmann::json::object();
  for (const auto& [key, v] : DerivedMetrics(names, r.counters)) derived[key] = v;
  if (!derived.empty()) j["derived"] = derived;
}

// A counter in a table cell: exact up to 7 digits, then M/G (a clock in ms); '*' marks a
// scaled value.
std::string FormatCount(const std::string& counter, uint64_t v, bool scaled) {
  if (CountsNanoseconds(counter) || v < 10000000) return TotalText(counter, v, scaled, 2);
  std::string s;
  if (v < 10000000000ULL)
    s = fmt::format("{:.1f}M", v / 1e6);
  else
    s = fmt::format("{:.1f}G", v / 1e9);
  return scaled ? s + "*" : s;
}

size_t CounterWidth(const std::string& counter) {
  return std::max<size_t>(CounterTitle(counter).size(), 8);
}

nlohmann::json RowJson(const MsaRow& r, bool per_process) {
  nlohmann::json shares = nlohmann::json::object();
  nlohmann::json ns = nlohmann::json::object();
  for (size_t i = 0; i < kMicrostateCount; ++i) {
    shares[std::string(kMicrostateNames[i].key)] = Round2(r.shares[i]);
    ns[std::string(kMicrostateNames[i].key)] = r.ns[i];
  }
  nlohmann::json causes = nlohmann::json::object();
  for (const auto& [label, n] : r.causes) causes[label] = n;
  nlohmann::json j;
  if (!per_process) j["tid"] = r.tid;
  j["pid"] = r.pid;
  j["comm"] = r.comm;
  if (per_process) j["threads"] = r.threads;
  j["accounted_ns"] = r.accounted_ns;
  j["shares"] = shares;
  j["microstates_ns"] = ns;
  j["switches"] = {{"voluntary", r.voluntary}, {"involuntary", r.involuntary}, {"causes", causes}};
  j["syscalls"] = {{"count", r.syscalls}};
  j["top_cause"] = r.TopCause();
  return j;
}

nlohmann::json KernelJson(const KernelSwitchSnapshot& k) {
  nlohmann::json threads = nlohmann::json::array();
  for (const auto& c : k.threads)
    threads.push_back({{"tid", c.tid}, {"nvcsw", c.nvcsw}, {"nivcsw", c.nivcsw}});
  return {{"ts_ns", k.ts}, {"exact", k.exact}, {"threads", threads}};
}

// -c EVENT:ebs=N: the frame's samples, PMCTrack's EBS rows ("nsample pid event pmc0
// pmc1 ..."), with the thread, the time into the frame, the CPU and the instruction
// pointer; the counters' values are exact (PMCTrack's rows are) and cumulative since
// msa began counting the thread.
std::string SamplesTable(const MsaFrame& f) {
  std::string out = fmt::format(
      "  samples of {} every {} events: {} in this {}, {} lost (ring buffer full), {} "
      "throttle(s) (perf_event_max_sample_rate)\n",
      f.ebs_event, f.ebs_period, f.ebs_samples,
      f.kind == MsaFrame::Kind::kTotal ? "run" : "interval", f.ebs_lost, f.ebs_throttles);
  if (f.samples.empty()) return out;
  out += fmt::format("  {:>7} {:>7} {:>7} {:<16} {:>9} {:>3} {:>18}", "NSAMPLE", "PID", "TID",
                     "EVENT", "AT(ms)", "CPU", "IP");
  const size_t columns = f.samples.front().values.size();
  for (size_t i = 0; i < columns && i < f.counter_names.size(); ++i)
    out +=
        fmt::format(" {:>{}}", CounterTitle(f.counter_names[i]), CounterWidth(f.counter_names[i]));
  out += "\n";
  for (const MsaSample& s : f.samples) {
    out += fmt::format("  {:>7} {:>7} {:>7} {:<16.16} {:>9.3f} {:>3} {:>#18x}", s.n, s.pid, s.tid,
                       f.ebs_event, static_cast<double>(s.ts - f.start_ns) / 1e6, s.cpu, s.ip);
    for (size_t i = 0; i < s.values.size() && i < f.counter_names.size(); ++i)
      out += fmt::format(" {:>{}}", TotalText(f.counter_names[i], s.values[i], s.scaled, 2),
                         CounterWidth(f.counter_names[i]));
    out += "\n";
  }
  return out;
}

nlohmann::json SamplesJson(const MsaFrame& f) {
  nlohmann::json samples = nlohmann::json::array();
  for (const MsaSample& s : f.samples) {
    nlohmann::json values = nlohmann::json::object();
    for (size_t i = 0; i < s.values.size() && i < f.counter_names.size(); ++i)
      values[f.counter_names[i]] = s.values[i];
    samples.push_back({{"nsample", s.n},
                       {"pid", s.pid},
                       {"tid", s.tid},
                       {"event", f.ebs_event},
                       {"ts_ns", s.ts},
                       {"cpu", s.cpu},
                       {"ip", fmt::format("{:#x}", s.ip)},
                       {"values", values},
                       {"scaled", s.scaled}});
  }
  return samples;
}

class JsonMsaOutput : public MsaOutput {
 public:
  explicit JsonMsaOutput(std::ostream& os) : os_(os) {}
  void Render(const MsaFrame& frame) override {
    os_ << MsaFrameToJson(frame).dump() << "\n";
    os_.flush();
  }

 private:
  std::ostream& os_;
};

class TableMsaOutput : public MsaOutput {
 public:
  TableMsaOutput(std::ostream& os, bool in_place) : os_(os), in_place_(in_place) {}
  void Render(const MsaFrame& f) override {
    std::string out;
    const double secs = (f.end_ns - f.start_ns) / 1e9;
    const std::string who = fmt::format("pid {} ({})", f.pid, f.comm);
    const std::string lost =
        f.lost_events > 0 ? fmt::format("  LOST {} EVENTS", f.lost_events) : std::string();
    if (f.kind == MsaFrame::Kind::kTotal) {
      if (in_place_) out += "\n";
      out += fmt::format("== {} total over {:.3f} s, {} interval(s), {}{}{} ==\n",
                         ClockTime(f.end_ns, f.wall_offset_ns), secs, f.index, who,
                         f.end_reason.empty() ? "" : ": ", f.end_reason);
    } else if (in_place_) {
      out += kClearScreen;
      out += fmt::format("cstool msa  {}  interval {}  {}  {:.3f} s{}\n", who, f.index,
                         ClockTime(f.end_ns, f.wall_offset_ns), secs, lost);
      out += "shares in % of each row's accounted time; Ctrl-C to stop\n\n";
    } else {
      out += fmt::format("== {} interval {} ({:.3f} s) {}{} ==\n",
                         ClockTime(f.end_ns, f.wall_offset_ns), f.index, secs, who, lost);
    }
    out += fmt::format("{:>7} {:>7} {:<15}", "PID", f.per_process ? "NLWP" : "TID", "COMM");
    for (const MicrostateNames& n : kMicrostateNames) out += fmt::format(" {:>4}", n.column);
    out += fmt::format(" {:>6} {:>6} {:>7}", "VCX", "ICX", "SCL");
    for (const std::string& n : f.counter_names)
      out += fmt::format(" {:>{}}", CounterTitle(n), CounterWidth(n));
    out += " CAUSE\n";
    bool scaled = false;
    for (const MsaRow& r : f.rows) {
      const int64_t second = f.per_process ? int64_t{r.threads} : int64_t{r.tid};
      out += fmt::format("{:>7} {:>7} {:<15.15}", r.pid, second, r.comm);
      for (double s : r.shares) out += fmt::format(" {:>4}", FormatShare(s));
      out += fmt::format(" {:>6} {:>6} {:>7}", r.voluntary, r.involuntary, r.syscalls);
      for (size_t i = 0; i < f.counter_names.size(); ++i)
        out += fmt::format(" {:>{}}",
                           i < r.counters.size()
                               ? FormatCount(f.counter_names[i], r.counters[i], r.counters_scaled)
                               : std::string("-"),
                           CounterWidth(f.counter_names[i]));
      scaled = scaled || r.counters_scaled;
      out += fmt::format(" {}\n", r.TopCause());
    }
    if (f.energy_uj)
      out += fmt::format("  energy: {:.3f} J (package, whole machine)\n", *f.energy_uj / 1e6);
    if (scaled) out += "  * scaled: the counters were multiplexed, the value is an estimate\n";
    if (f.ebs_period != 0) out += SamplesTable(f);
    if (f.rows.empty()) out += "  (no activity of the target in this interval)\n";
    if (!in_place_ && f.kind == MsaFrame::Kind::kInterval) out += "\n";
    os_ << out;
    os_.flush();
  }

 private:
  std::ostream& os_;
  bool in_place_;
};

}  // namespace

std::string FormatShare(double p) {
  if (p >= 99.95) return "100";
  if (p >= 9.95) return fmt::format("{:.0f}", p);
  return fmt::format("{:.1f}", p < 0 ? 0.0 : p);
}

nlohmann::json MsaFrameToJson(const MsaFrame& f) {
  nlohmann::json rows = nlohmann::json::array();
  for (const MsaRow& r : f.rows) {
    rows.push_back(RowJson(r, f.per_process));
    AddCountersJson(rows.back(), r, f.counter_names);
  }
  nlohmann::json j;
  j["type"] = f.kind == MsaFrame::Kind::kTotal ? "total" : "interval";
  j["interval"] = f.index;
  j["pid"] = f.pid;
  j["comm"] = f.comm;
  j["start_ns"] = f.start_ns;
  j["end_ns"] = f.end_ns;
  j["duration_ns"] = f.end_ns - f.start_ns;
  j["end_realtime_ns"] = f.end_ns + f.wall_offset_ns;
  j["lost_events"] = f.lost_events;
  j[f.per_process ? "processes" : "threads"] = rows;
  if (f.kernel_attach) j["kernel_attach"] = KernelJson(*f.kernel_attach);
  if (f.kernel_end) j["kernel_end"] = KernelJson(*f.kernel_end);
  if (!f.end_reason.empty()) j["end_reason"] = f.end_reason;
  if (!f.counter_names.empty()) {
    j["counter_names"] = f.counter_names;
    j["counters_read_ns"] = f.counters_ts;
  }
  if (f.energy_uj) j["energy_uj"] = *f.energy_uj;
  if (f.ebs_period != 0) {
    j["ebs"] = {{"event", f.ebs_event},
                {"period", f.ebs_period},
                {"samples", f.ebs_samples},
                {"lost", f.ebs_lost},
                {"throttles", f.ebs_throttles}};
    j["samples"] = SamplesJson(f);
  }
  return j;
}

std::unique_ptr<MsaOutput> MakeMsaOutput(std::string_view format, std::ostream& os, bool in_place) {
  if (format == "table") return std::make_unique<TableMsaOutput>(os, in_place);
  if (format == "json") return std::make_unique<JsonMsaOutput>(os);
  throw Error(fmt::format("unknown format '{}' (expected table or json)", format),
              ExitCode::kUsage);
}

}  // namespace cstool
