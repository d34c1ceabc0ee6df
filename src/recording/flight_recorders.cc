#include "recording/flight_recorders.h"

#include <unistd.h>

#include <fstream>
#include <iterator>

#include "tracefs/tracefs_session.h"

namespace cstool {
namespace {

std::vector<std::string> CommandLineOf(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    argv.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return argv;
}

bool IsFlightRecorder(const std::vector<std::string>& argv) {
  for (const std::string& a : argv) {
    if (a == "--") return false;  // the traced command's own options
    if (a == "--flight" || a.rfind("--flight=", 0) == 0) return true;
  }
  return false;
}

}  // namespace

std::vector<FlightRecorderProcess> RunningFlightRecorders() {
  std::vector<FlightRecorderProcess> out;
  for (int pid : TracefsSession::InstanceOwners()) {
    if (pid == ::getpid()) continue;
    std::vector<std::string> argv = CommandLineOf(pid);
    if (!IsFlightRecorder(argv)) continue;
    std::string line;
    for (const std::string& a : argv) line += (line.empty() ? "" : " ") + a;
    out.push_back({pid, line});
  }
  return out;
}

}  // namespace cstool
