// `cstool nmi-inject`: option parsing only; the work is in commands/nmi_inject_command.
#include <iostream>
#include <memory>

#include "cmd/commands.h"
#include "cmd/duration_option.h"
#include "commands/nmi_inject_command.h"

namespace cstool::cmd {

RunFn SetupNmiInject(CLI::App& sub) {
  auto options = std::make_shared<NmiInjectOptions>();
  sub.add_option("--cpu", options->cpu, "CPU to interrupt")->required();
  sub.add_option("--source", options->source,
                 "timer (perf clock hrtimer), ipi (function-call IPIs) or nmi (hardware PMU)")
      ->capture_default_str();
  sub.add_option("--rate", options->rate_hz, "Interrupts per second")->capture_default_str();
  // (Its 0 stays "until Ctrl-C": without -N it runs the default time.)
  AddDurationOption(sub, options->duration_s,
                    "How long to run: seconds, or a duration with its unit (300ms); 0: until "
                    "Ctrl-C")
      ->capture_default_str();
  sub.add_flag("--noise", options->noise,
               "Also trace every interrupt and switch on the CPU and print the noise in rtla "
               "osnoise's columns");
  sub.footer(
      "Examples:\n"
      "  cstool nmi-inject --cpu 1 --rate 5000 --duration 2\n"
      "  cstool nmi-inject --cpu 1 --source ipi --rate 20000\n"
      "  cstool nmi-inject --cpu 1 --rate 2000 -N 500ms --noise\n"
      "Needs root: per-CPU perf events and a private tracefs instance that measures the\n"
      "rate achieved.");
  return
      [options](Messages& messages) -> int { return RunNmiInject(*options, std::cout, messages); };
}

}  // namespace cstool::cmd
