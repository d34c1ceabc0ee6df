// What a reader skipped when asked to salvage a damaged trace file (ReaderOptions::
// salvage): one line per damage, naming the file offset and how far reading got.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace cstool {

class SalvageLog {
 public:
  void Add(std::string what) { entries_.push_back(std::move(what)); }
  // Damage that ends `cpu`'s data: its records stop short of the recording's end.
  void AddCut(int cpu, std::string what) {
    NoteCut(cpu);
    Add(std::move(what));
  }
  void NoteCut(int cpu) {
    if (std::find(cut_cpus_.begin(), cut_cpus_.end(), cpu) == cut_cpus_.end())
      cut_cpus_.push_back(cpu);
  }
  bool empty() const { return entries_.empty() && cut_cpus_.empty(); }
  const std::vector<std::string>& entries() const { return entries_; }
  // The CPUs whose data the damage cut short, as far as the streams read so far found.
  const std::vector<int>& cut_cpus() const { return cut_cpus_; }
  // Forgets the entries after the first `n`: what a pass over the streams before the one
  // that counts met again (TraceFileReader::ForgetSalvageNotesFrom). The cut CPUs stay:
  // the pass found them as the next one will.
  void Truncate(size_t n) {
    if (n < entries_.size()) entries_.resize(n);
  }

 private:
  std::vector<std::string> entries_;
  std::vector<int> cut_cpus_;
};

}  // namespace cstool
