#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "base/cpu_list.h"
#include "base/errors.h"
#include "output/irq_output.h"
#include "output/noise_output.h"
#include "output/section_title.h"

namespace cstool {

std::unique_ptr<IrqOutput> MakeIrqJsonOutput(std::ostream& os);

namespace {

constexpr size_t kTopTasks = 10;
constexpr size_t kSourcesPerTask = 3;

std::string Us(int64_t ns) { return fmt::format("{:.1f}", static_cast<double>(ns) / 1000.0); }

std::string ErrorName(int err) {
  const char* name = strerrorname_np(err);
  return fmt::format("{} ({})", name ? name : std::to_string(err), std::strerror(err));
}

class IrqTableOutput : public IrqOutput {
 public:
  explicit IrqTableOutput(std::ostream& os) : os_(os) {}

  void RenderSummary(const IrqReport& r) override {
    RenderHeader(r);
    os_ << "\nINTERRUPT SOURCES (times in microseconds; per CPU: count/total)\n";
    std::string head = fmt::format("{:<28} {:<7} {:>8} {:>10} {:>8} {:>8}", "SOURCE", "KIND",
                                   "COUNT", "TOTAL_US", "MEAN_US", "MAX_US");
    for (int32_t c : r.cpus) head += fmt::format(" {:>16}", fmt::format("CPU{}", c));
    os_ << head << "\n";
    for (const IrqSourceSummary& s : r.sources) {
      std::string line =
          fmt::format("{:<28} {:<7} {:>8} {:>10} {:>8} {:>8}", s.name, IrqKindName(s.kind), s.count,
                      Us(s.time_ns), Us(s.MeanNs()), Us(s.max_ns));
      for (int32_t c : r.cpus) {
        auto it = s.per_cpu.find(c);
        IrqCount n = it == s.per_cpu.end() ? IrqCount{} : it->second;
        line += fmt::format(" {:>16}", fmt::format("{}/{}", n.count, Us(n.time_ns)));
      }
      os_ << line << "\n";
    }
    if (r.sources.empty()) os_ << "(no interrupts recorded)\n";
    os_ << fmt::format("idle CPUs were hit {} times ({} us) and ran {} softirqs ({} us)\n",
                       r.idle.count, Us(r.idle.time_ns), r.idle_softirq.count,
                       Us(r.idle_softirq.time_ns));

    os_ << "\n"
        << SectionTitle(fmt::format(
               "TASKS THAT LOST THE MOST TIME TO INTERRUPTS (top {}; LOST = IRQ + SOFTIRQ, nested "
               "counted once; sources: count/us)",
               kTopTasks));
    os_ << fmt::format("{:>7} {:>7} {:<16} {:>10} {:>10} {:>10} {:>7}  {}\n", "TID", "PID", "COMM",
                       "LOST_US", "IRQ_US", "SOFTIRQ_US", "COUNT", "TOP SOURCES");
    for (size_t i = 0; i < r.tasks.size() && i < kTopTasks; ++i) {
      const IrqTaskSummary& t = r.tasks[i];
      std::vector<std::pair<std::string, IrqCount>> src(t.sources.begin(), t.sources.end());
      std::stable_sort(src.begin(), src.end(), [](const auto& a, const auto& b) {
        return a.second.time_ns > b.second.time_ns;
      });
      std::string top;
      for (size_t k = 0; k < src.size() && k < kSourcesPerTask; ++k)
        top += fmt::format("{}{} {}/{}", top.empty() ? "" : ", ", src[k].first, src[k].second.count,
                           Us(src[k].second.time_ns));
      os_ << fmt::format("{:>7} {:>7} {:<16} {:>10} {:>10} {:>10} {:>7}  {}\n", t.tid, t.pid,
                         t.comm, Us(t.LostNs()), Us(t.irq_ns), Us(t.softirq_ns), t.count, top);
    }
    if (r.tasks.empty()) os_ << "(no task was interrupted)\n";
    // What the table leaves out, so that the tasks, the idle line and these add up to the
    // sources' time (the table is ordered by LOST: a task left out may have lost softirq
    // time alone).
    if (r.tasks.size() > kTopTasks) {
      IrqTaskSummary more;
      for (size_t i = kTopTasks; i < r.tasks.size(); ++i) {
        more.count += r.tasks[i].count;
        more.irq_ns += r.tasks[i].irq_ns;
        more.softirq_ns += r.tasks[i].softirq_ns;
      }
      os_ << fmt::format("{} more tasks were hit {} times (LOST_US {}, IRQ_US {}, SOFTIRQ_US {})\n",
                         r.tasks.size() - kTopTasks, more.count, Us(more.LostNs()), Us(more.irq_ns),
                         Us(more.softirq_ns));
    }
    if (r.recorder.count > 0 || r.recorder.LostNs() > 0)
      os_ << fmt::format(
          "cstool's own threads (not listed) were hit {} times (IRQ_US {}, SOFTIRQ_US {})\n",
          r.recorder.count, Us(r.recorder.irq_ns), Us(r.recorder.softirq_ns));
  }

  void RenderNoise(const IrqReport& r) override {
    RenderHeader(r);
    os_ << "\n";
    if (r.noise) RenderNoiseTable(*r.noise, os_);
  }

  void RenderAffinity(const std::vector<int>& cpus, const std::vector<IrqAffinity>& irqs) override {
    std::string head = fmt::format("{:>5}", "IRQ");
    for (int c : cpus) head += fmt::format(" {:>10}", fmt::format("CPU{}", c));
    head += fmt::format("  {:<10} {:<10} {:<24} {}", "AFFINITY", "EFFECTIVE", "CHIP", "NAME");
    os_ << head << "\n";
    for (const IrqAffinity& a : irqs) {
      std::string line = fmt::format("{:>5}", a.irq);
      for (size_t i = 0; i < cpus.size(); ++i)
        line += fmt::format(" {:>10}", i < a.counts.size() ? std::to_string(a.counts[i]) : "-");
      line += fmt::format("  {:<10} {:<10} {:<24} {}", a.affinity.empty() ? "-" : a.affinity,
                          a.effective.empty() ? "-" : a.effective, a.chip.empty() ? "-" : a.chip,
                          a.name);
      os_ << line << "\n";
    }
  }

  void RenderAffinityChange(const AffinityChangeResult& result) override {
    size_t moved = 0, refused = 0;
    os_ << fmt::format("{:>5}  {:<11} {:<10} {:<10} {:<10} {:<10} {}\n", "IRQ", "OUTCOME", "BEFORE",
                       "REQUESTED", "AFTER", "EFFECTIVE", "NAME / REASON");
    for (const AffinityChange& c : result.changes) {
      if (c.outcome == AffinityOutcome::kMoved) ++moved;
      if (c.outcome == AffinityOutcome::kRefused || c.outcome == AffinityOutcome::kNoSuchIrq)
        ++refused;
      // An IRQ that does not exist has no name: the reason alone.
      std::string why = c.error == 0     ? c.name
                        : c.name.empty() ? ErrorName(c.error)
                                         : fmt::format("{}: {}", c.name, ErrorName(c.error));
      os_ << fmt::format("{:>5}  {:<11} {:<10} {:<10} {:<10} {:<10} {}\n", c.irq,
                         AffinityOutcomeName(c.outcome), c.before.empty() ? "-" : c.before,
                         c.requested, c.after.empty() ? "-" : c.after,
                         c.effective.empty() ? "-" : c.effective, why);
    }
    os_ << fmt::format("{} moved, {} refused, {} unchanged\n", moved, refused,
                       result.changes.size() - moved - refused);
    if (!result.restore_command.empty()) os_ << "to restore: " << result.restore_command << "\n";
  }

 private:
  // What was recorded: events, CPUs, duration, lost events, the raw trace, notes.
  void RenderHeader(const IrqReport& r) {
    std::string lost;
    for (auto [cpu, n] : r.lost_events)
      if (n > 0) lost += fmt::format("{}cpu{} {}", lost.empty() ? "" : ", ", cpu, n);
    std::vector<int> cpus(r.cpus.begin(), r.cpus.end());
    os_ << fmt::format("{} events on CPU {} over {:.3f} s; lost events: {}\n", r.events,
                       FormatCpuList(cpus), static_cast<double>(r.duration_ns) / 1e9,
                       lost.empty() ? "none" : lost);
    if (!r.file.empty()) os_ << fmt::format("raw trace: {} (see cstool report)\n", r.file);
    for (const std::string& n : r.notes) os_ << "note: " << n << "\n";
  }

  std::ostream& os_;
};

}  // namespace

std::unique_ptr<IrqOutput> MakeIrqOutput(std::string_view format, std::ostream& os) {
  if (format == "table") return std::make_unique<IrqTableOutput>(os);
  if (format == "json") return MakeIrqJsonOutput(os);
  throw Error(fmt::format("unknown format '{}' (expected table or json)", format),
              ExitCode::kUsage);
}

}  // namespace cstool
