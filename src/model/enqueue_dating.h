// How the trace dates the enqueue of a woken thread (its sched_wakeup after the
// sched_waking), where the kernel's run delay for that wakeup starts.
#pragma once

#include <cstdint>

namespace cstool {

struct EnqueueDating {
  // Dated at the sched_wakeup's own time (no increment dated the enqueue's clock): the
  // event comes after that clock by the enqueue's own work, or by a stall of the virtual
  // CPU between the two.
  bool at_event = false;
  // When the wakelist flush that did the enqueue began (its clock was read between the
  // flush and the event); -1: none did, or the enqueue is not dated at its event.
  int64_t flush_ts = -1;
  // When its sched_waking was, traced on the CPU the sched_wakeup was traced on: one call
  // (try_to_wake_up(), interrupts off throughout) that, when it enqueued, read the clock
  // between the two, in place or on the target's runqueue; -1: another CPU's call, a
  // flush dated it, or the enqueue is not dated at its event.
  int64_t waking_ts = -1;
  // The file holds every wakelist flush (none was lost): with none (flush_ts -1), the
  // enqueue was done in place on the wakee's CPU or by the waker, not by an idle CPU
  // draining its wakelist.
  bool flushes_traced = false;
};

}  // namespace cstool
