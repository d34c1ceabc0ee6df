// Writing memory back out of this core's caches, for buffers that two threads pass back
// and forth (one fills, the other reads, then it is refilled). When the filling thread
// writes a line the reading core still holds, each store waits for that core to give the
// line up; on the project's VMs that made the hand-over cost as much as the work it
// spread. Evicting a buffer once it has been read turns those stores into plain misses.
#pragma once

#include <cstddef>

namespace cstool {

// Evicts the cache lines of [p, p + bytes) from every cache (a no-op where the
// instruction is missing). The data stay as they are.
void EvictCacheLines(const void* p, size_t bytes);

}  // namespace cstool
