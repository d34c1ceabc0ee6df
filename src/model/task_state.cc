#include "model/task_state.h"

#include <traceevent/event-parse.h>

#include <cstdlib>
#include <cstring>
#include <functional>

#include "model/events.h"

namespace cstool {
namespace {

std::optional<uint64_t> ParseNumber(const char* s) {
  if (s == nullptr || *s == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const bool negative = s[0] == '-';
  uint64_t v =
      negative ? static_cast<uint64_t>(std::strtoll(s, &end, 0)) : std::strtoull(s, &end, 0);
  if (errno != 0 || end == s) return std::nullopt;
  while (*end == 'U' || *end == 'L' || *end == 'u' || *end == 'l') ++end;  // 1UL
  if (*end != '\0') return std::nullopt;
  return v;
}

bool Is(const char* op, const char* want) { return op != nullptr && std::strcmp(op, want) == 0; }

// Visits every node of a print-arg list/tree (depth first).
void Walk(const tep_print_arg* arg, const std::function<void(const tep_print_arg*)>& fn) {
  for (; arg != nullptr; arg = arg->next) {
    fn(arg);
    switch (arg->type) {
      case TEP_PRINT_OP:
        if (arg->op.left) Walk(arg->op.left, fn);
        if (arg->op.right) Walk(arg->op.right, fn);
        break;
      case TEP_PRINT_TYPE:
        if (arg->typecast.item) Walk(arg->typecast.item, fn);
        break;
      case TEP_PRINT_FLAGS:
        if (arg->flags.field) Walk(arg->flags.field, fn);
        break;
      case TEP_PRINT_SYMBOL:
        if (arg->symbol.field) Walk(arg->symbol.field, fn);
        break;
      case TEP_PRINT_FUNC:
        if (arg->func.args) Walk(arg->func.args, fn);
        break;
      default:
        break;
    }
  }
}

// Walk() over one node and its children only (not its `next` siblings).
void WalkOne(const tep_print_arg* arg, const std::function<void(const tep_print_arg*)>& fn) {
  if (arg == nullptr) return;
  tep_print_arg copy = *arg;
  copy.next = nullptr;
  Walk(&copy, fn);
}

bool References(const tep_print_arg* arg, std::string_view field) {
  bool found = false;
  WalkOne(arg, [&](const tep_print_arg* a) {
    if (a->type == TEP_PRINT_FIELD && a->field.name != nullptr && field == a->field.name)
      found = true;
  });
  return found;
}

bool IsPlusAtom(const tep_print_arg* a) {
  return a != nullptr && a->type == TEP_PRINT_ATOM && Is(a->atom.atom, "+");
}

}  // namespace

std::optional<uint64_t> EvalPrintArg(const tep_print_arg* arg, std::string_view field,
                                     uint64_t value) {
  if (arg == nullptr) return std::nullopt;
  switch (arg->type) {
    case TEP_PRINT_ATOM:
      return ParseNumber(arg->atom.atom);
    case TEP_PRINT_FIELD:
      if (arg->field.name != nullptr && field == arg->field.name) return value;
      return std::nullopt;
    case TEP_PRINT_TYPE:
      return EvalPrintArg(arg->typecast.item, field, value);
    case TEP_PRINT_OP:
      break;
    default:
      return std::nullopt;
  }
  const char* op = arg->op.op;
  if (Is(op, "?")) {
    auto cond = EvalPrintArg(arg->op.left, field, value);
    const tep_print_arg* colon = arg->op.right;
    if (!cond || colon == nullptr || colon->type != TEP_PRINT_OP || !Is(colon->op.op, ":"))
      return std::nullopt;
    return EvalPrintArg(*cond ? colon->op.left : colon->op.right, field, value);
  }
  auto r = EvalPrintArg(arg->op.right, field, value);
  if (arg->op.left == nullptr) {  // unary
    if (!r) return std::nullopt;
    if (Is(op, "!")) return uint64_t{*r == 0};
    if (Is(op, "~")) return ~*r;
    if (Is(op, "-")) return uint64_t{0} - *r;
    if (Is(op, "+")) return *r;
    return std::nullopt;
  }
  auto l = EvalPrintArg(arg->op.left, field, value);
  if (!l || !r) return std::nullopt;
  const uint64_t a = *l, b = *r;
  if (Is(op, "+")) return a + b;
  if (Is(op, "-")) return a - b;
  if (Is(op, "*")) return a * b;
  if (Is(op, "/")) return b == 0 ? std::nullopt : std::optional<uint64_t>(a / b);
  if (Is(op, "%")) return b == 0 ? std::nullopt : std::optional<uint64_t>(a % b);
  if (Is(op, "<<")) return b >= 64 ? 0 : a << b;
  if (Is(op, ">>")) return b >= 64 ? 0 : a >> b;
  if (Is(op, "&")) return a & b;
  if (Is(op, "|")) return a | b;
  if (Is(op, "^")) return a ^ b;
  if (Is(op, "&&")) return uint64_t{a != 0 && b != 0};
  if (Is(op, "||")) return uint64_t{a != 0 || b != 0};
  if (Is(op, "==")) return uint64_t{a == b};
  if (Is(op, "!=")) return uint64_t{a != b};
  if (Is(op, "<")) return uint64_t{a < b};
  if (Is(op, ">")) return uint64_t{a > b};
  if (Is(op, "<=")) return uint64_t{a <= b};
  if (Is(op, ">=")) return uint64_t{a >= b};
  return std::nullopt;
}

uint16_t TaskStateBitsForLetter(std::string_view letter) {
  if (letter == "S") return kStateInterruptible;
  if (letter == "D") return kStateUninterruptible;
  if (letter == "T") return kStateStopped;
  if (letter == "t") return kStateTraced;
  if (letter == "X" || letter == "x") return kStateDead;  // x: TASK_DEAD before 4.14
  if (letter == "Z") return kStateZombie;
  if (letter == "P") return kStateParked;
  if (letter == "I") return kStateIdle;
  if (letter == "N") return kStateIdle;          // TASK_NOLOAD: D|N was TASK_IDLE before 4.14
  if (letter == "K" || letter == "W") return 0;  // wakekill / waking modifiers
  return kStateUnknownBits;
}

TaskStateMap::TaskStateMap(uint64_t state_mask, uint64_t preempt_mask, std::vector<Flag> flags)
    : state_mask_(state_mask),
      preempt_mask_(preempt_mask),
      flags_(std::move(flags)),
      from_format_(true) {
  BuildTable();
}

TaskStateMap::TaskStateMap(const tep_event* ev) {
  const tep_print_arg* args = ev != nullptr ? ev->print_fmt.args : nullptr;
  const tep_print_arg* flags_arg = nullptr;
  const tep_print_arg* plus_cond = nullptr;
  Walk(args, [&](const tep_print_arg* a) {
    if (a->type == TEP_PRINT_FLAGS && flags_arg == nullptr &&
        References(a->flags.field, "prev_state"))
      flags_arg = a;
    if (a->type == TEP_PRINT_OP && Is(a->op.op, "?") && plus_cond == nullptr) {
      const tep_print_arg* colon = a->op.right;
      if (colon != nullptr && colon->type == TEP_PRINT_OP && Is(colon->op.op, ":") &&
          IsPlusAtom(colon->op.left) && References(a->op.left, "prev_state"))
        plus_cond = a->op.left;
    }
  });
  if (flags_arg != nullptr) {
    auto mask = EvalPrintArg(flags_arg->flags.field, "prev_state", ~uint64_t{0});
    for (const tep_print_flag_sym* f = flags_arg->flags.flags; f != nullptr; f = f->next) {
      auto v = ParseNumber(f->value);
      if (!v || f->str == nullptr) continue;
      flags_.push_back({*v, f->str});
    }
    if (mask && !flags_.empty()) {
      state_mask_ = *mask;
      from_format_ = true;
    }
  }
  if (from_format_) {
    if (plus_cond != nullptr) {
      for (int b = 0; b < 64; ++b) {
        auto on = EvalPrintArg(plus_cond, "prev_state", uint64_t{1} << b);
        if (on && *on != 0) preempt_mask_ |= uint64_t{1} << b;
      }
    }
    if (preempt_mask_ == 0) {
      from_format_ = false;
      problem_ = "sched_switch print format has no prev_state \"+\" condition";
    }
  } else {
    problem_ = ev == nullptr ? "no sched_switch format"
                             : "sched_switch print format has no __print_flags over prev_state";
  }
  if (!from_format_) {  // layout of kernels >= 4.14 (TASK_REPORT_MAX = 0x100)
    state_mask_ = 0xff;
    preempt_mask_ = 0x100;
    flags_ = {{0x01, "S"}, {0x02, "D"}, {0x04, "T"}, {0x08, "t"},
              {0x10, "X"}, {0x20, "Z"}, {0x40, "P"}, {0x80, "I"}};
  }
  BuildTable();
}

DecodedTaskState TaskStateMap::Compute(uint64_t raw) const {
  DecodedTaskState out;
  out.preempted = (raw & preempt_mask_) != 0;
  uint64_t v = raw & state_mask_;
  if (v == 0) return out;
  for (const Flag& f : flags_) {
    if (f.value != 0 && (v & f.value) == f.value) {
      out.bits |= TaskStateBitsForLetter(f.letter);
      v &= ~f.value;
    }
  }
  if (v != 0) out.bits |= kStateUnknownBits;
  // TASK_IDLE was D|N before 4.14: report it as idle, not as D sleep.
  if ((out.bits & kStateIdle) && (out.bits & kStateUninterruptible))
    out.bits &= static_cast<uint16_t>(~kStateUninterruptible);
  return out;
}

void TaskStateMap::BuildTable() {
  const uint64_t mask = state_mask_ | preempt_mask_;
  table_.clear();
  table_mask_ = 0;
  if (mask >= (1u << 14)) return;  // compute on the fly
  uint64_t size = 1;
  while (size <= mask) size <<= 1;
  // Bits outside both masks never matter, so index by raw & mask (mask < size).
  table_mask_ = mask;
  table_.resize(size);
  for (uint64_t raw = 0; raw < size; ++raw) table_[raw] = Compute(raw);
}

std::vector<std::pair<uint64_t, std::string>> PrintSymbols(const tep_event* event,
                                                           std::string_view field) {
  std::vector<std::pair<uint64_t, std::string>> out;
  if (event == nullptr) return out;
  bool done = false;
  Walk(event->print_fmt.args, [&](const tep_print_arg* a) {
    if (done || a->type != TEP_PRINT_SYMBOL || !References(a->symbol.field, field)) return;
    for (const tep_print_flag_sym* s = a->symbol.symbols; s != nullptr; s = s->next) {
      auto v = ParseNumber(s->value);
      if (v && s->str != nullptr) out.emplace_back(*v, s->str);
    }
    done = true;
  });
  return out;
}

}  // namespace cstool
