// Per-CPU interrupt nesting: which hardirqs, vectors and softirqs are in progress on a
// CPU, innermost last, so that a running thread's time is irq or softirq while they last
// and each completed interval can be reported with its start. Also the interned names
// ("irq:24 virtio0", "vector:local_timer", "softirq:TIMER") intervals are reported with.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "sched/observer.h"

namespace cstool {

class IrqNesting {
 public:
  struct Frame {
    IrqKind kind;
    const std::string* name;  // null for a frame deeper than the stack keeps
    int64_t start;
  };
  // What an exit closed; `mismatch` when the open frame was of another kind (an entry or
  // exit was lost).
  struct Closed {
    Frame frame;
    bool mismatch;
  };

  void Push(IrqKind kind, const std::string* name, int64_t ts) {
    if (depth_ < static_cast<int>(stack_.size())) stack_[depth_] = {kind, name, ts};
    ++depth_;
    if (IsHard(kind)) ++hard_depth_;
  }
  // The frame an exit of `kind` at `ts` closes; nullopt when none is open (the trace
  // began inside the interrupt).
  std::optional<Closed> Pop(IrqKind kind, int64_t ts) {
    if (depth_ == 0) return std::nullopt;
    --depth_;
    Frame frame{kind, nullptr, ts};
    if (depth_ < static_cast<int>(stack_.size())) frame = stack_[depth_];
    if (IsHard(frame.kind)) --hard_depth_;
    return Closed{frame, frame.kind != kind};
  }
  bool InHardirq() const { return hard_depth_ > 0; }  // a hardirq or vector handler
  bool InAny() const { return depth_ > 0; }
  // The name of the innermost interrupt in progress; null when none is, or when the
  // trace did not show its entry (deeper than the stack keeps).
  const std::string* InnermostName() const {
    if (depth_ == 0 || depth_ > static_cast<int>(stack_.size())) return nullptr;
    return stack_[depth_ - 1].name;
  }
  void Clear() { depth_ = hard_depth_ = 0; }  // after lost events: nothing is known

 private:
  static bool IsHard(IrqKind k) { return k == IrqKind::kHardirq || k == IrqKind::kVector; }
  std::array<Frame, 16> stack_{};
  int depth_ = 0;
  int hard_depth_ = 0;
};

// Interval names, made once per interrupt and kept for the whole analysis (observers
// keep the string_views they are given).
class IrqNames {
 public:
  const std::string* Irq(int32_t irq, std::string_view name);
  const std::string* Vector(std::string_view name);
  const std::string* Softirq(uint32_t vec, std::string_view name);
  const std::string& Nmi() const { return nmi_; }

 private:
  std::unordered_map<int64_t, std::string> irqs_;
  std::unordered_map<std::string, std::string> vectors_;
  std::unordered_map<uint32_t, std::string> softirqs_;
  std::string nmi_ = "nmi";
};

}  // namespace cstool
