#include "commands/nmi_inject_command.h"

#include <fmt/core.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <optional>
#include <thread>
#include <vector>

#include "base/cpu_list.h"
#include "base/errors.h"
#include "base/stop_signal.h"
#include "base/temp_file.h"
#include "format/trace_file_writer.h"
#include "interrupts/injection_tally.h"
#include "interrupts/interrupt_injector.h"
#include "interrupts/perf_event.h"
#include "kernel/kallsyms.h"
#include "output/inject_output.h"
#include "output/noise_output.h"
#include "pipeline/irq_analysis.h"
#include "tracefs/cpu_event_counter.h"
#include "tracefs/session_formats.h"
#include "tracefs/tracefs_session.h"

namespace cstool {
namespace {

constexpr size_t kBufferKb = 2048;
constexpr int64_t kPollNs = 50000000;
constexpr int64_t kSecond = 1000000000;
// Events stamped up to this long before a poll may still be on their way into the buffer.
constexpr int64_t kSettleNs = 20000000;

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * kSecond + ts.tv_nsec;
}

// What is counted as the achieved rate, and as context, for each source.
struct CountPlan {
  std::vector<std::string> events;  // "system:event" for the session
  EventName achieved;
  std::string achieved_field;  // empty: every record
  uint64_t achieved_value = 0;
  std::string achieved_what;
  bool achieved_in_context = false;  // each achieved event runs inside a context event
  std::optional<EventName> context;
  std::string context_what;
};

CountPlan PlanFor(InjectSource source, int cpu) {
  CountPlan p;
  switch (source) {
    case InjectSource::kTimer: {
      EventName local_timer{"irq_vectors", "local_timer_entry"};
      p.context = local_timer;
      p.context_what =
          fmt::format("every local timer interrupt on CPU {} (includes the tick)", cpu);
      if (auto addr = KernelSymbolAddress("perf_swevent_hrtimer")) {
        p.events = {"irq_vectors:local_timer_entry", "timer:hrtimer_expire_entry"};
        p.achieved = {"timer", "hrtimer_expire_entry"};
        p.achieved_field = "function";
        p.achieved_value = *addr;
        p.achieved_in_context = true;
        p.achieved_what = fmt::format(
            "expiries of the perf clock's hrtimer (perf_swevent_hrtimer) on CPU {}, each in a "
            "local timer interrupt (timer:hrtimer_expire_entry)",
            cpu);
      } else {
        p.events = {"irq_vectors:local_timer_entry"};
        p.achieved = local_timer;
        p.achieved_what = fmt::format(
            "local timer interrupts on CPU {}, tick included (perf_swevent_hrtimer's address is "
            "hidden by kernel.kptr_restrict)",
            cpu);
        p.context.reset();
        p.context_what.clear();
      }
      break;
    }
    case InjectSource::kIpi:
      p.events = {"irq_vectors:call_function_single_entry", "irq_vectors:call_function_entry"};
      p.achieved = {"irq_vectors", "call_function_single_entry"};
      p.achieved_what =
          fmt::format("function-call IPIs handled on CPU {} (call_function_single_entry)", cpu);
      p.context = EventName{"irq_vectors", "call_function_entry"};
      p.context_what = fmt::format("multi-target function-call IPIs on CPU {}", cpu);
      break;
    case InjectSource::kNmi:
      p.events = {"nmi:nmi_handler"};
      p.achieved = {"nmi", "nmi_handler"};
      p.achieved_what = fmt::format("NMI handlers run on CPU {} (nmi:nmi_handler)", cpu);
      break;
  }
  return p;
}

void Validate(const NmiInjectOptions& o) {
  if (o.cpu < 0) throw Error("--cpu N is required", ExitCode::kUsage);
  std::vector<int> online = OnlineCpus();
  if (!std::binary_search(online.begin(), online.end(), o.cpu))
    throw Error(fmt::format("CPU {} is not online (online: {})", o.cpu, FormatCpuList(online)),
                ExitCode::kUsage);
  if (!(o.rate_hz > 0) || !std::isfinite(o.rate_hz))
    throw Error("--rate must be a positive number of interrupts per second", ExitCode::kUsage);
  if (o.duration_s < 0 || !std::isfinite(o.duration_s))
    throw Error(
        "-N/--duration must be a positive number of seconds or a duration with its unit (0: until "
        "Ctrl-C)",
        ExitCode::kUsage);
}

// --noise: the pages the counter read, kept in a temporary file and made into a trace.dat
// file of the session's formats, then analysed like `cstool irq --noise` over [start, end).
class NoiseCapture {
 public:
  NoiseCapture() : pages_("cstool-inject-", ".pages"), out_(pages_.path(), std::ios::binary) {
    if (!out_) throw Error(fmt::format("cannot write '{}'", pages_.path()));
  }
  void Page(std::string_view page) {
    out_.write(page.data(), static_cast<std::streamsize>(page.size()));
  }

  IrqReport Analyze(const TracefsSession& session, const CpuEventCounter& counter, int cpu,
                    int64_t start, int64_t end) {
    out_.close();
    if (!out_) throw Error(fmt::format("cannot write '{}'", pages_.path()));
    TraceFileContents contents = SessionTraceContents(session);
    contents.page_size = static_cast<uint32_t>(counter.page_size());
    contents.cpus.resize(static_cast<size_t>(cpu) + 1);
    contents.cpus[static_cast<size_t>(cpu)].stats = session.ReadCpuStats(cpu);
    contents.cpus[static_cast<size_t>(cpu)].pages_file = pages_.path();
    TempFile trace("cstool-inject-", ".dat");
    WriteTraceFile(trace.path(), contents);
    // Timestamps are CLOCK_MONOTONIC with the "mono" clock: the window is the injection's.
    IrqNoiseOptions noise;
    noise.whole_trace = session.clock() != "mono";
    noise.start = start;
    noise.end = end;
    return AnalyzeIrqTrace(trace.path(), {cpu}, &noise);
  }

 private:
  TempFile pages_;
  std::ofstream out_;
};

}  // namespace

int RunNmiInject(const NmiInjectOptions& options, std::ostream& out, Messages& messages) {
  Validate(options);
  InjectSource source = ParseInjectSource(options.source);
  // Set up the generator first: a source this machine cannot provide fails here,
  // with the reason, before any tracing is set up.
  std::unique_ptr<InterruptInjector> injector = MakeInjector(source, options.cpu, options.rate_hz);
  long max_rate = ReadKernelSysctl("perf_event_max_sample_rate", 0);
  if (source != InjectSource::kIpi && max_rate > 0 &&
      options.rate_hz > static_cast<double>(max_rate))
    messages.Warning(fmt::format(
        "kernel.perf_event_max_sample_rate is {}; perf will throttle above it", max_rate));

  StopSignalScope signals;  // from here on, Ctrl-C ends the run and cleans up
  CountPlan plan = PlanFor(source, options.cpu);
  SessionConfig config;
  // --noise needs every interrupt and switch on the CPU, in the same buffer the counts
  // come from, so that both describe the same events.
  config.event_set = options.noise ? EventSet::kInterrupts : EventSet::kNone;
  config.buffer_kb = kBufferKb;
  config.cpus = {options.cpu};
  config.extra_events = plan.events;
  config.follow_forks = false;
  TracefsSession session(config, messages);
  CpuEventCounter counter(session, options.cpu);
  const int achieved_idx =
      plan.achieved_field.empty()
          ? counter.Watch(plan.achieved)
          : counter.WatchWhere(plan.achieved, plan.achieved_field, plan.achieved_value);
  const int context_idx = plan.context ? counter.Watch(*plan.context) : -1;
  std::optional<NoiseCapture> capture;
  if (options.noise) {
    capture.emplace();
    counter.SetPageSink([&capture](std::string_view page) { capture->Page(page); });
  }
  // Timestamps are CLOCK_MONOTONIC with the "mono" trace clock; otherwise count by
  // the time they are read.
  const bool mono = session.clock() == "mono";

  InjectOutput output(out);
  output.Header({std::string(InjectSourceName(source)), options.cpu, options.rate_hz,
                 options.duration_s, injector->Describe(), plan.achieved_what, plan.context_what});

  session.Start();
  const int64_t t0 = NowNs();
  injector->Start();
  const int64_t end =
      options.duration_s > 0 ? t0 + static_cast<int64_t>(options.duration_s * 1e9) : INT64_MAX;

  InjectionTally tally(t0, achieved_idx, context_idx, plan.achieved_in_context);
  tally.SetEnd(end);
  auto on_event = [&](int idx, int64_t ts) { tally.Push(idx, mono ? ts : NowNs()); };
  int64_t stopped = end;  // when the injection stopped, once it has
  size_t printed = 0;
  auto print_complete = [&](int64_t now) {
    while (t0 + static_cast<int64_t>(printed + 1) * kSecond + kSettleNs <= now &&
           t0 + static_cast<int64_t>(printed + 1) * kSecond <= stopped) {
      InjectInterval iv = tally.Second(printed);
      iv.start_s = static_cast<double>(printed);
      iv.length_s = 1.0;
      output.Interval(iv);
      ++printed;
    }
  };

  for (;;) {
    int64_t now = NowNs();
    if (StopSignalScope::Received() || now >= end) break;
    counter.Poll(on_event);
    print_complete(now);
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(kPollNs, end - now)));
  }
  injector->Stop();
  stopped = std::min(NowNs(), end);
  tally.SetEnd(stopped);
  std::this_thread::sleep_for(std::chrono::milliseconds(kSettleNs / 1000000));
  session.Stop();
  counter.Poll(on_event);
  counter.Poll(on_event, /*flush=*/true);
  // Whole seconds not printed yet, then the partial last one.
  print_complete(stopped + kSettleNs);
  double run_s = static_cast<double>(stopped - t0) / 1e9;
  if (static_cast<double>(printed) < run_s - 1e-3) {
    InjectInterval iv = tally.Second(printed);
    iv.start_s = static_cast<double>(printed);
    iv.length_s = run_s - static_cast<double>(printed);
    if (iv.length_s >= 0.1) output.Interval(iv);  // shorter tails say little per second
  }
  InjectInterval total = tally.total();
  total.length_s = run_s;
  output.Total(total, counter.lost_events());
  if (capture) {
    IrqReport report = capture->Analyze(session, counter, options.cpu, t0, stopped);
    out << "\n";
    for (const std::string& n : report.notes) out << "note: " << n << "\n";
    if (!mono)
      out << fmt::format(
          "note: the trace clock is {}, not mono: the noise window is the whole "
          "trace, not exactly the injection's\n",
          session.clock());
    if (report.noise) RenderNoiseTable(*report.noise, out);
    // The live counts of the same events over the same window, to compare with the IRQ
    // column and its sources above.
    out << fmt::format("live counts over the same window: achieved {}", total.achieved);
    if (plan.achieved_in_context)
      out << fmt::format(" in {} interrupts", total.achieved - total.repeated);
    if (context_idx >= 0) out << fmt::format(", context {}", total.context);
    out << "\n";
  }
  return 0;
}

}  // namespace cstool
