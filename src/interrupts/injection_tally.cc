#include "interrupts/injection_tally.h"

namespace cstool {
namespace {

constexpr int64_t kSecond = 1000000000;

}  // namespace

void InjectionTally::Push(int idx, int64_t ts) {
  const bool achieved = idx == achieved_idx_;
  const bool context = idx == context_idx_;
  const bool repeated = achieved && achieved_in_context_ && achieved_since_context_;
  if (context) achieved_since_context_ = false;
  if (achieved) achieved_since_context_ = true;
  if (ts < start_ || ts >= end_ || !(achieved || context)) return;
  auto k = static_cast<size_t>((ts - start_) / kSecond);
  if (seconds_.size() <= k) seconds_.resize(k + 1);
  for (InjectInterval* iv : {&seconds_[k], &total_}) {
    iv->achieved += achieved ? 1 : 0;
    iv->context += context ? 1 : 0;
    iv->repeated += repeated ? 1 : 0;
  }
}

}  // namespace cstool
