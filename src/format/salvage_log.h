// What a reader skipped when asked to salvage a damaged trace file (ReaderOptions::
// salvage): one line per damage, naming the file offset and how far reading got.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cstool {

class SalvageLog {
 public:
  void Add(std::string what) { entries_.push_back(std::move(what)); }
  bool empty() const { return entries_.empty(); }
  const std::vector<std::string>& entries() const { return entries_; }
  // Forgets the entries after the first `n`: what a pass over the streams before the one
  // that counts met again (TraceFileReader::ForgetSalvageNotesFrom).
  void Truncate(size_t n) {
    if (n < entries_.size()) entries_.resize(n);
  }

 private:
  std::vector<std::string> entries_;
};

}  // namespace cstool
