#include "interrupts/proc_interrupts.h"

#include <fmt/core.h>

#include <cctype>

#include "base/errors.h"
#include "base/read_file.h"
#include "base/text_fields.h"

namespace cstool {
namespace {

std::vector<int> ParseHeader(std::string_view line) {
  std::vector<int> cpus;
  while (true) {
    std::string_view tok = NextToken(line);
    if (tok.empty()) break;
    uint64_t n = 0;
    if (tok.substr(0, 3) == "CPU" && ParseNumber(tok.substr(3), &n))
      cpus.push_back(static_cast<int>(n));
  }
  return cpus;
}

}  // namespace

uint64_t ProcInterruptsRow::Total() const {
  uint64_t sum = 0;
  for (uint64_t c : counts) sum += c;
  return sum;
}

ProcInterrupts ParseProcInterrupts(std::string_view text) {
  ProcInterrupts out;
  bool header = true;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (Trim(line).empty()) continue;
    if (header) {
      header = false;
      out.cpus = ParseHeader(line);
      if (!out.cpus.empty()) continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    ProcInterruptsRow row;
    row.id = std::string(Trim(line.substr(0, colon)));
    if (row.id.empty()) continue;
    uint64_t irq = 0;
    if (ParseNumber(row.id, &irq)) row.irq = static_cast<int>(irq);
    std::string_view rest = line.substr(colon + 1);
    // Up to one count per CPU column; the first non-number starts the description.
    while (out.cpus.empty() || row.counts.size() < out.cpus.size()) {
      std::string_view probe = rest;
      std::string_view tok = NextToken(probe);
      uint64_t n = 0;
      if (!ParseNumber(tok, &n)) break;
      row.counts.push_back(n);
      rest = probe;
    }
    rest = Trim(rest);
    if (row.irq >= 0) {
      row.chip = std::string(NextToken(rest));
      // Some chips print no hwirq/type column; a hwirq token contains a digit.
      std::string_view probe = rest;
      std::string_view hw = NextToken(probe);
      if (!hw.empty() && std::isdigit(static_cast<unsigned char>(hw.front()))) {
        row.hwirq = std::string(hw);
        rest = probe;
      }
      row.name = std::string(Trim(rest));
    } else {
      row.name = std::string(rest);
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

ProcInterrupts ReadProcInterrupts(const std::string& path) {
  const std::optional<std::string> text = ReadWholeFile(path);
  if (!text) throw Error(fmt::format("cannot read {}", path));
  return ParseProcInterrupts(*text);
}

}  // namespace cstool
