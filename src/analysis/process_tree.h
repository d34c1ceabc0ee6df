// The recorded processes as a tree (who forked whom), with each process's totals over
// itself and all its descendants: the whole command's total that /usr/bin/time gives,
// and each child command's share of it.
//
// A process's parent is the process of the thread whose fork created it in the trace;
// for processes alive before the trace, the parent /proc showed the recorder. Processes
// whose parent is not among the selected ones are roots (the recorded command, the -p
// targets; with -a, every process whose parent is outside the view).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/microstate.h"

namespace cstool {

struct ProcessTotals;

// One process and everything below it.
struct SubtreeTotals {
  uint32_t processes = 0;
  uint32_t threads = 0;
  int64_t first_ts = INT64_MAX;  // the earliest start of any of its threads
  int64_t end_ts = INT64_MIN;    // the latest end
  MicrostateTimes microstates{};
  uint64_t voluntary = 0;
  uint64_t involuntary = 0;
  bool lost_touched = false;  // lost events may have touched one of its threads

  int64_t Wall() const { return processes == 0 ? 0 : end_ts - first_ts; }
  void Add(const SubtreeTotals& o);
};

struct ProcessTree {
  static constexpr size_t kNone = SIZE_MAX;
  // All indexed like the processes the tree was built from.
  std::vector<size_t> parent;                 // kNone for a root
  std::vector<std::vector<size_t>> children;  // in creation order
  std::vector<SubtreeTotals> subtree;         // inclusive totals
  std::vector<size_t> roots;                  // in creation order
  std::vector<size_t> preorder;               // parents before children, siblings by creation
  std::vector<uint32_t> depth;                // 0 for roots
};

// Links each process to its parent (ProcessTotals::ppid) among `processes`. A parent
// chain that loops (pid reuse in a damaged or very long file) is cut at the loop.
ProcessTree BuildProcessTree(const std::vector<ProcessTotals>& processes);

// A row of the folded tree the table prints: sibling processes that run the same command
// share a row (160 `hackbench` workers are one row, x160), their children folded the
// same way below it.
struct ProcessTreeRow {
  std::vector<size_t> members;  // process indexes, creation order
  uint32_t depth = 0;
  SubtreeTotals totals;  // over the members' subtrees
};
std::vector<ProcessTreeRow> FoldedTreeRows(const ProcessTree& tree,
                                           const std::vector<ProcessTotals>& processes);

}  // namespace cstool
