// A synthetic ping-pong like `cstool_workload pingpong`, for the timeline size tests: two
// threads of one process on two CPUs passing a byte through pipes (write, wakeup, read,
// sleep), 1000 round trips at a realistic uptime (2239 s: 14-character timestamps) with
// 5-digit tids. Its size in either timeline format is deterministic.
#pragma once

#include <cstdint>

#include "tests/support/sim.h"

namespace cstool::testing {

// Scripts the ping-pong into `sim` and returns how many trace events it holds.
inline uint64_t ScriptPingPong(Sim& sim) {
  uint64_t events = 0;
  constexpr int kA = 21908, kB = 21912;
  int64_t ts = 2'239'107'849'654;
  auto at = [&](int64_t dt) {
    ts += dt;
    ++events;
    return ts;
  };
  sim.Switch(at(1000), 0, 0, kR, kA, false, "pingpong");
  sim.Switch(at(1000), 1, 0, kR, kB, false, "pingpong");
  sim.SysEnter(at(1000), 1, kB, kRead);
  sim.Switch(at(1000), 1, kB, kS, 0);
  for (int round = 0; round < 1000; ++round) {
    sim.SysEnter(at(1237), 0, kA, kWrite);
    sim.WakeBoth(at(2113), 0, kA, kB, 1);
    ++events;  // WakeBoth is two events
    sim.SysExit(at(1411), 0, kA, kWrite);
    sim.Switch(at(1733), 1, 0, kR, kB, false, "pingpong");
    sim.SysEnter(at(509), 0, kA, kRead);
    sim.Switch(at(1021), 0, kA, kS, 0);
    sim.SysExit(at(1303), 1, kB, kRead);
    sim.SysEnter(at(1237), 1, kB, kWrite);
    sim.WakeBoth(at(2113), 1, kB, kA, 0);
    ++events;
    sim.SysExit(at(1411), 1, kB, kWrite);
    sim.Switch(at(1733), 0, 0, kR, kA, false, "pingpong");
    sim.SysEnter(at(509), 1, kB, kRead);
    sim.Switch(at(1021), 1, kB, kS, 0);
    sim.SysExit(at(1303), 0, kA, kRead);
  }
  sim.Finish(at(1000));
  return events;
}

}  // namespace cstool::testing
