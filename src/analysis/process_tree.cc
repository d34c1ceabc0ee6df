#include "analysis/process_tree.h"

#include <algorithm>
#include <unordered_map>

#include "analysis/report_view.h"

namespace cstool {

void SubtreeTotals::Add(const SubtreeTotals& o) {
  processes += o.processes;
  threads += o.threads;
  first_ts = std::min(first_ts, o.first_ts);
  end_ts = std::max(end_ts, o.end_ts);
  for (size_t i = 0; i < kMicrostateCount; ++i) microstates[i] += o.microstates[i];
  voluntary += o.voluntary;
  involuntary += o.involuntary;
  lost_touched = lost_touched || o.lost_touched;
}

namespace {

SubtreeTotals OwnTotals(const ProcessTotals& p) {
  SubtreeTotals t;
  t.processes = 1;
  t.threads = p.threads;
  t.first_ts = p.first_ts;
  t.end_ts = p.end_ts;
  t.microstates = p.sum.microstates;
  t.voluntary = p.sum.voluntary;
  t.involuntary = p.sum.involuntary;
  t.lost_touched = p.lost_touched;
  return t;
}

// Creation order: the earlier start first, then the lower pid.
auto CreatedBefore(const std::vector<ProcessTotals>& processes) {
  return [&processes](size_t a, size_t b) {
    if (processes[a].first_ts != processes[b].first_ts)
      return processes[a].first_ts < processes[b].first_ts;
    return processes[a].pid < processes[b].pid;
  };
}

}  // namespace

ProcessTree BuildProcessTree(const std::vector<ProcessTotals>& processes) {
  const size_t n = processes.size();
  ProcessTree tree;
  tree.parent.assign(n, ProcessTree::kNone);
  tree.children.resize(n);
  tree.depth.assign(n, 0);
  std::unordered_map<int32_t, size_t> index;
  for (size_t i = 0; i < n; ++i) index.emplace(processes[i].pid, i);
  for (size_t i = 0; i < n; ++i) {
    auto it = index.find(processes[i].ppid);
    if (processes[i].ppid == 0 || it == index.end() || it->second == i) continue;
    // Linking i under its parent must not close a loop: walk up from the parent.
    size_t up = it->second;
    while (up != ProcessTree::kNone && up != i) up = tree.parent[up];
    if (up == i) continue;
    tree.parent[i] = it->second;
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), CreatedBefore(processes));
  for (size_t i : order) {
    if (tree.parent[i] == ProcessTree::kNone)
      tree.roots.push_back(i);
    else
      tree.children[tree.parent[i]].push_back(i);
  }

  // Preorder with an explicit stack: a fork chain can be deeper than the call stack.
  tree.subtree.resize(n);
  std::vector<size_t> stack(tree.roots.rbegin(), tree.roots.rend());
  while (!stack.empty()) {
    const size_t i = stack.back();
    stack.pop_back();
    tree.preorder.push_back(i);
    tree.subtree[i] = OwnTotals(processes[i]);
    for (auto c = tree.children[i].rbegin(); c != tree.children[i].rend(); ++c) {
      tree.depth[*c] = tree.depth[i] + 1;
      stack.push_back(*c);
    }
  }
  // Children after parents in preorder: summing in reverse gives inclusive totals.
  for (auto it = tree.preorder.rbegin(); it != tree.preorder.rend(); ++it)
    if (tree.parent[*it] != ProcessTree::kNone)
      tree.subtree[tree.parent[*it]].Add(tree.subtree[*it]);
  return tree;
}

std::vector<ProcessTreeRow> FoldedTreeRows(const ProcessTree& tree,
                                           const std::vector<ProcessTotals>& processes) {
  std::vector<ProcessTreeRow> rows;
  // Groups `members` (in creation order) by command, each group where its first member
  // stands, and pushes them so that the first group is taken next.
  auto push_groups = [&processes](const std::vector<size_t>& members, uint32_t depth,
                                  std::vector<ProcessTreeRow>& stack) {
    std::vector<ProcessTreeRow> groups;
    for (size_t m : members) {
      auto same = std::find_if(groups.begin(), groups.end(), [&](const ProcessTreeRow& g) {
        return processes[g.members.front()].comm == processes[m].comm;
      });
      if (same == groups.end()) same = groups.insert(groups.end(), ProcessTreeRow{{}, depth, {}});
      same->members.push_back(m);
    }
    stack.insert(stack.end(), std::make_move_iterator(groups.rbegin()),
                 std::make_move_iterator(groups.rend()));
  };
  std::vector<ProcessTreeRow> stack;
  push_groups(tree.roots, 0, stack);
  while (!stack.empty()) {
    ProcessTreeRow row = std::move(stack.back());
    stack.pop_back();
    std::vector<size_t> children;
    for (size_t m : row.members) {
      row.totals.Add(tree.subtree[m]);
      children.insert(children.end(), tree.children[m].begin(), tree.children[m].end());
    }
    std::stable_sort(children.begin(), children.end(), CreatedBefore(processes));
    const uint32_t depth = row.depth;
    rows.push_back(std::move(row));
    push_groups(children, depth + 1, stack);
  }
  return rows;
}

}  // namespace cstool
