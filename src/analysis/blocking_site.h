// Which function of a sleep's kernel call chain is its blocking site: the first frame
// below the tracing, scheduler and generic wait helpers (the rule, with its list of
// helpers, is in blocking_site.cc and the cstool-report man page).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/report_model.h"

namespace cstool {

// A symbol without its compiler suffix ("do_select.constprop.0" -> "do_select") and
// without an offset ("anon_pipe_read+0x1f5/0x4a0" -> "anon_pipe_read").
std::string_view FunctionName(std::string_view frame);

// Whether `function` (a FunctionName) is a tracing, scheduler or wait helper.
bool IsWaitHelper(std::string_view function);

// The blocking site of a call chain given innermost first: the FunctionName of the
// first frame that is no wait helper; "?" when every frame is one (or none is known).
std::string BlockingSite(std::span<const std::string> frames);

// One row of a thread's site table: its sleeps with the same cause and site.
struct BlockingSiteRow {
  uint32_t cause = 0;  // packed SwitchCause
  std::string site;
  uint64_t count = 0;
  int64_t blocked_ns = 0;
  std::vector<const BlockedStackStats*> stacks;  // the call chains, most blocked time first
};

// The sites of `r` by (cause, site), most blocked time first.
std::vector<BlockingSiteRow> BlockingSites(const ReportModel& model, const ThreadReport& r);

}  // namespace cstool
