// The rendered selection of a ReportModel: which threads (filters), in which order
// (--sort), with per-process totals. Renderers only read this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/report_model.h"
#include "core/syscall_table.h"

namespace cstool {

struct ViewOptions {
  std::vector<int32_t> pids;  // -p: only these processes
  std::vector<int32_t> tids;  // -t: only these threads
  std::string sort = "switches";
  bool all_threads = false;  // also untracked threads
};

struct ProcessTotals {
  int32_t pid = 0;
  std::string comm;
  uint32_t threads = 0;
  ThreadReport sum;  // thread == nullptr; lifetimes summed over threads
  int64_t lifetime_sum = 0;
  bool lost_touched = false;
};

struct KernelCheckResult;

struct ReportView {
  const ReportModel* model = nullptr;
  const SyscallTable* syscalls = nullptr;
  const KernelCheckResult* check = nullptr;  // --check result, rendered when set
  std::vector<const ThreadReport*> threads;
  std::vector<ProcessTotals> processes;

  // The cause labels of r, largest count first.
  std::vector<std::pair<std::string, uint64_t>> Causes(const ThreadReport& r) const;
};

// Throws cstool::Error (usage) for an unknown sort key.
ReportView BuildView(const ReportModel& model, const SyscallTable& syscalls,
                     const ViewOptions& options);

// Valid --sort keys, for help text and errors.
std::vector<std::string> SortKeys();

inline int32_t DisplayPid(const Thread& t) { return t.tgid != 0 ? t.tgid : t.tid; }

}  // namespace cstool
