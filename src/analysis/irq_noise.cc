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
    noise_.assign(static_cast<size_t>(std::max<int64_t>(1, (length + period_ - 1) / period_)), 0);
  }
  void Add(int64_t a, int64_t b) {
    while (a < b) {
      const int64_t k = (a - start_) / period_;
      const int64_t e = std::min(b, start_ + (k + 1) * period_);
      noise_[static_cast<size_t>(k)] += e - a;
      a = e;
    }
  }
  // The longest piece of [a, b) inside one period.
  int64_t LongestPiece(int64_t a, int64_t b) const {
    int64_t longest = 0;
    while (a < b) {
      const int64_t e = std::min(b, start_ + ((a - start_) / period_ + 1) * period_);
      longest = std::max(longest, e - a);
      a = e;
    }
    return longest;
  }
  int64_t count() const { return static_cast<int64_t>(noise_.size()); }
  int64_t Max() const { return *std::max_element(noise_.begin(), noise_.end()); }

 private:
  int64_t start_;
  int64_t period_;
  std::vector<int64_t> noise_;
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
