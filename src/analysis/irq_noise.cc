#include "analysis/irq_noise.h"

#include <algorithm>
#include <set>
#include <utility>

#include "base/enum_names.h"

namespace cstool {

constexpr EnumNames<NoiseSource, kNoiseSources> kNoiseSourceNames{
    {"nmi", "irq", "softirq", "thread"}};
static_assert(static_cast<size_t>(NoiseSource::kThread) + 1 == kNoiseSourceNames.size());

std::string_view NoiseSourceName(NoiseSource source) { return kNoiseSourceNames(source); }

double CpuNoise::AvailablePercent() const {
  if (runtime_ns <= 0) return 100.0;
  return 100.0 * static_cast<double>(runtime_ns - noise_ns) / static_cast<double>(runtime_ns);
}

namespace {

struct Edge {
  int64_t ts;
  bool start;
  uint32_t span;
};

// Noise time per period of the window.
class Periods {
 public:
  explicit Periods(const NoiseWindow& w) : start_(w.start) {
    const int64_t length = std::max<int64_t>(0, w.end - w.start);
    period_ = w.period_ns > 0 && w.period_ns < length ? w.period_ns : std::max<int64_t>(length, 1);
    count_ = std::max<int64_t>(1, (length + period_ - 1) / period_);
  }
  // Adds the noise [a, b). Calls come in time order, so only the latest period's sum is
  // kept: memory and time do not grow with the number of periods (--period 1e-9 made
  // one counter per nanosecond).
  void Add(int64_t a, int64_t b) {
    if (a >= b) return;
    const int64_t first = Index(a), last = Index(b - 1);
    if (first != current_) {
      max_ = std::max(max_, sum_);
      current_ = first;
      sum_ = 0;
    }
    if (first == last) {
      sum_ += b - a;
      return;
    }
    max_ = std::max(max_, sum_ + Begin(first + 1) - a);
    if (last > first + 1) max_ = std::max(max_, period_);  // periods wholly noise
    current_ = last;
    sum_ = b - Begin(last);
  }
  // The longest piece of [a, b) inside one period.
  int64_t LongestPiece(int64_t a, int64_t b) const {
    if (a >= b) return 0;
    const int64_t first = Index(a), last = Index(b - 1);
    if (first == last) return b - a;
    int64_t longest = std::max(Begin(first + 1) - a, b - Begin(last));
    if (last > first + 1) longest = std::max(longest, period_);
    return longest;
  }
  int64_t count() const { return count_; }
  int64_t Max() const { return std::max(max_, sum_); }

 private:
  int64_t Index(int64_t t) const { return (t - start_) / period_; }
  int64_t Begin(int64_t k) const { return start_ + k * period_; }

  int64_t start_;
  int64_t period_ = 1;
  int64_t count_ = 1;
  int64_t current_ = 0;  // the period sum_ is of
  int64_t sum_ = 0;
  int64_t max_ = 0;
};

}  // namespace

CpuNoise MeasureCpuNoise(int32_t cpu, std::vector<NoiseSpan> spans, const NoiseWindow& window) {
  CpuNoise out;
  out.cpu = cpu;
  out.runtime_ns = std::max<int64_t>(0, window.end - window.start);
  Periods periods(window);
  out.periods = periods.count();

  std::vector<Edge> edges;
  edges.reserve(spans.size() * 2);
  for (uint32_t i = 0; i < spans.size(); ++i) {
    spans[i].end = std::max(spans[i].end, spans[i].start);
    edges.push_back({spans[i].start, true, i});
    edges.push_back({spans[i].end, false, i});
  }
  // Starts before ends at the same time, so touching spans make one stretch of noise.
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.start != b.start) return a.start;
    return a.span < b.span;
  });

  auto clip = [&](int64_t a, int64_t b) {
    return std::pair{std::max(a, window.start), std::min(b, window.end)};
  };
  // Open spans per source, innermost (latest start) last.
  std::array<std::set<std::pair<int64_t, uint32_t>>, kNoiseSources> open;
  std::vector<int64_t> own(spans.size(), 0);
  size_t active = 0;
  int64_t stretch_start = 0;
  int64_t prev = 0;
  for (const Edge& e : edges) {
    if (active > 0 && e.ts > prev) {
      // [prev, e.ts) belongs to the innermost span of the highest-precedence source.
      for (const auto& set : open) {
        if (set.empty()) continue;
        auto [a, b] = clip(prev, e.ts);
        if (a < b) {
          own[set.rbegin()->second] += b - a;
          periods.Add(a, b);
          out.noise_ns += b - a;
        }
        break;
      }
    }
    prev = e.ts;
    const NoiseSpan& s = spans[e.span];
    auto& set = open[static_cast<size_t>(s.source)];
    if (e.start) {
      if (active++ == 0) stretch_start = e.ts;
      set.emplace(s.start, e.span);
    } else {
      set.erase({s.start, e.span});
      if (--active == 0) {
        auto [a, b] = clip(stretch_start, e.ts);
        out.max_single_ns = std::max(out.max_single_ns, periods.LongestPiece(a, b));
      }
    }
  }
  out.max_noise_ns = out.noise_ns > 0 ? periods.Max() : 0;

  for (uint32_t i = 0; i < spans.size(); ++i) {
    const NoiseSpan& s = spans[i];
    const bool counted = s.start >= window.start && s.start < window.end;
    if (!counted && own[i] == 0) continue;
    NoiseStats& st = out.sources[static_cast<size_t>(s.source)];
    st.count += counted;
    st.time_ns += own[i];
    st.max_single_ns = std::max(st.max_single_ns, own[i]);
    if (s.name) {
      NoiseNameStats& n = out.names[*s.name];
      n.source = s.source;
      n.count += counted;
      n.time_ns += own[i];
    }
  }
  return out;
}

}  // namespace cstool
