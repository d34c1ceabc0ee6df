#include <fmt/core.h>

#include "output/diff_output.h"
#include "output/text_escape.h"

namespace cstool {
namespace {

std::string Quote(std::string_view s) { return CsvQuote(s); }

std::string Side(const SideStats& s) {
  return fmt::format("{},{},{},{}", s.runs(), s.mean, s.min, s.max);
}

// One line per measure of every row; subjects on one side only get a line of kind
// `unmatched` (name base_only or new_only, their lifetime), so none is dropped.
class DiffCsvOutput : public DiffOutput {
 public:
  explicit DiffCsvOutput(std::ostream& os) : os_(os) {}
  void Render(const DiffResult& r) override {
    os_ << "level,subject,kind,name,measure,unit,base_runs,base_mean,base_min,base_max,"
           "new_runs,new_mean,new_min,new_max,change,significant\n";
    for (const DiffRow& row : r.rows) {
      const DiffSubject& s = r.subjects[row.subject];
      for (const DiffMeasure& m : row.measures)
        Line(s, DiffKindName(row.kind), row.name, m.field, DiffUnitName(m.unit), m.comparison);
    }
    for (const DiffSubject& s : r.subjects)
      if (!s.matched())
        Line(s, "unmatched", s.in_base() ? "base_only" : "new_only", "lifetime_ns", "ns",
             s.lifetime);
  }

 private:
  void Line(const DiffSubject& s, std::string_view kind, std::string_view name,
            std::string_view field, std::string_view unit, const Comparison& c) {
    os_ << fmt::format("{},{},{},{},{},{},{},{},{},{}\n", s.key.is_thread ? "thread" : "process",
                       Quote(s.text), kind, Quote(name), field, unit, Side(c.base), Side(c.after),
                       c.change, c.significant ? (*c.significant ? "1" : "0") : "");
  }
  std::ostream& os_;
};

}  // namespace

std::unique_ptr<DiffOutput> MakeDiffCsvOutput(std::ostream& os) {
  return std::make_unique<DiffCsvOutput>(os);
}

}  // namespace cstool
