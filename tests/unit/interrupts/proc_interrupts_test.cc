#include "interrupts/proc_interrupts.h"

#include <gtest/gtest.h>

namespace cstool {
namespace {

// Captured from the 2-CPU Firecracker test VM (kernel 6.18), trimmed.
constexpr const char* kProcInterrupts =
    "           CPU0       CPU1       \n"
    " 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n"
    " 26:          0         15  IO-APIC   4-edge      ttyS0\n"
    " 36:          0     210666 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"
    " 40:          0          0 PCI-MSIX-0000:00:04.0   0-edge      virtio3-config\n"
    " 44:          3          4  dummy-chip\n"
    "NMI:          0          0   Non-maskable interrupts\n"
    "LOC:     526579     568882   Local timer interrupts\n"
    "CAL:     147832      79490   Function call interrupts\n"
    "ERR:          0\n"
    "MIS:          0\n";

TEST(ProcInterrupts, ParsesHeaderNumberedAndSymbolicRows) {
  ProcInterrupts pi = ParseProcInterrupts(kProcInterrupts);
  ASSERT_EQ(pi.cpus, (std::vector<int>{0, 1}));
  ASSERT_EQ(pi.rows.size(), 10u);

  const ProcInterruptsRow& ged = pi.rows[0];
  EXPECT_EQ(ged.id, "24");
  EXPECT_EQ(ged.irq, 24);
  EXPECT_EQ(ged.counts, (std::vector<uint64_t>{1, 0}));
  EXPECT_EQ(ged.chip, "IO-APIC");
  EXPECT_EQ(ged.hwirq, "5-edge");
  EXPECT_EQ(ged.name, "ACPI:Ged");

  const ProcInterruptsRow& blk = pi.rows[2];
  EXPECT_EQ(blk.irq, 36);
  EXPECT_EQ(blk.chip, "PCI-MSIX-0000:00:02.0");
  EXPECT_EQ(blk.name, "virtio1-req.0");
  EXPECT_EQ(blk.Total(), 210666u);

  const ProcInterruptsRow& bare = pi.rows[4];
  EXPECT_EQ(bare.chip, "dummy-chip");
  EXPECT_EQ(bare.hwirq, "");
  EXPECT_EQ(bare.name, "");

  const ProcInterruptsRow& loc = pi.rows[6];
  EXPECT_EQ(loc.id, "LOC");
  EXPECT_EQ(loc.irq, -1);
  EXPECT_EQ(loc.counts, (std::vector<uint64_t>{526579, 568882}));
  EXPECT_EQ(loc.name, "Local timer interrupts");

  const ProcInterruptsRow& err = pi.rows[8];
  EXPECT_EQ(err.id, "ERR");
  EXPECT_EQ(err.counts, (std::vector<uint64_t>{0}));
}

TEST(ProcInterrupts, NamesWithSpacesAndSharedLinesStayWhole) {
  ProcInterrupts pi = ParseProcInterrupts(
      "           CPU0       CPU1       CPU2       CPU3\n"
      "  9:          0          4          0          0   IO-APIC   9-fasteoi   acpi, "
      "i801_smbus\n");
  ASSERT_EQ(pi.cpus.size(), 4u);
  ASSERT_EQ(pi.rows.size(), 1u);
  EXPECT_EQ(pi.rows[0].counts.size(), 4u);
  EXPECT_EQ(pi.rows[0].hwirq, "9-fasteoi");
  EXPECT_EQ(pi.rows[0].name, "acpi, i801_smbus");
}

TEST(ProcInterrupts, EmptyOrGarbageGivesNoRows) {
  EXPECT_TRUE(ParseProcInterrupts("").rows.empty());
  EXPECT_TRUE(ParseProcInterrupts("           CPU0\nnot a row\n").rows.empty());
}

}  // namespace
}  // namespace cstool
