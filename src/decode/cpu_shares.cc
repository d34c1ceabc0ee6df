#include "decode/cpu_shares.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace cstool {

bool CpusCanBeShared(const TraceFileReader& reader) {
  return reader.ReadsCpusInParallel() && reader.cpus() > 1;
}

CpuShares ShareCpus(const TraceFileReader& reader, int shares) {
  const int cpus = reader.cpus();
  const size_t n = static_cast<size_t>(std::max(1, std::min(shares, cpus)));
  std::vector<uint64_t> bytes(static_cast<size_t>(std::max(cpus, 0)));
  uint64_t total = 0;
  for (int cpu = 0; cpu < cpus; ++cpu)
    total += bytes[static_cast<size_t>(cpu)] = reader.CpuDataBytes(cpu);
  std::vector<int> order(bytes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return bytes[static_cast<size_t>(a)] > bytes[static_cast<size_t>(b)];
  });
  CpuShares out;
  out.cpus.resize(n);
  std::vector<uint64_t> held(n, 0);
  for (int cpu : order) {
    size_t to = 0;
    for (size_t s = 1; s < n; ++s)
      if (held[s] < held[to] || (held[s] == held[to] && out.cpus[s].size() < out.cpus[to].size()))
        to = s;
    held[to] += bytes[static_cast<size_t>(cpu)];
    out.cpus[to].push_back(cpu);
  }
  for (auto& list : out.cpus) std::sort(list.begin(), list.end());
  out.bytes = held;
  size_t largest = 0;
  for (size_t s = 1; s < n; ++s)
    if (total != 0 ? held[s] > held[largest] : out.cpus[s].size() > out.cpus[largest].size())
      largest = s;
  if (total != 0)
    out.largest_fraction = static_cast<double>(held[largest]) / static_cast<double>(total);
  else if (cpus > 0)
    out.largest_fraction =
        static_cast<double>(out.cpus[largest].size()) / static_cast<double>(cpus);
  return out;
}

}  // namespace cstool
