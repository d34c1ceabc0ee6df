// /proc/interrupts: per-CPU counts of every IRQ line and architecture vector, with the
// chip, hardware IRQ and device names of numbered lines.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cstool {

struct ProcInterruptsRow {
  std::string id;                // "24", "LOC", "NMI"
  int irq = -1;                  // the number of a numbered line, -1 for symbolic rows
  std::vector<uint64_t> counts;  // one per CPU column (fewer for rows like "ERR:")
  std::string chip;              // numbered lines: "IO-APIC", "PCI-MSIX-0000:00:01.0"
  std::string hwirq;             // numbered lines: "5-edge"
  std::string name;              // device names ("virtio0-config"); symbolic rows: the description
  uint64_t Total() const;
};

struct ProcInterrupts {
  std::vector<int> cpus;  // CPU numbers of the count columns ("CPU0 CPU1")
  std::vector<ProcInterruptsRow> rows;
};

// Parses the text of /proc/interrupts. Lines that do not look like rows are skipped.
ProcInterrupts ParseProcInterrupts(std::string_view text);

// Reads `path` (default /proc/interrupts); throws cstool::Error if unreadable.
ProcInterrupts ReadProcInterrupts(const std::string& path = "/proc/interrupts");

}  // namespace cstool
