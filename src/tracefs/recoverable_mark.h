// Which dead recorders' instances still hold events a `record --recover` can take. A
// recorder killed outright (kill -9, the OOM killer) leaves its tracefs instance, and the
// events it had not read yet are only there; the next cstool session removes dead
// recorders' instances, so a recording into another file, run before the recovery, would
// lose them. While it records, a recorder marks its pid as recoverable (a file in
// kRecoverableDir naming its output and recovery note); the mark goes when it ends by any
// other way than being killed. A dead recorder's instances are kept while its mark names
// a recovery note that exists.
#pragma once

#include <filesystem>
#include <optional>

namespace cstool {

inline constexpr const char* kRecoverableDir = "/run/cstool/recoverable";

struct RecoverableRecording {
  std::filesystem::path out;   // the file `record --recover OUT` assembles
  std::filesystem::path note;  // its recovery note
};

// Made by a recorder once its recovery note is written; removed when it is destroyed
// (a killed recorder leaves it). Best effort: without a writable kRecoverableDir there is
// no mark, and a dead recorder's instances go as before.
class RecoverableMark {
 public:
  RecoverableMark(const std::filesystem::path& out, const std::filesystem::path& note);
  ~RecoverableMark();
  RecoverableMark(const RecoverableMark&) = delete;
  RecoverableMark& operator=(const RecoverableMark&) = delete;

 private:
  std::filesystem::path path_;  // empty: none was made
};

// The recording the dead recorder `pid` left to recover, when its mark names a recovery
// note that exists; otherwise nullopt, and a mark that names none is removed.
std::optional<RecoverableRecording> RecoverableRecordingOf(int pid);

}  // namespace cstool
