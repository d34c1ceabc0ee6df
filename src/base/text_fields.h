// Fields of the kernel's text files (/proc/stat, /proc/interrupts, status): blanks
// trimmed, whitespace-separated tokens, whole numbers.
#pragma once

#include <cctype>
#include <charconv>
#include <string>
#include <string_view>

namespace cstool {

// Whether `s` is an event or event system name as tracefs spells them (sched,
// sched_switch): letters, digits and '_', at least one.
inline bool IsEventName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// `s` with control bytes written as \xNN: a name from a damaged file, fit for a message
// on a terminal.
inline std::string VisibleText(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits off the next whitespace-separated token of `s` ("" at the end).
inline std::string_view NextToken(std::string_view& s) {
  s = Trim(s);
  size_t end = 0;
  while (end < s.size() && !std::isspace(static_cast<unsigned char>(s[end]))) ++end;
  std::string_view tok = s.substr(0, end);
  s.remove_prefix(end);
  return tok;
}

// Parses `s` as one decimal number of type T, surrounding whitespace allowed and nothing
// else; false (and *out unspecified) otherwise.
template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  s = Trim(s);
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc{} && ptr == s.data() + s.size();
}

}  // namespace cstool
