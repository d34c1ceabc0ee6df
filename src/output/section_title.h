// A text table's section title: "NAME (what the columns mean)", word-wrapped so that
// the explanation reads as prose in a terminal instead of running on for 300 columns;
// continuation lines are indented, so the title still starts the only unindented line.
#pragma once

#include <string>
#include <string_view>

namespace cstool {

inline constexpr size_t kSectionTitleWidth = 100;

// `text` (no newline) as lines of at most `width` columns, each ending in '\n'; a word
// longer than that keeps a line of its own.
inline std::string SectionTitle(std::string_view text, size_t width = kSectionTitleWidth) {
  constexpr std::string_view kIndent = "  ";
  std::string out;
  size_t line = 0;  // columns on the current line
  while (!text.empty()) {
    const size_t start = text.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    text.remove_prefix(start);
    const std::string_view word = text.substr(0, text.find(' '));
    text.remove_prefix(word.size());
    if (line == 0) {
      out += word;
      line = word.size();
    } else if (line + 1 + word.size() <= width) {
      out += ' ';
      out += word;
      line += 1 + word.size();
    } else {
      out += '\n';
      out += kIndent;
      out += word;
      line = kIndent.size() + word.size();
    }
  }
  return out + '\n';
}

}  // namespace cstool
