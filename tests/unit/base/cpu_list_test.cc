#include "base/cpu_list.h"

#include <gtest/gtest.h>

#include "base/errors.h"

namespace cstool {
namespace {

TEST(CpuList, ParsesSinglesRangesAndMixes) {
  EXPECT_EQ(ParseCpuList("0"), (std::vector<int>{0}));
  EXPECT_EQ(ParseCpuList("0,1"), (std::vector<int>{0, 1}));
  EXPECT_EQ(ParseCpuList("0-1"), (std::vector<int>{0, 1}));
  EXPECT_EQ(ParseCpuList("0-3,6,8-9"), (std::vector<int>{0, 1, 2, 3, 6, 8, 9}));
  EXPECT_EQ(ParseCpuList("3,1,1-2\n"), (std::vector<int>{1, 2, 3}));  // sorted, unique
}

TEST(CpuList, RejectsGarbageAsUsageError) {
  for (const char* bad : {"", "a", "1-", "-1", "3-1", "1,,2", "1,", "0x1", "1 2", "99999"}) {
    try {
      ParseCpuList(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage) << bad;
    }
  }
}

TEST(CpuList, FormatsBackToShortForm) {
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 6, 8, 9}), "0-3,6,8-9");
  EXPECT_EQ(FormatCpuList({1}), "1");
  EXPECT_EQ(FormatCpuList({}), "");
}

TEST(CpuList, MaskIsHexWithCommaEvery32Cpus) {
  EXPECT_EQ(CpuMaskHex({0, 1}), "3");
  EXPECT_EQ(CpuMaskHex({1}), "2");
  EXPECT_EQ(CpuMaskHex({4}), "10");
  EXPECT_EQ(CpuMaskHex({0, 33}), "2,00000001");
}

}  // namespace
}  // namespace cstool
