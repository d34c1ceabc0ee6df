// Error type shared by every library: every failure the user can cause (bad file, no
// permission, unknown event) becomes one clear line and an exit status.
#pragma once

#include <stdexcept>
#include <string>

namespace cstool {

enum class ExitCode : int {
  kOk = 0,
  kFailure = 1,  // runtime failure (I/O, kernel refused, corrupt file)
  kUsage = 2,    // bad command line, or missing privilege
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, ExitCode code = ExitCode::kFailure)
      : std::runtime_error(what), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// A trace file whose data is damaged (cut short, a corrupt page or chunk), which `report
// --salvage` reads around: the command's error can say so.
class DamagedDataError : public Error {
 public:
  using Error::Error;
};

}  // namespace cstool
