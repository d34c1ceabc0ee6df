// Options of a kernel .config text.
#include "kernel/kernel_config.h"

#include <gtest/gtest.h>

namespace cstool {
namespace {

constexpr const char* kConfig =
    "#\n"
    "# Automatically generated file; DO NOT EDIT.\n"
    "CONFIG_HZ_250=y\n"
    "CONFIG_HZ=250\n"
    "# CONFIG_IRQ_TIME_ACCOUNTING is not set\n"
    "CONFIG_PARAVIRT_TIME_ACCOUNTING=y\n"
    "CONFIG_DEFAULT_HOSTNAME=\"(none)\"\n";

TEST(KernelConfig, AnOptionsValueIsWhatFollowsItsEqualsSign) {
  EXPECT_EQ(KernelConfigValue(kConfig, "CONFIG_HZ"), "250");
  EXPECT_EQ(KernelConfigValue(kConfig, "CONFIG_HZ_250"), "y");
  EXPECT_EQ(KernelConfigValue(kConfig, "CONFIG_PARAVIRT_TIME_ACCOUNTING"), "y");
  EXPECT_EQ(KernelConfigValue(kConfig, "CONFIG_DEFAULT_HOSTNAME"), "\"(none)\"");
}

TEST(KernelConfig, AnOptionNotSetIsNAndOneNotThereIsUnknown) {
  EXPECT_EQ(KernelConfigValue(kConfig, "CONFIG_IRQ_TIME_ACCOUNTING"), "n");
  EXPECT_EQ(KernelConfigValue(kConfig, "CONFIG_IRQ_TIME"), std::nullopt);  // (no prefix match)
  EXPECT_EQ(KernelConfigValue(kConfig, "CONFIG_NO_HZ"), std::nullopt);
  EXPECT_EQ(KernelConfigValue("", "CONFIG_HZ"), std::nullopt);
}

TEST(KernelConfig, TheRunningKernelsConfigNamesItsTickRate) {
  const std::optional<std::string> config = ReadRunningKernelConfig();
  if (!config) GTEST_SKIP() << "this kernel exposes no .config (/proc/config.gz, /boot)";
  const std::optional<std::string> hz = KernelConfigValue(*config, "CONFIG_HZ");
  ASSERT_TRUE(hz.has_value());
  EXPECT_GT(std::stoi(*hz), 0);
}

}  // namespace
}  // namespace cstool
