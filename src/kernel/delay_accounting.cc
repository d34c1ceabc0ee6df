#include "kernel/delay_accounting.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/enum_names.h"

namespace cstool {
namespace {

// Returns 0 on success, else errno.
int ReadValue(const std::string& path, std::string* out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  char buf[32];
  ssize_t n;
  do {
    n = read(fd, buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  int err = n < 0 ? errno : 0;
  close(fd);
  if (err) return err;
  out->assign(buf, static_cast<size_t>(n));
  while (!out->empty() && (out->back() == '\n' || out->back() == ' ')) out->pop_back();
  return 0;
}

int WriteValue(const std::string& path, const char* value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  size_t len = std::strlen(value);
  ssize_t n;
  do {
    n = write(fd, value, len);
  } while (n < 0 && errno == EINTR);
  int err = n < 0 ? errno : (static_cast<size_t>(n) != len ? EIO : 0);
  if (close(fd) < 0 && err == 0) err = errno;
  return err;
}

}  // namespace

constexpr EnumNames<DelayAccountingGuard::State, 5> kDelayAccountingStateNames{
    {"already_on", "enabled", "missing", "not_writable", "unreadable"}};
static_assert(static_cast<size_t>(DelayAccountingGuard::State::kUnreadable) + 1 ==
              kDelayAccountingStateNames.size());

std::string_view DelayAccountingStateName(DelayAccountingGuard::State s) {
  return kDelayAccountingStateNames(s);
}

DelayAccountingGuard::DelayAccountingGuard(std::string path) : path_(std::move(path)) {
  std::string value;
  int err = ReadValue(path_, &value);
  if (err == ENOENT) {
    state_ = State::kMissing;
    message_ = fmt::format(
        "delay accounting unavailable: {} does not exist (kernel without "
        "CONFIG_TASK_DELAY_ACCT?); I/O and swap-in delays will not be recorded",
        path_);
    return;
  }
  if (err != 0) {
    state_ = State::kUnreadable;
    message_ =
        fmt::format("delay accounting unavailable: cannot read {}: {}", path_, std::strerror(err));
    return;
  }
  if (value == "1") {
    state_ = State::kAlreadyOn;
    return;
  }
  if (value != "0") {
    state_ = State::kUnreadable;
    message_ =
        fmt::format("delay accounting unavailable: unexpected value \"{}\" in {}", value, path_);
    return;
  }
  err = WriteValue(path_, "1");
  if (err != 0) {
    state_ = State::kNotWritable;
    message_ = fmt::format(
        "delay accounting unavailable: {} is 0 and cannot be set to 1 ({}); I/O and swap-in "
        "delays will not be recorded",
        path_, std::strerror(err));
    return;
  }
  state_ = State::kEnabled;
  message_ = fmt::format("delay accounting enabled for this recording ({} 0 -> 1)", path_);
}

bool DelayAccountingGuard::Restore() {
  if (state_ != State::kEnabled || restored_) return true;
  restored_ = true;
  int err = WriteValue(path_, "0");
  if (err != 0) {
    message_ = fmt::format("could not restore {} to 0: {}", path_, std::strerror(err));
    return false;
  }
  return true;
}

DelayAccountingGuard::~DelayAccountingGuard() { Restore(); }

}  // namespace cstool
