#include "analysis/diff_input.h"

#include <utility>

namespace cstool {

DiffRecording DiffRecordingOf(const ReportView& view, std::string file) {
  DiffRecording out;
  out.file = std::move(file);
  out.threads.reserve(view.threads.size());
  for (const ThreadReport* r : view.threads) {
    const Thread& t = *r->thread;
    DiffThread d;
    d.tid = t.tid;
    d.pid = PidKnown(t) ? t.tgid : 0;
    d.comm = t.comm;
    d.created_in_trace = t.created_in_trace;
    d.first_ts = t.first_ts;
    d.lifetime_ns = r->Lifetime();
    d.microstates = r->microstates;
    for (auto& [label, n] : view.Causes(*r)) d.causes[label] += n;
    for (auto& [nr, s] : r->syscalls) {
      SyscallStats& into = d.syscalls[view.syscalls->Name(nr)];
      into.calls += s.calls;
      into.blocked += s.blocked;
      into.time_ns += s.time_ns;
    }
    for (auto& [name, s] : r->irqs) {
      IrqStats& into = d.irqs[*name];
      into.count += s.count;
      into.time_ns += s.time_ns;
    }
    out.threads.push_back(std::move(d));
  }
  return out;
}

}  // namespace cstool
