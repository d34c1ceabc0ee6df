#include "base/cpu_list.h"

#include <fmt/core.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>

#include "base/errors.h"

namespace cstool {
namespace {

constexpr int kMaxCpu = 8191;

int ParseCpu(std::string_view s, std::string_view whole) {
  int v = -1;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0 || v > kMaxCpu)
    throw Error(fmt::format("invalid CPU list '{}'", whole), ExitCode::kUsage);
  return v;
}

}  // namespace

std::vector<int> ParseCpuList(std::string_view text) {
  std::string_view t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.remove_suffix(1);
  if (t.empty()) throw Error("empty CPU list", ExitCode::kUsage);
  std::vector<int> cpus;
  while (!t.empty()) {
    size_t comma = t.find(',');
    std::string_view item = t.substr(0, comma);
    t = comma == std::string_view::npos ? std::string_view{} : t.substr(comma + 1);
    if (comma != std::string_view::npos && t.empty())
      throw Error(fmt::format("invalid CPU list '{}'", text), ExitCode::kUsage);
    size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      cpus.push_back(ParseCpu(item, text));
      continue;
    }
    int lo = ParseCpu(item.substr(0, dash), text);
    int hi = ParseCpu(item.substr(dash + 1), text);
    if (hi < lo) throw Error(fmt::format("invalid CPU range in '{}'", text), ExitCode::kUsage);
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string CpuMaskHex(const std::vector<int>& cpus) {
  int max = cpus.empty() ? 0 : *std::max_element(cpus.begin(), cpus.end());
  std::vector<uint32_t> words(static_cast<size_t>(max / 32 + 1), 0);
  for (int c : cpus) words[static_cast<size_t>(c / 32)] |= uint32_t{1} << (c % 32);
  std::string out = fmt::format("{:x}", words.back());
  for (size_t i = words.size() - 1; i-- > 0;) out += fmt::format(",{:08x}", words[i]);
  return out;
}

namespace {

std::vector<int> SysCpuList(const char* path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) throw Error(fmt::format("cannot read {}", path));
  return ParseCpuList(line);
}

}  // namespace

std::vector<int> OnlineCpus() { return SysCpuList("/sys/devices/system/cpu/online"); }

std::vector<int> PossibleCpus() { return SysCpuList("/sys/devices/system/cpu/possible"); }

int UsableCpuCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(CPU_COUNT(&set), 1);
}

}  // namespace cstool
