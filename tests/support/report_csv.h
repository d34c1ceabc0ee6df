// The rows of `report --format csv`, each a map from its header's column names to the
// field's text (quotes as CsvQuote writes them: "..." with "" inside), so that tests
// name the column they check instead of counting commas.
#pragma once

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace cstool::testing {

inline std::vector<std::string> CsvFields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

// The rows up to the first blank line (the end of the table).
inline std::vector<std::map<std::string, std::string>> CsvRows(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = CsvFields(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line) && !line.empty()) {
    const std::vector<std::string> fields = CsvFields(line);
    std::map<std::string, std::string>& row = rows.emplace_back();
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
  }
  return rows;
}

}  // namespace cstool::testing
