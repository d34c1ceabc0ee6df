#include "interrupts/irq_affinity.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/errors.h"

namespace cstool {
namespace {

namespace fs = std::filesystem;

TEST(IrqAffinity, ParsesIrqLists) {
  EXPECT_EQ(ParseIrqList("24"), (std::vector<int>{24}));
  EXPECT_EQ(ParseIrqList("30-32,24,31"), (std::vector<int>{24, 30, 31, 32}));
  EXPECT_THROW(ParseIrqList(""), Error);
  EXPECT_THROW(ParseIrqList("x"), Error);
  EXPECT_THROW(ParseIrqList("5-3"), Error);
  EXPECT_THROW(ParseIrqList("1,"), Error);
  EXPECT_EQ(FormatIrqList({24, 25, 26, 31}), "24-26,31");
}

TEST(IrqAffinity, ParsesAssignments) {
  AffinityRequest r = ParseAffinityRequest("24,26=0-1");
  EXPECT_FALSE(r.all);
  EXPECT_EQ(r.irqs, (std::vector<int>{24, 26}));
  EXPECT_EQ(r.cpus, (std::vector<int>{0, 1}));
  AffinityRequest all = ParseAffinityRequest("all=1");
  EXPECT_TRUE(all.all);
  EXPECT_TRUE(all.irqs.empty());
  EXPECT_EQ(all.cpus, (std::vector<int>{1}));
  for (const char* bad : {"24", "=1", "24=", "24=x", "al=1", "24==1"}) {
    try {
      ParseAffinityRequest(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage) << bad;
    }
  }
}

// A fake /proc: irq/N/{smp_affinity_list,effective_affinity_list} and interrupts. Writes
// to regular files always succeed, so this checks reading, planning and the restore
// command, not the kernel's refusals (the integration test does).
class FakeProc : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("cstool-fakeproc-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    Irq(24, "0-1", "0");
    Irq(25, "0-1", "1");
    Irq(31, "1", "1");
    std::ofstream(root_ / "interrupts")
        << "           CPU0       CPU1\n"
           " 24:          1          0  IO-APIC   5-edge  ACPI:Ged\n"
           " 31:          0        524 PCI-MSIX-0000:00:01.0   "
           "3-edge      virtio0-stats\n"
           "LOC:        10         20   Local timer interrupts\n";
    fs::create_directories(root_ / "irq" / "default_smp_affinity_dir_is_ignored");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Irq(int n, const std::string& aff, const std::string& eff) {
    fs::create_directories(root_ / "irq" / std::to_string(n));
    std::ofstream(root_ / "irq" / std::to_string(n) / "smp_affinity_list") << aff << "\n";
    std::ofstream(root_ / "irq" / std::to_string(n) / "effective_affinity_list") << eff << "\n";
  }
  std::string Read(int n) {
    std::ifstream in(root_ / "irq" / std::to_string(n) / "smp_affinity_list");
    std::string s;
    std::getline(in, s);
    return s;
  }
  fs::path root_;
};

TEST_F(FakeProc, ReadsAffinitiesWithNames) {
  std::vector<IrqAffinity> irqs = ReadIrqAffinities(root_.string());
  ASSERT_EQ(irqs.size(), 3u);
  EXPECT_EQ(irqs[0].irq, 24);
  EXPECT_EQ(irqs[0].affinity, "0-1");
  EXPECT_EQ(irqs[0].effective, "0");
  EXPECT_EQ(irqs[0].name, "ACPI:Ged");
  EXPECT_EQ(irqs[0].counts, (std::vector<uint64_t>{1, 0}));
  EXPECT_EQ(irqs[1].irq, 25);
  EXPECT_EQ(irqs[1].name, "");  // not in the fake interrupts file
  EXPECT_EQ(irqs[2].name, "virtio0-stats");
}

TEST_F(FakeProc, AllMovesEveryIrqAndRestoreGroupsByPreviousSetting) {
  AffinityChangeResult r = ApplyAffinity({ParseAffinityRequest("all=1")}, root_.string());
  ASSERT_EQ(r.changes.size(), 3u);
  EXPECT_EQ(r.changes[0].outcome, AffinityOutcome::kMoved);
  EXPECT_EQ(r.changes[0].before, "0-1");
  EXPECT_EQ(r.changes[0].after, "1");
  EXPECT_EQ(r.changes[2].outcome, AffinityOutcome::kUnchanged);  // 31 was already on 1
  EXPECT_EQ(Read(24), "1");
  EXPECT_EQ(r.restore_command, "cstool irq --affinity 24-25=0-1");
}

TEST_F(FakeProc, LaterAssignmentWinsAndUnknownIrqIsReported) {
  AffinityChangeResult r =
      ApplyAffinity({ParseAffinityRequest("24,31=0"), ParseAffinityRequest("31=0-1"),
                     ParseAffinityRequest("99=0")},
                    root_.string());
  ASSERT_EQ(r.changes.size(), 3u);
  EXPECT_EQ(r.changes[0].irq, 24);
  EXPECT_EQ(r.changes[0].requested, "0");
  EXPECT_EQ(r.changes[1].irq, 31);
  EXPECT_EQ(r.changes[1].requested, "0-1");
  EXPECT_EQ(r.changes[2].irq, 99);
  EXPECT_EQ(r.changes[2].outcome, AffinityOutcome::kNoSuchIrq);
  EXPECT_EQ(r.restore_command, "cstool irq --affinity 24=0-1 31=1");
}

TEST(IrqAffinity, RestoreCommandSkipsRefusedAndUnchanged) {
  std::vector<AffinityChange> changes(3);
  changes[0] = {.irq = 5, .before = "0-3", .outcome = AffinityOutcome::kRefused, .error = 5};
  changes[1] = {.irq = 6, .before = "0-3", .outcome = AffinityOutcome::kUnchanged};
  changes[2] = {.irq = 7, .before = "2", .outcome = AffinityOutcome::kMoved};
  EXPECT_EQ(RestoreCommand(changes), "cstool irq --affinity 7=2");
  EXPECT_EQ(RestoreCommand({}), "");
}

}  // namespace
}  // namespace cstool
