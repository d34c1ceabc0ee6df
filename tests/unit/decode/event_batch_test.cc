// Event batches carry decoded events from the decoding thread to the analysing one: a
// replay must make exactly the calls the writer received, with copies of every string and
// stack, whatever the batch size, whether the event came by its Push call or was made in
// place (Begin, Commit); the queue between the threads keeps order, hands on the
// producer's error and stops the producer when the consumer leaves.
#include "decode/event_batch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "decode/event_batch_queue.h"
#include "tests/support/call_log.h"

namespace cstool {
namespace {

using ::cstool::testing::CallLog;

// One call of every kind, its strings and stack read from `text` and `frames` (which the
// test overwrites afterwards), `n` giving each round different numbers.
void PushEveryKind(EventSink& sink, const std::string& text, const std::vector<uint8_t>& frames,
                   int n, size_t filename_size) {
  auto c = [n](int k) {
    return EventCommon{1000 * n + k, n % 3, 100 + k, static_cast<uint8_t>(k),
                       static_cast<uint8_t>(n)};
  };
  auto s = [&text](size_t at, size_t len) { return std::string_view(text).substr(at, len); };
  sink.PushSchedSwitch({c(1), s(0, 5), 11, 120, 2, true, s(5, 7), 12, 110});
  sink.PushSchedWakeup({c(2), WakeupKind::kWakeupNew, s(12, 3), 13, 100, 1});
  sink.PushSchedMigrateTask({c(3), s(15, 4), 14, 0, 1});
  sink.PushSchedStatRuntime({c(4), s(19, 6), 15, 123456});
  sink.PushUnfilteredRuntime({c(5), s(25, 2), 16, 654321});
  sink.PushUnfilteredLost({c(6).ts, 1, -1});
  sink.PushUnfilteredWakelistFlush({c(25), 0xffffffff813b4440, 0xffff888102b516f8});
  sink.PushUnfilteredMigrateTask({c(27), s(70, 4), 26, 1, 0});
  sink.PushSchedProcessFork({c(7), s(27, 3), 17, s(30, 4), 18});
  sink.PushTaskNewtask({c(8), 19, s(34, 5), 0x3d0f00});
  sink.PushTaskRename({c(9), 20, s(39, 3), s(42, 6)});
  sink.PushSchedProcessExec({c(10), s(0, filename_size), 21, 22});
  sink.PushSchedProcessExit({c(11), s(48, 4), 23, true});
  sink.PushSchedProcessFree({c(12), s(52, 3), 24});
  sink.PushIrqHandlerEntry({c(13), 25, s(55, 4)});
  sink.PushIrqHandlerExit({c(14), 25, 1});
  sink.PushSoftirq({c(15), SoftirqPhase::kExit, 7, s(59, 5)});
  sink.PushIrqVector({c(16), false, 236, s(64, 11)});
  sink.PushNmiHandler({c(17), 0xffffffff81000000, 4321, 1});
  sink.PushSysEnter({c(18), 0});
  sink.PushSysExit({c(19), 1, -11});
  sink.PushPageFault({c(20), false, 0x7fff0000, 0xffffffff81234567, 6});
  sink.PushKernelStack(
      {c(21), frames.data(), static_cast<uint32_t>(frames.size() / 8), 8, n % 2 == 1});
  sink.PushSchedSwitch({c(22), {}, 0, 0, 0, false, {}, 0, 0});  // empty strings
  sink.PushLostEvents({c(23).ts, 0, 42});
  sink.PushOtherEvent(c(24), 777);
  sink.PushCsdFunctionEntry({c(26), 0xffffffff813b4440, 0xffff88810259db38}, 528);
}

TEST(EventBatch, ReplayMakesTheSameCallsWithCopiesOfEveryStringAndStack) {
  for (size_t batch_bytes : {64, 256, 4096, 65536}) {
    SCOPED_TRACE(batch_bytes);
    std::string text(10000, ' ');
    for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + i % 26);
    std::vector<uint8_t> frames(8 * 12);
    for (size_t i = 0; i < frames.size(); ++i) frames[i] = static_cast<uint8_t>(i * 7 + 1);

    CallLog direct;
    std::vector<EventBatch> batches;
    EventBatchWriter writer(batch_bytes, [&batches](EventBatch&& full) {
      batches.push_back(std::move(full));
      return EventBatch();
    });
    for (int n = 0; n < 20; ++n) {
      // Every fifth round an exec filename larger than any of these batches, every tenth
      // one larger than half the writer's staging area (it goes straight to the batch).
      const size_t filename = n % 10 == 9 ? 9000 : n % 5 == 4 ? 1500 : 9;
      PushEveryKind(direct, text, frames, n, filename);
      PushEveryKind(writer, text, frames, n, filename);
    }
    writer.Flush();
    writer.Flush();  // nothing left: no empty batch
    // The batches must not point into what the events were decoded from.
    std::fill(text.begin(), text.end(), '#');
    std::fill(frames.begin(), frames.end(), 0xee);

    CallLog replayed;
    for (const EventBatch& b : batches) {
      EXPECT_FALSE(b.empty());
      ReplayEvents(b, replayed);
    }
    ASSERT_EQ(direct.lines.size(), 20u * 27u);
    EXPECT_EQ(replayed.lines, direct.lines);
    if (batch_bytes <= 4096) {
      EXPECT_GT(batches.size(), 1u);
    }
  }
}

// The decoder makes its busiest events in place (Begin, fill, Commit): replayed, they are
// the calls their Push functions make, strings copied, among entries made the usual way,
// across the staging area's refills and the batches' hand-overs, and with strings longer
// than the room Begin leaves for them.
TEST(EventBatch, EventsMadeInPlaceReplayAsTheirPushCalls) {
  for (size_t batch_bytes : {64, 256, 4096, 65536}) {
    SCOPED_TRACE(batch_bytes);
    std::string text(1000, ' ');
    for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('A' + i % 26);
    auto s = [&text](size_t at, size_t len) { return std::string_view(text).substr(at, len); };

    CallLog direct;
    std::vector<EventBatch> batches;
    EventBatchWriter writer(batch_bytes, [&batches](EventBatch&& full) {
      batches.push_back(std::move(full));
      return EventBatch();
    });
    auto in_place = [&writer](const auto& e) {
      auto& made = writer.Begin<std::remove_cvref_t<decltype(e)>>();
      made = e;
      writer.Commit(made);
    };
    constexpr int kRounds = 400;  // some 60 KiB of entries: the stage is refilled
    for (int n = 0; n < kRounds; ++n) {
      const EventCommon c{1000 * n, n % 2, 100 + n, static_cast<uint8_t>(n), 1};
      // Strings of 1 to 40 bytes (up to 16, a task name's, copied in two words; longer
      // ones otherwise), and every seventh round longer than Begin's room.
      const size_t len = n % 7 == 6 ? 600 : 1 + static_cast<size_t>(n) % 40;
      const SchedSwitch sw{c, s(n % 50, len), 11, 120, 2, n % 3 == 0, s(7, 15), 12, 110};
      const SchedWakeup wakeup{c, WakeupKind::kWaking, s(3, len), 13, 100, 1};
      const SchedStatRuntime runtime{c, n % 5 == 0 ? std::string_view{} : s(9, len), 15,
                                     uint64_t{123456} * static_cast<uint64_t>(n)};
      const SysEnter enter{c, n};
      const SysExit exit{c, n, -n};
      const SchedMigrateTask migrate{c, s(15, 4), 14, 0, 1};
      direct.PushSchedSwitch(sw);
      direct.PushSchedWakeup(wakeup);
      direct.PushSchedMigrateTask(migrate);
      direct.PushSchedStatRuntime(runtime);
      direct.PushSysEnter(enter);
      direct.PushSysExit(exit);
      in_place(sw);
      in_place(wakeup);
      writer.PushSchedMigrateTask(migrate);  // (no in-place way)
      in_place(runtime);
      in_place(enter);
      in_place(exit);
    }
    writer.Flush();
    EXPECT_EQ(writer.entries(), 6u * kRounds);
    std::fill(text.begin(), text.end(), '#');

    CallLog replayed;
    for (const EventBatch& b : batches) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u);  // streamed a line at a time
      ReplayEvents(b, replayed);
    }
    ASSERT_EQ(direct.lines.size(), 6u * kRounds);
    EXPECT_EQ(replayed.lines, direct.lines);
  }
}

// A stack record with no frames left (all filler) still points at its record: the copy
// must not, since the page is gone by the time the batch is replayed.
TEST(EventBatch, AStackWithNoFramesPointsIntoTheBatchNotThePage) {
  const std::vector<uint8_t> page(64, 0xff);
  std::vector<EventBatch> batches;
  EventBatchWriter writer(4096, [&batches](EventBatch&& full) {
    batches.push_back(std::move(full));
    return EventBatch();
  });
  writer.PushKernelStack({EventCommon{1, 0, 2, 0, 0}, page.data(), 0, 8, false});
  writer.Flush();
  struct Frames : EventSink {
    const uint8_t* frames = nullptr;
    void PushKernelStack(const KernelStack& e) override { frames = e.frames; }
  } seen;
  ASSERT_EQ(batches.size(), 1u);
  ReplayEvents(batches[0], seen);
  const auto* begin = reinterpret_cast<const uint8_t*>(batches[0].data());
  EXPECT_GE(seen.frames, begin);
  EXPECT_LE(seen.frames, begin + batches[0].size());
}

TEST(EventBatchQueue, HandsBatchesOverInOrderAndReusesThem) {
  EventBatchQueue queue(2);
  constexpr int kBatches = 200;
  std::thread producer([&queue] {
    EventBatch b(64);
    for (int i = 0; i < kBatches; ++i) {
      if (b.capacity() == 0) b.Reserve(64);
      *reinterpret_cast<int*>(b.Append(8)) = i;
      b = queue.Push(std::move(b));
    }
    queue.Close(nullptr);
  });
  EventBatch b;
  int next = 0;
  while (queue.Pop(b)) {
    ASSERT_EQ(b.size(), 8u);
    EXPECT_EQ(*reinterpret_cast<const int*>(b.data()), next);
    ++next;
  }
  producer.join();
  EXPECT_EQ(next, kBatches);
  EXPECT_EQ(queue.error(), nullptr);
}

// A batch comes back to its producer empty, with its room.
TEST(EventBatchQueue, ABatchHandedBackIsEmptyWithItsRoom) {
  EventBatchQueue queue(2, /*spin=*/false);
  EventBatch first(8);
  first.Append(8);
  EXPECT_EQ(queue.Push(std::move(first)).capacity(), 0u);  // none handed back yet
  EventBatch taken;
  ASSERT_TRUE(queue.Pop(taken));
  EventBatch second(8);
  second.Append(8);
  queue.Push(std::move(second));
  ASSERT_TRUE(queue.Pop(taken));  // hands the first back
  EventBatch back = queue.Push(EventBatch(8));
  EXPECT_EQ(back.capacity(), 8u);
  EXPECT_TRUE(back.empty());
}

TEST(EventBatchQueue, TheProducersErrorComesAfterItsLastBatch) {
  EventBatchQueue queue(4);
  std::thread producer([&queue] {
    EventBatch b(8);
    b.Append(8);
    queue.Push(std::move(b));
    queue.Close(std::make_exception_ptr(std::runtime_error("page 7 is corrupt")));
  });
  EventBatch b;
  EXPECT_TRUE(queue.Pop(b));
  EXPECT_FALSE(queue.Pop(b));
  producer.join();
  ASSERT_NE(queue.error(), nullptr);
  EXPECT_THROW(std::rethrow_exception(queue.error()), std::runtime_error);
}

TEST(EventBatchQueue, ACancelledQueueStopsAProducerWaitingForRoom) {
  EventBatchQueue queue(1);
  bool stopped = false;
  std::thread producer([&] {
    try {
      for (;;) {
        EventBatch b(8);
        b.Append(8);
        queue.Push(std::move(b));  // the second waits: nobody takes the first
      }
    } catch (const EventBatchQueueCancelled&) {
      stopped = true;
    }
  });
  queue.Cancel();
  producer.join();
  EXPECT_TRUE(stopped);
}

}  // namespace
}  // namespace cstool
