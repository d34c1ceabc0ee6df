#include "counters/thread_counters.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/errors.h"

namespace cstool {
namespace {

// The thread exited: its /proc entry is gone (a non-leader thread is released at once)
// or it is a zombie (a leader waiting to be reaped). Checked before a group is read, so
// that a read after it holds the final counts. (poll(2) cannot tell: a counting event
// without a ring buffer always reports POLLHUP.)
bool ThreadGone(int32_t tgid, int32_t tid, bool or_exiting = false) {
  std::ifstream in(fmt::format("/proc/{}/task/{}/stat", tgid, tid));
  std::string stat;
  if (!std::getline(in, stat)) return true;
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return true;
  const char state = stat[paren + 2];
  if (state == 'Z' || state == 'X' || state == 'x') return true;
  if (!or_exiting) return false;
  // On its way out: PF_EXITING, set before do_exit() closes the thread's counters, in
  // the flags (after the state: ppid, pgrp, session, tty, tpgid, flags).
  std::istringstream fields(stat.substr(paren + 3));
  std::string skipped;
  for (int i = 0; i < 5; ++i) fields >> skipped;
  unsigned long flags = 0;
  constexpr unsigned long kPfExiting = 0x4;
  return (fields >> flags) && (flags & kPfExiting) != 0;
}

}  // namespace

ThreadCounters::ThreadCounters(std::vector<CounterEvent> events,
                               std::vector<VirtualCounter> virtuals)
    : events_(std::move(events)) {
  for (size_t i = 0; i < events_.size(); ++i) {
    names_.push_back(events_[i].name);
    if (events_[i].ebs_period != 0) sampled_column_ = i;
  }
  for (VirtualCounter& v : virtuals)
    if (v.per_thread()) {
      names_.push_back(v.name);
      virtuals_.push_back(std::move(v));
    }
}

bool ThreadCounters::Follow(int32_t tgid, int32_t tid) {
  if (!seen_.insert(tid).second) return threads_.count(tid) != 0;
  Counted f;
  f.tgid = tgid;
  if (!events_.empty()) {
    int error = 0;
    f.group = PerfGroup::Open(tid, events_, &error);
    if (!f.group) {
      // Gone before its group was open: ESRCH, or ENODEV when it exited between the
      // leader's open and a member's (6.16 on: the kernel then refuses members of the
      // leader, which the exit marked dead). A thread born and gone in between is not
      // counted.
      if (error == ESRCH || (error == ENODEV && ThreadGone(tgid, tid, true))) return false;
      throw Error(fmt::format("counters: cannot open the counter group on thread {}: {}", tid,
                              std::strerror(error)));
    }
  }
  if (!virtuals_.empty()) {
    std::optional<ThreadIo> io = ReadThreadIo(tgid, tid);
    if (!io) return false;
    f.base_io = f.last_io = *io;
  }
  threads_.emplace(tid, std::move(f));
  return true;
}

ThreadReading ThreadCounters::Read(int32_t tid, Counted& f, int64_t ts, bool* exited) {
  ThreadReading r;
  r.tid = tid;
  r.tgid = f.tgid;
  r.ts = ts;
  // Exit first: a group read after the exit holds the final values.
  bool gone = ThreadGone(f.tgid, tid);
  if (f.group) {
    if (std::optional<GroupReading> g = f.group->Read()) {
      r.values = std::move(g->values);
      r.scaled = g->scaled;
    } else {
      r.values.assign(events_.size(), 0);
      gone = true;
    }
  }
  if (!virtuals_.empty()) {
    // A zombie's entry still tells its final counts (a process's last thread waits for
    // its parent); a released thread's is gone, and its exit record tells them later.
    if (std::optional<ThreadIo> io = ReadThreadIo(f.tgid, tid)) {
      f.last_io = *io;
    } else {
      gone = true;
      io_unread_at_exit_[tid] = f.base_io;
    }
    for (const VirtualCounter& v : virtuals_)
      r.values.push_back(v.kind == VirtualCounter::Kind::kReadBytes
                             ? f.last_io.rchar - f.base_io.rchar
                             : f.last_io.wchar - f.base_io.wchar);
  }
  r.exited = gone;
  *exited = gone;
  // After the read: an exited thread's ring holds all its samples, and the group goes
  // away with the thread's entry.
  DrainInto(tid, f);
  return r;
}

void ThreadCounters::DrainInto(int32_t tid, Counted& f) {
  if (!f.group || !f.group->sampling()) return;
  drained_.clear();
  f.group->DrainSamples(&drained_);
  for (GroupSample& g : drained_)
    pending_samples_.push_back(
        {g.tid != 0 ? g.tid : tid, f.tgid, g.ts, g.cpu, g.ip, std::move(g.values), g.scaled});
  sampling_stats_[tid] = f.group->sampling_stats();
}

std::vector<CounterOverflow> ThreadCounters::DrainSamples() {
  for (auto& [tid, f] : threads_) DrainInto(tid, f);
  std::vector<CounterOverflow> out = std::move(pending_samples_);
  pending_samples_.clear();
  return out;
}

void ThreadCounters::StopAll() {
  for (auto& [tid, f] : threads_)
    if (f.group) f.group->Disable();
}

std::vector<ThreadReading> ThreadCounters::ReadAll(int64_t ts) {
  std::vector<ThreadReading> out;
  for (auto it = threads_.begin(); it != threads_.end();) {
    bool exited = false;
    out.push_back(Read(it->first, it->second, ts, &exited));
    it = exited ? threads_.erase(it) : std::next(it);
  }
  return out;
}

std::vector<ThreadReading> ThreadCounters::ReadExited(int64_t ts) {
  std::vector<ThreadReading> out;
  for (auto it = threads_.begin(); it != threads_.end();) {
    if (!ThreadGone(it->second.tgid, it->first)) {
      ++it;
      continue;
    }
    bool exited = false;
    out.push_back(Read(it->first, it->second, ts, &exited));
    it = threads_.erase(it);
  }
  return out;
}

void ThreadCounters::SetFinalIo(int32_t tid, const ThreadIo& final,
                                std::vector<uint64_t>& values) const {
  auto it = io_unread_at_exit_.find(tid);
  if (it == io_unread_at_exit_.end() || values.size() != names_.size()) return;
  const ThreadIo& base = it->second;
  size_t column = events_.size();
  for (const VirtualCounter& v : virtuals_) {
    // The last read is exact but may be old; the final count may be rounded down (the
    // kernel's exit record keeps whole KiB): the larger is nearer.
    const bool read = v.kind == VirtualCounter::Kind::kReadBytes;
    const uint64_t from = read ? base.rchar : base.wchar;
    const uint64_t to = read ? final.rchar : final.wchar;
    if (to >= from) values[column] = std::max(values[column], to - from);
    ++column;
  }
}

}  // namespace cstool
