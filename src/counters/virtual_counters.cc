#include "counters/virtual_counters.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "base/errors.h"
#include "base/split_list.h"

namespace cstool {
namespace {

namespace fs = std::filesystem;
constexpr const char* kPowercap = "/sys/class/powercap";

std::string FirstLine(const fs::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}

// Top-level RAPL zones ("intel-rapl:0", not the "intel-rapl:0:1" subzones).
std::vector<fs::path> PackageZones() {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(kPowercap, ec)) {
    const std::string n = d.path().filename().string();
    if (n.rfind("intel-rapl:", 0) == 0 && n.find(':', 11) == std::string::npos &&
        fs::exists(d.path() / "energy_uj"))
      out.push_back(d.path());
  }
  return out;
}

std::string PowercapContents() {
  std::error_code ec;
  if (!fs::exists(kPowercap, ec)) return fmt::format("{} is absent", kPowercap);
  std::vector<std::string> names;
  for (const auto& d : fs::directory_iterator(kPowercap, ec))
    names.push_back(d.path().filename().string());
  if (names.empty()) return fmt::format("{} is empty", kPowercap);
  return fmt::format("{} has {}", kPowercap, fmt::join(names, ", "));
}

}  // namespace

std::vector<VirtualCounter> ParseVirtualList(std::string_view list) {
  std::vector<VirtualCounter> out;
  std::set<std::string> seen;
  for (std::string_view item : SplitList(list)) {
    std::string name(item);
    VirtualCounter v{name};
    if (name == "read-bytes") {
      v.kind = VirtualCounter::Kind::kReadBytes;
    } else if (name == "write-bytes") {
      v.kind = VirtualCounter::Kind::kWriteBytes;
    } else if (name == "energy") {
      v.kind = VirtualCounter::Kind::kEnergy;
      if (PackageZones().empty())
        throw Error(fmt::format("virtual counter 'energy' needs RAPL energy counters in powercap, "
                                "and {}; per-thread virtual counters that work here: read-bytes, "
                                "write-bytes",
                                PowercapContents()),
                    ExitCode::kUsage);
    } else {
      // `record` takes the per-thread ones only: say which is which.
      throw Error(fmt::format("unknown virtual counter '{}' (expected read-bytes or write-bytes, "
                              "per thread; or energy, for the whole machine, with `cstool msa`)",
                              name),
                  ExitCode::kUsage);
    }
    if (!seen.insert(name).second)
      throw Error(fmt::format("virtual counter '{}' given twice", name), ExitCode::kUsage);
    out.push_back(std::move(v));
  }
  return out;
}

std::optional<ThreadIo> ReadThreadIo(int32_t tgid, int32_t tid) {
  std::ifstream in(fmt::format("/proc/{}/task/{}/io", tgid, tid));
  if (!in) return std::nullopt;
  ThreadIo io;
  bool r = false, w = false;
  std::string key;
  uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "rchar:") io.rchar = value, r = true;
    if (key == "wchar:") io.wchar = value, w = true;
  }
  if (!r || !w) return std::nullopt;
  return io;
}

std::optional<uint64_t> ReadPackageEnergyUj() {
  std::vector<fs::path> zones = PackageZones();
  if (zones.empty()) return std::nullopt;
  uint64_t sum = 0;
  for (const fs::path& z : zones)
    sum += std::strtoull(FirstLine(z / "energy_uj").c_str(), nullptr, 10);
  return sum;
}

}  // namespace cstool
