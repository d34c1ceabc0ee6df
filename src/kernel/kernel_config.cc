#include "kernel/kernel_config.h"

#include <sys/utsname.h>
#include <zlib.h>

#include <array>
#include <memory>

#include "base/split_list.h"
#include "base/text_fields.h"

namespace cstool {

std::optional<std::string> KernelConfigValue(std::string_view config, std::string_view option) {
  for (std::string_view line : SplitList(config, '\n')) {
    line = Trim(line);
    if (line.starts_with("# ") && line.ends_with(" is not set") &&
        line.substr(2, line.size() - 2 - 11) == option)
      return "n";
    if (line.size() > option.size() && line.starts_with(option) && line[option.size()] == '=')
      return std::string(line.substr(option.size() + 1));
  }
  return std::nullopt;
}

namespace {

// The whole of `path`, gzip-compressed or not (zlib reads plain files through).
std::optional<std::string> ReadMaybeCompressed(const std::string& path) {
  const std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
  if (!f) return std::nullopt;
  std::string text;
  std::array<char, 65536> buf{};
  for (;;) {
    const int n = gzread(f.get(), buf.data(), buf.size());
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    text.append(buf.data(), static_cast<size_t>(n));
  }
  return text.empty() ? std::nullopt : std::optional(std::move(text));
}

}  // namespace

std::optional<std::string> ReadRunningKernelConfig() {
  if (auto text = ReadMaybeCompressed("/proc/config.gz")) return text;
  utsname u{};
  if (::uname(&u) != 0) return std::nullopt;
  return ReadMaybeCompressed(std::string("/boot/config-") + u.release);
}

}  // namespace cstool
