// Kernel addresses named with kallsyms text loaded into a tep_handle, as both trace
// readers load a file's kallsyms section.
#include "decode/kernel_symbols.h"

#include <gtest/gtest.h>

#include "format/trace_handles.h"

namespace cstool {
namespace {

TEST(KernelSymbols, ResolvesAddressesWithTheFilesKallsyms) {
  TepHandlePtr tep(tep_alloc());
  ASSERT_TRUE(tep);
  const char* kallsyms =
      "ffffffff81000000 T _stext\n"
      "ffffffff81200000 t anon_pipe_read\n"
      "ffffffff81200400 T vfs_read\n"
      "ffffffff81300000 t do_select.constprop.0\n"
      "ffffffffc0100000 t ext4_sync_file\t[ext4]\n"
      // libtraceevent ends each symbol at the next one: the last one names nothing.
      "ffffffffc0100400 t ext4_fsync_nojournal\t[ext4]\n";
  ASSERT_EQ(tep_parse_kallsyms(tep.get(), kallsyms), 0);
  EXPECT_EQ(KernelSymbol(tep.get(), 0xffffffff812001f5), "anon_pipe_read+0x1f5");
  EXPECT_EQ(KernelSymbol(tep.get(), 0xffffffff81200400), "vfs_read+0x0");
  EXPECT_EQ(KernelSymbol(tep.get(), 0xffffffff81300010), "do_select.constprop.0+0x10");
  EXPECT_EQ(KernelSymbol(tep.get(), 0xffffffffc0100020), "ext4_sync_file+0x20");
  EXPECT_EQ(KernelSymbol(tep.get(), 0xffffffff80000000), "0xffffffff80000000");
}

TEST(KernelSymbols, NoKallsymsGivesAddresses) {
  TepHandlePtr tep(tep_alloc());
  EXPECT_EQ(KernelSymbol(tep.get(), 0xffffffff812001f5), "0xffffffff812001f5");
  EXPECT_EQ(KernelSymbol(nullptr, 0x10), "0x10");
}

}  // namespace
}  // namespace cstool
