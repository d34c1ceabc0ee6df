#include <fmt/core.h>

#include "output/diff_output.h"

namespace cstool {
namespace {

nlohmann::json SideJson(const SideStats& s) {
  return {
      {"runs", s.runs()}, {"mean", s.mean}, {"min", s.min}, {"max", s.max}, {"values", s.values}};
}

nlohmann::json ComparisonJson(const Comparison& c) {
  nlohmann::json j = {{"base", SideJson(c.base)},
                      {"new", SideJson(c.after)},
                      {"change", c.change},
                      {"significant", nullptr}};
  if (c.significant) j["significant"] = *c.significant;
  return j;
}

nlohmann::json SubjectJson(const DiffSubject& s) {
  nlohmann::json j = {{"key", s.text},
                      {"process", s.key.process},
                      {"process_nth", s.key.process_nth},
                      {"base_ids", s.base_ids},
                      {"new_ids", s.after_ids},
                      {"lifetime_ns", ComparisonJson(s.lifetime)}};
  if (s.key.is_thread) {
    j["comm"] = s.key.thread;
    j["main_thread"] = s.key.main_thread;
    j["thread_nth"] = s.key.thread_nth;
  }
  return j;
}

nlohmann::json SubjectsJson(const DiffResult& r, bool threads) {
  nlohmann::json matched = nlohmann::json::array(), base_only = nlohmann::json::array(),
                 new_only = nlohmann::json::array();
  for (const DiffSubject& s : r.subjects) {
    if (s.key.is_thread != threads) continue;
    (s.matched() ? matched : s.in_base() ? base_only : new_only).push_back(SubjectJson(s));
  }
  return {{"matched", matched}, {"base_only", base_only}, {"new_only", new_only}};
}

class DiffJsonOutput : public DiffOutput {
 public:
  explicit DiffJsonOutput(std::ostream& os) : os_(os) {}
  void Render(const DiffResult& result) override {
    // Names come from the trace files and need not be UTF-8: replace bad bytes.
    os_ << DiffToJson(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }

 private:
  std::ostream& os_;
};

}  // namespace

nlohmann::json DiffToJson(const DiffResult& r) {
  nlohmann::json changes = nlohmann::json::array();
  for (const DiffRow& row : r.rows) {
    const DiffSubject& s = r.subjects[row.subject];
    nlohmann::json measures = nlohmann::json::object();
    for (const DiffMeasure& m : row.measures) {
      nlohmann::json mj = ComparisonJson(m.comparison);
      mj["unit"] = DiffUnitName(m.unit);
      measures[m.field] = std::move(mj);
    }
    const Comparison& p = row.primary().comparison;
    changes.push_back({{"level", s.key.is_thread ? "thread" : "process"},
                       {"subject", s.text},
                       {"kind", DiffKindName(row.kind)},
                       {"name", row.name},
                       {"measure", row.primary().field},
                       {"change", p.change},
                       {"significant", p.significant ? nlohmann::json(*p.significant) : nullptr},
                       {"measures", measures}});
  }
  return {{"base", {{"files", r.base_files}}},
          {"new", {{"files", r.after_files}}},
          {"spread", "min..max"},
          {"significance",
           r.significance_known()
               ? "a change is significant when it exceeds the spread (max - min) of both sides"
               : "unknown: fewer than 3 recordings on a side"},
          {"threads", SubjectsJson(r, true)},
          {"processes", SubjectsJson(r, false)},
          {"changes", changes},
          {"warnings", r.warnings}};
}

std::unique_ptr<DiffOutput> MakeDiffJsonOutput(std::ostream& os) {
  return std::make_unique<DiffJsonOutput>(os);
}

}  // namespace cstool
