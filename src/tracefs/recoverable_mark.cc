#include "tracefs/recoverable_mark.h"

#include <unistd.h>

#include <fstream>
#include <string>
#include <system_error>

namespace cstool {

namespace {

std::filesystem::path MarkOf(int pid) {
  return std::filesystem::path(kRecoverableDir) / std::to_string(pid);
}

}  // namespace

RecoverableMark::RecoverableMark(const std::filesystem::path& out,
                                 const std::filesystem::path& note) {
  std::error_code ec;
  std::filesystem::create_directories(kRecoverableDir, ec);
  if (ec) return;
  const std::filesystem::path mark = MarkOf(::getpid());
  const std::filesystem::path tmp = mark.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << std::filesystem::absolute(out, ec).string() << '\n'
      << std::filesystem::absolute(note, ec).string() << '\n';
    if (!f.flush()) {
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, mark, ec);  // whole or not at all
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return;
  }
  path_ = mark;
}

RecoverableMark::~RecoverableMark() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove(path_, ec);
}

std::optional<RecoverableRecording> RecoverableRecordingOf(int pid) {
  const std::filesystem::path mark = MarkOf(pid);
  std::ifstream f(mark);
  if (!f) return std::nullopt;
  std::string out, note;
  std::getline(f, out);
  std::getline(f, note);
  // Only a note known to be gone gives the instances up (not one that cannot be looked
  // at now, in a directory this process may not read).
  std::error_code ec;
  const bool gone =
      out.empty() || note.empty() ||
      (!std::filesystem::exists(std::filesystem::status(note, ec)) &&
       (!ec || ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory));
  if (!gone) return RecoverableRecording{out, note};
  std::filesystem::remove(mark, ec);  // recovered, or its leftovers removed
  return std::nullopt;
}

}  // namespace cstool
