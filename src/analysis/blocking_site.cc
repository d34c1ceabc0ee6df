#include "analysis/blocking_site.h"

#include <algorithm>
#include <map>
#include <utility>

namespace cstool {
namespace {

// Frames that say *how* a task sleeps, never *where*: the tracing of the switch itself,
// the scheduler's entry points, and the generic wait primitives that sleep on behalf of
// their caller (completions, wait queues, bit waits, folio locks, mutexes, semaphores,
// rwsems). A name matches if it equals an entry or, for entries ending in '*', starts
// with the part before it. Specific waits (futex_wait_queue, pipe_read, do_wait,
// do_nanosleep, ep_poll, jbd2_log_wait_commit, ...) are not here: they are the sites.
constexpr std::string_view kWaitHelpers[] = {
    // the tracing of the sched_switch event that the stack trigger runs in
    "trace_event_raw_event_*",
    "perf_trace_*",
    "__traceiter_*",
    "__bpf_trace_*",
    "trace_call_bpf",
    // the scheduler
    "__schedule",
    "schedule",
    "schedule_idle",
    "schedule_preempt_disabled",
    "preempt_schedule*",
    "schedule_timeout*",
    "schedule_hrtimeout*",
    "io_schedule*",
    "poll_schedule_timeout",
    "freezable_schedule*",
    // generic waits
    "wait_woken",
    "__wait_event*",
    "wait_for_completion*",
    "__wait_for_common",
    "wait_for_common*",
    "do_wait_for_common",
    "bit_wait*",
    "__wait_on_bit*",
    "out_of_line_wait_on_bit*",
    "wait_on_page_bit*",
    "folio_wait_bit*",
    "__folio_lock*",
    "__mutex_lock*",
    "mutex_lock*",
    "rt_mutex_schedule",
    "rt_mutex_slowlock*",
    "__rt_mutex_slowlock*",
    "rwsem_down_read_slowpath",
    "rwsem_down_write_slowpath",
    "down_read*",
    "down_write*",
    "__down*",
    "down",
    "down_interruptible",
    "down_killable",
    "down_timeout",
    "percpu_rwsem_wait",
    "__percpu_down_read*",
    // the page cache's writeback waits (fsync, sync_file_range, O_SYNC writes)
    "folio_wait_writeback",
    "folio_wait_stable",
    "__filemap_fdatawait_range",
    "filemap_fdatawait*",
    "file_write_and_wait_range",
    "filemap_write_and_wait_range",
    "file_check_and_advance_wb_err",
    // the block layer's submit-and-wait and the buffer-head / libfs sync helpers that
    // filesystems call from their fsync
    "submit_bio_wait",
    "__wait_on_buffer",
    "__sync_dirty_buffer",
    "sync_dirty_buffer",
    "fsync_buffers_list",
    "generic_buffers_fsync*",
    "sync_inode_metadata",
    "writeback_single_inode",
    "__writeback_single_inode",
};

}  // namespace

std::string_view FunctionName(std::string_view frame) {
  frame = frame.substr(0, frame.find('+'));
  return frame.substr(0, frame.find('.'));
}

bool IsWaitHelper(std::string_view function) {
  for (std::string_view h : kWaitHelpers) {
    if (h.ends_with('*') ? function.starts_with(h.substr(0, h.size() - 1)) : function == h)
      return true;
  }
  return false;
}

std::string BlockingSite(std::span<const std::string> frames) {
  for (const std::string& f : frames) {
    std::string_view name = FunctionName(f);
    if (name.empty() || name.starts_with("0x")) return "?";  // an address kallsyms lacks
    if (!IsWaitHelper(name)) return std::string(name);
  }
  return "?";
}

std::vector<BlockingSiteRow> BlockingSites(const ReportModel& model, const ThreadReport& r) {
  std::map<std::pair<uint32_t, std::string_view>, BlockingSiteRow> rows;
  for (const BlockedStackStats& s : r.blocked_stacks) {
    std::string_view site =
        s.stack < model.stacks.size() ? std::string_view(model.stacks[s.stack].site) : "?";
    if (site.empty()) site = "?";
    BlockingSiteRow& row = rows[{s.cause, site}];
    row.cause = s.cause;
    row.site = site;
    row.count += s.count;
    row.blocked_ns += s.blocked_ns;
    row.stacks.push_back(&s);
  }
  std::vector<BlockingSiteRow> out;
  for (auto& [key, row] : rows) {
    std::stable_sort(row.stacks.begin(), row.stacks.end(),
                     [](const auto* a, const auto* b) { return a->blocked_ns > b->blocked_ns; });
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.blocked_ns != b.blocked_ns ? a.blocked_ns > b.blocked_ns : a.count > b.count;
  });
  return out;
}

}  // namespace cstool
