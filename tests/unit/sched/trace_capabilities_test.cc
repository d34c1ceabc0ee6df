// The event families the model depends on: from the formats a decoder found
// (CapabilitiesOf) and, for a file that stores formats of events it did not record, from
// the records the decoding counted (UnrecordedNotedEvents).
#include "sched/trace_capabilities.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "decode/decode_trace.h"
#include "format/trace_file_reader.h"
#include "pipeline/unrecorded_events.h"
#include "tests/support/synthetic_trace.h"

namespace cstool::testing {
namespace {

const std::string kEvents = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/formats/events";

// The capabilities of a file holding the formats of `events` ("system/name") and no record.
TraceCapabilities CapabilitiesOfFormats(const std::vector<std::string>& events) {
  SyntheticTrace t(kEvents, 1);
  t.AddEvent("sched", "sched_switch");
  for (const std::string& e : events) {
    const size_t slash = e.find('/');
    t.AddEvent(e.substr(0, slash), e.substr(slash + 1));
  }
  const std::string path =
      (std::filesystem::temp_directory_path() / ("caps_" + std::to_string(::getpid()) + ".dat"))
          .string();
  t.Write(path);
  auto reader = OpenTraceFile(path);
  std::remove(path.c_str());
  EventDecoder decoder(reader->tep());
  return CapabilitiesOf(decoder);
}

TEST(TraceCapabilities, AFamilyNeedsAllItsEventsOrForInterruptsEitherKind) {
  TraceCapabilities none = CapabilitiesOfFormats({});
  EXPECT_FALSE(none.syscalls);
  EXPECT_FALSE(none.waking);
  EXPECT_FALSE(none.wakeup);
  EXPECT_FALSE(none.irqs);
  EXPECT_FALSE(none.page_faults);
  EXPECT_FALSE(none.stat_runtime);

  TraceCapabilities half = CapabilitiesOfFormats(
      {"raw_syscalls/sys_enter", "irq_vectors/local_timer_entry", "sched/sched_waking"});
  EXPECT_FALSE(half.syscalls);  // sys_exit too is needed
  EXPECT_TRUE(half.waking);
  EXPECT_FALSE(half.wakeup);
  EXPECT_TRUE(half.irqs);  // the vectors alone will do

  TraceCapabilities all = CapabilitiesOfFormats({"raw_syscalls/sys_enter", "raw_syscalls/sys_exit",
                                                 "sched/sched_wakeup", "irq/irq_handler_entry",
                                                 "exceptions/page_fault_user"});
  EXPECT_TRUE(all.syscalls);
  EXPECT_TRUE(all.wakeup);
  EXPECT_TRUE(all.irqs);
  EXPECT_TRUE(all.page_faults);
}

TEST(TraceCapabilities, NotedFamiliesWithoutRecordsAreUnrecorded) {
  DecodeStats stats;
  stats.events_per_type["irq_vectors:reschedule_entry"] = 3;
  TraceCapabilities caps;
  EXPECT_TRUE(UnrecordedNotedEvents(stats, caps) ==
              std::vector<std::string>{"exceptions:page_fault_user"});
  EXPECT_TRUE(caps.irqs);  // one vector's records are interrupts recorded
  EXPECT_FALSE(caps.page_faults);
  EXPECT_TRUE(caps.syscalls);  // the scan of record types decides these, not the counts

  TraceCapabilities none;
  none.page_faults = false;  // known missing already: not listed again
  EXPECT_TRUE(UnrecordedNotedEvents({}, none) ==
              (std::vector<std::string>{"irq:irq_handler_entry", "irq_vectors:*"}));
  EXPECT_FALSE(none.irqs);
}

}  // namespace
}  // namespace cstool::testing
