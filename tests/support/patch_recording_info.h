// Rewrites the cstool RecordingInfo JSON stored inside a recorded trace.dat in place
// (tests that corrupt the recorded metadata). The new JSON must not be longer than the
// old one; it is padded with spaces (JSON whitespace), so no offset in the file moves.
#pragma once

#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "format/trace_file_format.h"

namespace cstool::testing {

// Returns an empty string on success, else why it failed.
inline std::string PatchRecordingInfo(const std::string& path,
                                      const std::function<void(nlohmann::json&)>& edit) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string file = ss.str();
  // The option is stored as u16 id, u32 size, then the JSON payload (little endian).
  const char id[2] = {static_cast<char>(tracefile::kOptionCstoolInfo & 0xff),
                      static_cast<char>(tracefile::kOptionCstoolInfo >> 8)};
  size_t at = std::string::npos;
  uint32_t size = 0;
  for (size_t pos = file.find(std::string_view(id, 2)); pos != std::string::npos;
       pos = file.find(std::string_view(id, 2), pos + 1)) {
    if (pos + 6 >= file.size() || file[pos + 6] != '{') continue;
    std::memcpy(&size, file.data() + pos + 2, 4);
    if (pos + 6 + size > file.size()) continue;
    at = pos + 6;
    break;
  }
  if (at == std::string::npos) return "no cstool info option in " + path;
  std::string text = file.substr(at, size);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  nlohmann::json j = nlohmann::json::parse(text);
  edit(j);
  std::string patched = j.dump();
  if (patched.size() > text.size()) return "patched JSON is longer than the original";
  patched.resize(text.size(), ' ');
  file.replace(at, text.size(), patched);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << file;
  return out ? "" : "write failed";
}

}  // namespace cstool::testing
