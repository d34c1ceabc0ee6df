// `cstool irq`: option parsing only; the work is in commands/irq_command.
#include <iostream>
#include <memory>
#include <string>

#include "base/cpu_list.h"
#include "cmd/commands.h"
#include "cmd/duration_option.h"
#include "commands/irq_command.h"

namespace cstool::cmd {

RunFn SetupIrq(CLI::App& sub) {
  auto options = std::make_shared<IrqOptions>();
  auto cpu_list = std::make_shared<std::string>();
  CLI::Option* duration = AddDurationOption(sub, options->duration_s,
                                            "Record for this many seconds, > 0, or with a unit: "
                                            "300ms, 2s (omit -N to record until Ctrl-C)");
  sub.add_option("-C,--cpus", *cpu_list, "CPUs to watch, e.g. 0,1 or 0-3 (default: all)");
  sub.add_option("--format", options->format, "Output format: table or json")
      ->capture_default_str();
  sub.add_option("-o,--output", options->output,
                 "Keep the raw trace in this file (for cstool report)");
  sub.add_option("-b,--buffer-size", options->buffer_kb, "Ring buffer size per CPU in KiB")
      ->capture_default_str();
  CLI::Option* noise = sub.add_flag(
      "--noise", options->noise,
      "Show the noise per CPU in rtla osnoise's columns (HW NMI IRQ Softirq Thread) instead");
  sub.add_option("--period", options->period_s,
                 "With --noise: the period Max Noise is measured over, in seconds or with "
                 "a unit (100ms)")
      ->transform(SecondsOfDuration)
      ->type_name("DURATION")
      ->capture_default_str()
      ->needs(noise);
  sub.add_flag("--affinity", options->affinity,
               "Show IRQ affinities, or with IRQ=CPUS / all=CPUS move IRQs")
      ->excludes(noise);
  sub.add_option("assignments", options->assignments,
                 "With --affinity: IRQ=CPUS (IRQ may be a list like 24,30-33) or all=CPUS");
  sub.footer(
      "Examples:\n"
      "  cstool irq -N 5                 interrupts on every CPU for 5 s\n"
      "  cstool irq -C 1 --format json   CPU 1 until Ctrl-C, as JSON\n"
      "  cstool irq -N 10 --noise        noise per CPU, as rtla osnoise top shows it\n"
      "  cstool irq --affinity           where each IRQ may go and where it goes\n"
      "  cstool irq --affinity all=0     move every movable IRQ to CPU 0");
  return [options, cpu_list, duration](Messages& messages) -> int {
    CheckDuration(*duration, options->duration_s, "record until Ctrl-C");
    if (!cpu_list->empty()) options->cpus = ParseCpuList(*cpu_list);
    return RunIrq(*options, std::cout, messages);
  };
}

}  // namespace cstool::cmd
