// Rewrites the cstool RecordingInfo JSON stored inside a recorded trace.dat in place
// (tests that corrupt the recorded metadata). The new JSON must not be longer than the
// old one; it is padded with spaces (JSON whitespace), so no offset in the file moves.
#pragma once

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/trace_file_options.h"

namespace cstool::testing {

// Returns an empty string on success, else why it failed.
inline std::string PatchRecordingInfo(const std::string& path,
                                      const std::function<void(nlohmann::json&)>& edit) {
  auto payload = ReadCstoolInfoJson(path);
  if (!payload) return "no cstool info option in " + path;
  std::string text = *payload;
  while (!text.empty() && text.back() == '\0') text.pop_back();
  nlohmann::json j = nlohmann::json::parse(text);
  edit(j);
  std::string patched = j.dump();
  if (patched.size() > text.size()) return "patched JSON is longer than the original";
  patched.resize(text.size(), ' ');

  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string file = ss.str();
  size_t at = file.find(text);
  if (at == std::string::npos || file.find(text, at + 1) != std::string::npos)
    return "cannot locate the JSON in the file";
  file.replace(at, text.size(), patched);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << file;
  return out ? "" : "write failed";
}

}  // namespace cstool::testing
