#include "tracefs/session_formats.h"

#include <unistd.h>

#include <algorithm>
#include <bit>

#include "base/errors.h"
#include "base/read_file.h"

namespace cstool {

TepHandlePtr LoadSessionTep(const TracefsSession& session, int cpus) {
  TepHandlePtr tep(tep_alloc());
  if (!tep) throw Error("out of memory allocating a tep_handle");
  const int long_size = static_cast<int>(sizeof(long));
  const int page_size = static_cast<int>(::sysconf(_SC_PAGESIZE));
  const tep_endian native =
      std::endian::native == std::endian::big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN;
  tep_set_file_bigendian(tep.get(), native);  // the ring buffer is in host byte order
  tep_set_local_bigendian(tep.get(), native);
  tep_set_long_size(tep.get(), long_size);
  tep_set_page_size(tep.get(), page_size);
  tep_set_cpus(tep.get(), cpus);
  std::string header_page = ReadTopLevelTracingFile("events/header_page");
  if (tep_parse_header_page(tep.get(), header_page.data(), header_page.size(), long_size) != 0)
    throw Error("cannot parse tracefs events/header_page");
  for (const EventName& e : session.events()) {
    std::string text = session.ReadEventFormat(e);
    // A format libtraceevent cannot parse leaves that event undecoded (EventDecoder
    // reports it as missing), as for files.
    tep_parse_event(tep.get(), text.data(), text.size(), e.system.c_str());
  }
  return tep;
}

namespace {

std::string ReadProcKallsyms() {
  std::optional<std::string> text = ReadWholeFile("/proc/kallsyms");
  if (!text) throw Error("--stacks: cannot read /proc/kallsyms");
  return std::move(*text);
}

}  // namespace

TraceFileContents SessionTraceContents(const TracefsSession& session) {
  TraceFileContents contents;
  contents.page_size = static_cast<uint32_t>(::sysconf(_SC_PAGESIZE));
  contents.header_page = ReadTopLevelTracingFile("events/header_page");
  contents.header_event = ReadTopLevelTracingFile("events/header_event");
  AddEventFormats(session, contents);
  if (session.kernel_stacks()) {
    // The stack records' format and the symbols that name their addresses, as
    // trace-cmd stores them (man 5 trace-cmd.dat.v6: ftrace formats, kallsyms).
    contents.ftrace_formats.push_back(ReadTopLevelTracingFile("events/ftrace/kernel_stack/format"));
    contents.kallsyms = ReadProcKallsyms();
  }
  contents.printk_formats = ReadTopLevelTracingFile("printk_formats");
  contents.trace_clock = session.ReadFile("trace_clock");
  return contents;
}

void AddEventFormats(const TracefsSession& session, TraceFileContents& contents) {
  for (const EventName& e : session.events()) {
    const std::string format = session.ReadEventFormat(e);
    auto system = std::find_if(contents.systems.begin(), contents.systems.end(),
                               [&](const auto& s) { return s.system == e.system; });
    if (system == contents.systems.end()) {
      contents.systems.push_back({e.system, {format}});
    } else if (std::find(system->formats.begin(), system->formats.end(), format) ==
               system->formats.end()) {
      system->formats.push_back(format);
    }
  }
}

}  // namespace cstool
