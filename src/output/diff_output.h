// Renderers of `cstool diff`: the table, JSON and CSV of a DiffResult, and its HTML page
// with paired bars (base and new side by side, each with its spread).
#pragma once

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>

#include "analysis/diff.h"

namespace cstool {

class DiffOutput {
 public:
  virtual ~DiffOutput() = default;
  virtual void Render(const DiffResult& result) = 0;
};

// "table", "json" or "csv"; throws cstool::Error (usage) for anything else. `limit`: the
// table's rows per section (0: all); JSON and CSV always hold every row.
std::unique_ptr<DiffOutput> MakeDiffOutput(std::string_view format, std::ostream& os, size_t limit);

// The JSON contract cstool-diff(1) documents.
nlohmann::json DiffToJson(const DiffResult& result);

// A self-contained page (no network): the largest changes as paired bars, then the tables.
void RenderDiffHtml(const DiffResult& result, std::ostream& os);

}  // namespace cstool
