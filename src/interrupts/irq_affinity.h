// IRQ affinity: which CPUs each interrupt line may be delivered to
// (/proc/irq/N/smp_affinity_list) and where the kernel actually delivers it
// (effective_affinity_list); moving lines and undoing the move.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cstool {

struct IrqAffinity {
  int irq = 0;
  std::string chip;              // from /proc/interrupts, when the line is listed there
  std::string name;              // device names, from /proc/interrupts
  std::vector<uint64_t> counts;  // per CPU column of /proc/interrupts
  std::string affinity;          // smp_affinity_list as the kernel prints it ("0-1")
  std::string effective;         // effective_affinity_list; empty if the kernel has none
};

// "IRQ=CPUS": IRQ is a number, a list ("24,25,30-33") or "all"; CPUS a CPU list.
struct AffinityRequest {
  bool all = false;
  std::vector<int> irqs;  // sorted, unique; empty when `all`
  std::vector<int> cpus;
};

// Parses "24,30-33" (sorted, unique). Throws cstool::Error (usage).
std::vector<int> ParseIrqList(std::string_view text);
// Parses one "IRQ=CPUS" argument. Throws cstool::Error (usage).
AffinityRequest ParseAffinityRequest(std::string_view text);
// The shortest list form of IRQ numbers ("24-26,31").
std::string FormatIrqList(const std::vector<int>& irqs);

// Every numbered IRQ under `proc`/irq, with names and counts from `proc`/interrupts.
std::vector<IrqAffinity> ReadIrqAffinities(const std::string& proc = "/proc");

enum class AffinityOutcome : uint8_t { kMoved, kUnchanged, kRefused, kNoSuchIrq };

struct AffinityChange {
  int irq = 0;
  std::string name;
  std::string before;     // smp_affinity_list before
  std::string requested;  // the CPU list written
  std::string after;      // smp_affinity_list after (re-read)
  std::string effective;  // effective_affinity_list after (re-read)
  AffinityOutcome outcome = AffinityOutcome::kMoved;
  int error = 0;  // errno of the refused write
};

struct AffinityChangeResult {
  std::vector<AffinityChange> changes;
  // `cstool irq --affinity ...` that puts back every line that moved; empty if none did.
  std::string restore_command;
};

// Applies the requests in order (a later one wins for an IRQ named twice), trying every
// IRQ even after refusals, and builds the restore command.
AffinityChangeResult ApplyAffinity(const std::vector<AffinityRequest>& requests,
                                   const std::string& proc = "/proc");

// The command that sets every moved line back to its `before` list.
std::string RestoreCommand(const std::vector<AffinityChange>& changes);

std::string_view AffinityOutcomeName(AffinityOutcome outcome);

}  // namespace cstool
