#include "recording/flight_window.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "format/trace_file_format.h"
#include "recording/page_file.h"

namespace cstool {
namespace {

constexpr uint64_t kCommitSizeMask = (uint64_t{1} << 30) - 1;

}  // namespace

FlightWindow::FlightWindow(const std::vector<int>& cpus, int64_t window_ns, int64_t traced_from)
    : window_ns_(window_ns), traced_from_(traced_from) {
  for (int c : cpus) cpus_.push_back(Cpu{.cpu = c});
}

FlightWindow::Cpu* FlightWindow::Find(int cpu) {
  for (Cpu& c : cpus_)
    if (c.cpu == cpu) return &c;
  return nullptr;
}

const FlightWindow::Cpu* FlightWindow::Find(int cpu) const {
  for (const Cpu& c : cpus_)
    if (c.cpu == cpu) return &c;
  return nullptr;
}

void FlightWindow::Add(int cpu, std::span<const uint8_t> page, int64_t last_ts, uint32_t events) {
  Cpu* c = Find(cpu);
  if (c == nullptr || page.size() < 16) return;
  Page p;
  p.bytes.assign(page.begin(), page.end());
  p.last_ts = last_ts;
  p.events = events;
  // The commit field's low 32 bits carry the flags on either kernel word size.
  uint32_t commit = 0;
  std::memcpy(&commit, p.bytes.data() + 8, sizeof(commit));
  if (commit & tracefile::kPageMissedEvents) {
    const uint32_t size = commit & static_cast<uint32_t>(kCommitSizeMask);
    uint64_t count = 0;
    if ((commit & tracefile::kPageMissedStored) && 16 + size + sizeof(count) <= p.bytes.size())
      std::memcpy(&count, p.bytes.data() + 16 + size, sizeof(count));
    c->overwritten += count;
    uint64_t page_ts = 0;
    std::memcpy(&page_ts, p.bytes.data(), sizeof(page_ts));
    c->history_from = std::max(c->history_from, static_cast<int64_t>(page_ts));
    commit &= ~(tracefile::kPageMissedEvents | tracefile::kPageMissedStored);
    std::memcpy(p.bytes.data() + 8, &commit, sizeof(commit));
  }
  c->bytes += p.bytes.size();
  c->pages.push_back(std::move(p));
}

void FlightWindow::Trim(int64_t to) {
  for (Cpu& c : cpus_)
    while (!c.pages.empty() && c.pages.front().last_ts < to - window_ns_) {
      c.bytes -= c.pages.front().bytes.size();
      c.pages.pop_front();
    }
}

int64_t FlightWindow::WindowStart(int64_t to) const {
  int64_t start = std::max(to - window_ns_, traced_from_);
  for (const Cpu& c : cpus_) start = std::max(start, c.history_from);
  return start;
}

bool FlightWindow::overwrote() const {
  return std::any_of(cpus_.begin(), cpus_.end(),
                     [](const Cpu& c) { return c.history_from != INT64_MIN; });
}

uint64_t FlightWindow::overwritten_events() const {
  uint64_t n = 0;
  for (const Cpu& c : cpus_) n += c.overwritten;
  return n;
}

size_t FlightWindow::bytes() const {
  size_t n = 0;
  for (const Cpu& c : cpus_) n += c.bytes;
  return n;
}

CpuRecordStats FlightWindow::WritePages(int cpu, const std::filesystem::path& file,
                                        const std::string& compression) const {
  CpuRecordStats s;
  s.cpu = cpu;
  PageFileWriter out(file, compression, /*append=*/false);
  const Cpu* c = Find(cpu);
  if (c == nullptr) return s;
  for (const Page& p : c->pages) {
    uint64_t commit = 0;
    std::memcpy(&commit, p.bytes.data() + 8, sizeof(long));
    ++s.pages;
    s.events += p.events;
    s.bytes += commit & kCommitSizeMask;
    if (commit & tracefile::kPageMissedEvents) ++s.lost_pages;
    out.Add(std::string_view(reinterpret_cast<const char*>(p.bytes.data()), p.bytes.size()));
  }
  out.Finish();
  return s;
}

}  // namespace cstool
