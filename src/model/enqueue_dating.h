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
  // The wakelist flush that did the enqueue began then, so its clock was read between
  // the flush and the event; -1: none did.
  int64_t flush = -1;
  // The trace holds every wakelist flush: with none (flush -1), the enqueue was done in
  // place on the wakee's CPU or by the waker, not by an idle CPU draining its wakelist.
  bool flushes_traced = false;
};

}  // namespace cstool
