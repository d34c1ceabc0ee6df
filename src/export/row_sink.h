// Where export rows go: the SQLite and the JSON Lines writers implement it. Producers
// give the values of a table's own columns; the sink adds trace_id and host.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "export/schema.h"

namespace cstool {

// NULL, an integer, or text (valid until Add returns).
using Value = std::variant<std::monostate, int64_t, std::string_view>;

// Which trace the rows belong to.
struct TraceKey {
  std::string trace_id;
  std::string host;
  // Named by --host; else the exporting machine's name, and a trace exported again with
  // --replace keeps the host it was stored under (a recording brought from another
  // machine was re-filed under the one that re-exported it).
  bool host_given = false;
};

class RowSink {
 public:
  virtual ~RowSink() = default;
  // One value per column of SchemaOf(table).columns, in order.
  virtual void Add(Table table, std::span<const Value> values) = 0;
  // Makes the rows permanent; without it the destructor leaves the target as it was.
  virtual void Commit() = 0;

  uint64_t rows(Table t) const { return rows_[static_cast<size_t>(t)]; }
  uint64_t total_rows() const {
    uint64_t n = 0;
    for (uint64_t r : rows_) n += r;
    return n;
  }

 protected:
  void Count(Table t) { ++rows_[static_cast<size_t>(t)]; }

 private:
  std::array<uint64_t, kTableCount> rows_{};
};

}  // namespace cstool
