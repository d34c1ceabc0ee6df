// Progress and result lines of `cstool nmi-inject`: requested vs achieved rate per
// second and overall.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "interrupts/injection_tally.h"

namespace cstool {

struct InjectHeader {
  std::string source;  // "timer"
  int cpu = 0;
  double rate_hz = 0;
  double duration_s = 0;      // 0: until Ctrl-C
  std::string mechanism;      // InterruptInjector::Describe()
  std::string achieved_what;  // what "achieved" counts
  std::string context_what;   // what the context column counts (may be empty)
};

class InjectOutput {
 public:
  explicit InjectOutput(std::ostream& os) : os_(os) {}
  void Header(const InjectHeader& h);
  void Interval(const InjectInterval& iv);
  void Total(const InjectInterval& total, uint64_t lost_events);

 private:
  std::ostream& os_;
  InjectHeader header_;
};

}  // namespace cstool
