// Splitting a "a,b,c" option value into its items.
#pragma once

#include <string_view>
#include <vector>

namespace cstool {

// Every item between the separators, empty ones included ("" is one empty item), so
// that a caller can name an empty item in its error. The views point into `text`.
inline std::vector<std::string_view> SplitList(std::string_view text, char separator = ',') {
  std::vector<std::string_view> items;
  size_t pos = 0;
  for (;;) {
    const size_t end = text.find(separator, pos);
    items.push_back(text.substr(pos, end == std::string_view::npos ? end : end - pos));
    if (end == std::string_view::npos) return items;
    pos = end + 1;
  }
}

}  // namespace cstool
