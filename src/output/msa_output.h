// Renderers of `cstool msa` frames (analysis/msa_model.h): a prstat -m style table, either
// refreshed in place like top (terminal) or appended frame after frame (pipe/file),
// and JSON lines (one object per frame). They write only to the stream they are given.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

#include "analysis/msa_model.h"

namespace cstool {

class MsaOutput {
 public:
  virtual ~MsaOutput() = default;
  virtual void Render(const MsaFrame& frame) = 0;
};

// "table" or "json"; throws cstool::Error (usage) for anything else. `in_place`: the
// table clears the screen before each interval (ANSI), for terminals.
std::unique_ptr<MsaOutput> MakeMsaOutput(std::string_view format, std::ostream& os, bool in_place);

// The JSON object of one frame (what the json renderer prints on one line).
nlohmann::json MsaFrameToJson(const MsaFrame& frame);

// A share as the table prints it: "0.0" .. "9.9", "10" .. "99", "100".
std::string FormatShare(double percent);

}  // namespace cstool
