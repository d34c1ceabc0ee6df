#include "interrupts/irq_affinity.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "base/cpu_list.h"
#include "base/enum_names.h"
#include "base/errors.h"
#include "base/unique_fd.h"
#include "interrupts/proc_interrupts.h"

namespace cstool {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxIrq = 1 << 20;

int ParseIrq(std::string_view s, std::string_view whole) {
  int v = -1;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0 || v > kMaxIrq)
    throw Error(fmt::format("invalid IRQ list '{}' (expected e.g. 24 or 24,30-33)", whole),
                ExitCode::kUsage);
  return v;
}

std::string ReadLine(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

// Writes `text` to a /proc file in one write(2); returns 0 or the errno.
int WriteProcFile(const fs::path& p, const std::string& text) {
  UniqueFd fd(::open(p.c_str(), O_WRONLY | O_CLOEXEC));
  if (fd.get() < 0) return errno;
  ssize_t n = ::write(fd.get(), text.data(), text.size());
  if (n < 0) return errno;
  if (static_cast<size_t>(n) != text.size()) return EIO;
  return 0;
}

}  // namespace

std::vector<int> ParseIrqList(std::string_view text) {
  std::string_view t = text;
  if (t.empty()) throw Error("empty IRQ list", ExitCode::kUsage);
  std::set<int> irqs;
  while (true) {
    size_t comma = t.find(',');
    std::string_view item = t.substr(0, comma);
    size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      irqs.insert(ParseIrq(item, text));
    } else {
      int lo = ParseIrq(item.substr(0, dash), text);
      int hi = ParseIrq(item.substr(dash + 1), text);
      if (hi < lo) throw Error(fmt::format("invalid IRQ range in '{}'", text), ExitCode::kUsage);
      for (int i = lo; i <= hi; ++i) irqs.insert(i);
    }
    if (comma == std::string_view::npos) break;
    t = t.substr(comma + 1);
  }
  return {irqs.begin(), irqs.end()};
}

AffinityRequest ParseAffinityRequest(std::string_view text) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
    throw Error(
        fmt::format("invalid affinity '{}' (expected IRQ=CPUS or all=CPUS, e.g. 24=1)", text),
        ExitCode::kUsage);
  AffinityRequest r;
  std::string_view lhs = text.substr(0, eq);
  if (lhs == "all")
    r.all = true;
  else
    r.irqs = ParseIrqList(lhs);
  r.cpus = ParseCpuList(text.substr(eq + 1));
  return r;
}

std::string FormatIrqList(const std::vector<int>& irqs) { return FormatCpuList(irqs); }

std::vector<IrqAffinity> ReadIrqAffinities(const std::string& proc) {
  const fs::path irq_dir = fs::path(proc) / "irq";
  std::map<int, IrqAffinity> by_irq;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(irq_dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    IrqAffinity a;
    a.irq = std::atoi(name.c_str());
    a.affinity = ReadLine(entry.path() / "smp_affinity_list");
    a.effective = ReadLine(entry.path() / "effective_affinity_list");
    by_irq[a.irq] = std::move(a);
  }
  if (ec) throw Error(fmt::format("cannot list {}: {}", irq_dir.string(), ec.message()));
  ProcInterrupts pi;
  try {
    pi = ReadProcInterrupts((fs::path(proc) / "interrupts").string());
  } catch (const Error&) {
    // Names are a convenience; the affinities above are what was asked for.
  }
  for (const ProcInterruptsRow& row : pi.rows) {
    auto it = by_irq.find(row.irq);
    if (row.irq < 0 || it == by_irq.end()) continue;
    it->second.chip = row.chip;
    it->second.name = row.name;
    it->second.counts = row.counts;
  }
  std::vector<IrqAffinity> out;
  out.reserve(by_irq.size());
  for (auto& [irq, a] : by_irq) out.push_back(std::move(a));
  return out;
}

AffinityChangeResult ApplyAffinity(const std::vector<AffinityRequest>& requests,
                                   const std::string& proc) {
  std::vector<IrqAffinity> existing = ReadIrqAffinities(proc);
  std::map<int, const IrqAffinity*> by_irq;
  for (const IrqAffinity& a : existing) by_irq[a.irq] = &a;
  // The last request naming an IRQ decides its CPUs.
  std::map<int, std::vector<int>> target;
  for (const AffinityRequest& r : requests) {
    if (r.all)
      for (const IrqAffinity& a : existing) target[a.irq] = r.cpus;
    for (int irq : r.irqs) target[irq] = r.cpus;
  }
  AffinityChangeResult result;
  const fs::path irq_dir = fs::path(proc) / "irq";
  for (const auto& [irq, cpus] : target) {
    AffinityChange c;
    c.irq = irq;
    c.requested = FormatCpuList(cpus);
    auto it = by_irq.find(irq);
    if (it == by_irq.end()) {
      c.outcome = AffinityOutcome::kNoSuchIrq;
      c.error = ENOENT;
      result.changes.push_back(std::move(c));
      continue;
    }
    c.name = it->second->name;
    c.before = it->second->affinity;
    const fs::path dir = irq_dir / std::to_string(irq);
    int err = WriteProcFile(dir / "smp_affinity_list", c.requested + "\n");
    c.after = ReadLine(dir / "smp_affinity_list");
    c.effective = ReadLine(dir / "effective_affinity_list");
    if (err != 0) {
      c.outcome = AffinityOutcome::kRefused;
      c.error = err;
    } else {
      c.outcome = c.before == c.after ? AffinityOutcome::kUnchanged : AffinityOutcome::kMoved;
    }
    result.changes.push_back(std::move(c));
  }
  result.restore_command = RestoreCommand(result.changes);
  return result;
}

std::string RestoreCommand(const std::vector<AffinityChange>& changes) {
  std::map<std::string, std::vector<int>> by_before;
  for (const AffinityChange& c : changes)
    if (c.outcome == AffinityOutcome::kMoved && !c.before.empty())
      by_before[c.before].push_back(c.irq);
  if (by_before.empty()) return {};
  std::string cmd = "cstool irq --affinity";
  for (auto& [before, irqs] : by_before) {
    std::sort(irqs.begin(), irqs.end());
    cmd += fmt::format(" {}={}", FormatIrqList(irqs), before);
  }
  return cmd;
}

constexpr EnumNames<AffinityOutcome, 4> kAffinityOutcomeNames{
    {"moved", "unchanged", "refused", "no-such-irq"}};
static_assert(static_cast<size_t>(AffinityOutcome::kNoSuchIrq) + 1 == kAffinityOutcomeNames.size());

std::string_view AffinityOutcomeName(AffinityOutcome outcome) {
  return kAffinityOutcomeNames(outcome);
}

}  // namespace cstool
