#include "output/stderr_messages.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace cstool {
namespace {

std::string Written(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string out;
  for (int c; (c = std::fgetc(f)) != EOF;) out.push_back(static_cast<char>(c));
  return out;
}

TEST(StderrMessages, LabelsLinesWithTheRunningCommand) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    StderrMessages irq("irq", f);
    irq.Warning("event irq_vectors:*_entry/*_exit is not available on this kernel");
    StderrMessages record("record", f);
    record.Status("wrote x.dat (1.0 KiB) in 0.100 s");
    record.Detail("  total 3 events");
    record.Warning("command (pid 7) is still running");
  }
  EXPECT_EQ(Written(f),
            "cstool irq: warning: event irq_vectors:*_entry/*_exit is not available on this "
            "kernel\n"
            "cstool record: wrote x.dat (1.0 KiB) in 0.100 s\n"
            "  total 3 events\n"
            "cstool record: warning: command (pid 7) is still running\n");
  std::fclose(f);
}

TEST(StderrMessages, ProgressOnlyOnATerminal) {
  std::FILE* f = std::tmpfile();  // not a terminal
  ASSERT_NE(f, nullptr);
  StderrMessages msa("msa", f);
  msa.Progress("1 events/s");
  msa.Progress("");
  msa.Status("process 1 exited");
  EXPECT_EQ(Written(f), "cstool msa: process 1 exited\n");
  std::fclose(f);
}

}  // namespace
}  // namespace cstool
