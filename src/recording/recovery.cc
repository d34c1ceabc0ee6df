#include "recording/recovery.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/read_file.h"
#include "format/compression.h"
#include "format/trace_file_format.h"
#include "kernel/proc_threads.h"
#include "recording/page_file.h"
#include "recording/previous_output.h"
#include "tracefs/orphan_buffers.h"
#include "tracefs/tracefs_session.h"

namespace cstool {
namespace {

constexpr int kNoteVersion = 1;

std::vector<std::string> InstanceNames(const TraceFileContents& c) {
  std::vector<std::string> names;
  for (const InstanceTraceData& i : c.instances) names.push_back(i.name);
  return names;
}

nlohmann::json ContentsJson(const TraceFileContents& c) {
  nlohmann::json systems = nlohmann::json::array();
  for (const EventSystemFormats& s : c.systems)
    systems.push_back({{"system", s.system}, {"formats", s.formats}});
  return {{"page_size", c.page_size},
          {"header_page", c.header_page},
          {"header_event", c.header_event},
          {"ftrace_formats", c.ftrace_formats},
          {"systems", systems},
          {"kallsyms", c.kallsyms},
          {"printk_formats", c.printk_formats},
          {"saved_cmdlines", c.saved_cmdlines},
          {"trace_clock", c.trace_clock},
          {"compression", c.compression},
          {"instances", InstanceNames(c)}};
}

TraceFileContents ContentsFromJson(const nlohmann::json& j) {
  TraceFileContents c;
  c.page_size = j.at("page_size").get<uint32_t>();
  c.header_page = j.at("header_page").get<std::string>();
  c.header_event = j.at("header_event").get<std::string>();
  c.ftrace_formats = j.at("ftrace_formats").get<std::vector<std::string>>();
  for (const auto& s : j.at("systems"))
    c.systems.push_back(
        {s.at("system").get<std::string>(), s.at("formats").get<std::vector<std::string>>()});
  c.kallsyms = j.at("kallsyms").get<std::string>();
  c.printk_formats = j.at("printk_formats").get<std::string>();
  c.saved_cmdlines = j.at("saved_cmdlines").get<std::string>();
  c.trace_clock = j.at("trace_clock").get<std::string>();
  c.compression = j.value("compression", std::string());
  for (const std::string& name : j.value("instances", std::vector<std::string>()))
    c.instances.push_back({name, {}});
  if (!c.compression.empty() && !IsKnownCompression(c.compression))
    throw Error(fmt::format("unknown compression \"{}\"", c.compression));
  return c;
}

// Marks `page` as having lost events before it, of a count not known (the ring buffer's
// missed-events flag in the commit field): what the killed recorder had read but not yet
// written, if anything, is gone. A count the kernel stored at the page's end was of its
// own losses only: with ours added the count is not known.
void MarkMissedBefore(std::string& page) {
  if (page.size() < 12) return;
  // The flags are in the commit field's low 32 bits, first in the little-endian field
  // whatever the kernel's long (as the flight window reads them).
  uint32_t commit;
  std::memcpy(&commit, page.data() + 8, 4);
  commit = (commit | tracefile::kPageMissedEvents) & ~tracefile::kPageMissedStored;
  std::memcpy(page.data() + 8, &commit, 4);
}

// The tracefs instance of the killed recorder `pid` that wrote `buffer` ("" the trace,
// else a buffer instance of the file).
std::string InstanceOf(int pid, std::string_view buffer) {
  return TracefsSession::InstanceName(
      pid, buffer == tracefile::kUnfilteredRuntimeBuffer ? kUnfilteredInstanceSuffix : "");
}

// Appends to `file` (a CPU's page file) the pages the killed recorder's instance still
// held; returns their bytes. Nothing of them stays in the file when the writing fails.
uint64_t AppendOrphanPages(const std::filesystem::path& file, std::vector<std::string> pages,
                           const TraceFileContents& contents) {
  if (pages.empty()) return 0;
  if (pages.front().size() != contents.page_size)
    throw Error(fmt::format("its sub-buffers are {} bytes, the file's pages {}",
                            pages.front().size(), contents.page_size));
  MarkMissedBefore(pages.front());
  std::error_code ec;
  const uintmax_t before =
      std::filesystem::exists(file, ec) ? std::filesystem::file_size(file, ec) : 0;
  uint64_t bytes = 0;
  try {
    PageFileWriter out(file, contents.compression, /*append=*/true);
    for (const std::string& p : pages) {
      out.Add(p);
      bytes += p.size();
    }
    out.Finish();
  } catch (const Error&) {
    std::filesystem::resize_file(file, before, ec);  // no torn page or chunk left behind
    throw;
  }
  return bytes;
}

}  // namespace

std::filesystem::path RecoveryNoteFor(const std::filesystem::path& out) {
  return out.string() + ".recovery.json";
}

std::filesystem::path PagesFileFor(const std::filesystem::path& out, int cpu,
                                   std::string_view buffer) {
  if (buffer.empty()) return fmt::format("{}.cpu{}.tmp", out.string(), cpu);
  return fmt::format("{}.{}.cpu{}.tmp", out.string(), buffer, cpu);
}

void WriteRecoveryNote(const std::filesystem::path& out, const TraceFileContents& contents,
                       const RecordingInfo& info, int file_cpus, RecoveryNoteStage stage) {
  // The stamps of this recorder's instances, for --recover to tell them from any made
  // later under the same names.
  std::map<std::string, int64_t> stamps;
  if (auto stamp = OrphanBuffers::StampOf(InstanceOf(::getpid(), {}))) stamps[""] = *stamp;
  for (const InstanceTraceData& inst : contents.instances)
    if (auto stamp = OrphanBuffers::StampOf(InstanceOf(::getpid(), inst.name)))
      stamps[inst.name] = *stamp;
  nlohmann::json note = {
      {"version", kNoteVersion}, {"recorder_pid", ::getpid()},         {"instance_stamps", stamps},
      {"file_cpus", file_cpus},  {"contents", ContentsJson(contents)}, {"info", info}};
  if (stage == RecoveryNoteStage::kEnded) {
    std::vector<std::string> stats;
    for (const CpuTraceData& cpu : contents.cpus) stats.push_back(cpu.stats);
    // The page files as the recording left them: the end holds for them only.
    std::map<std::string, uint64_t> page_bytes;
    auto add = [&](const CpuTraceData& cpu) {
      std::error_code ec;
      const uintmax_t size = std::filesystem::file_size(cpu.pages_file, ec);
      if (!cpu.pages_file.empty() && !ec) page_bytes[cpu.pages_file.filename().string()] = size;
    };
    for (const CpuTraceData& cpu : contents.cpus) add(cpu);
    for (const InstanceTraceData& inst : contents.instances)
      for (const CpuTraceData& cpu : inst.cpus) add(cpu);
    note["ended"] = true;
    note["cpu_stats"] = stats;
    note["page_bytes"] = page_bytes;
  }
  const std::filesystem::path path = RecoveryNoteFor(out);
  const std::filesystem::path tmp = path.string() + ".tmp";
  std::error_code ec;
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << note.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (!f.flush()) {
      const int err = errno;
      std::filesystem::remove(tmp, ec);  // a full disk keeps no part of it
      throw Error(fmt::format("cannot write '{}': {}", tmp.string(), std::strerror(err)));
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    throw Error(fmt::format("cannot write '{}': {}", path.string(), why));
  }
}

int LiveRecorderOf(const std::filesystem::path& out) {
  const std::optional<std::string> text = ReadWholeFile(RecoveryNoteFor(out));
  if (!text) return 0;
  const nlohmann::json note = nlohmann::json::parse(*text, nullptr, false);
  if (!note.is_object() || !note.contains("recorder_pid") || !note["recorder_pid"].is_number())
    return 0;
  const int pid = note["recorder_pid"].get<int>();
  if (pid <= 0 || pid == ::getpid() || !ProcessExists(pid)) return 0;
  const std::optional<char> state = ProcessState(pid);
  return state && *state != 'Z' ? pid : 0;
}

std::vector<std::filesystem::path> LeftoversOf(const std::filesystem::path& out) {
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  const bool note = std::filesystem::exists(RecoveryNoteFor(out), ec);
  if (note) found.push_back(RecoveryNoteFor(out));
  const std::filesystem::path dir = out.has_parent_path() ? out.parent_path() : ".";
  // OUT.cpuN.tmp, and OUT.BUFFER.cpuN.tmp of the instances cstool records.
  const std::string top = out.filename().string() + ".cpu";
  const std::string instance =
      fmt::format("{}.{}.cpu", out.filename().string(), tracefile::kUnfilteredRuntimeBuffer);
  auto is_page_file = [](const std::string& name, const std::string& prefix) {
    return name.rfind(prefix, 0) == 0 && name.ends_with(".tmp") &&
           name.find_first_not_of("0123456789", prefix.size()) == name.size() - 4;
  };
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!is_page_file(name, top) && !is_page_file(name, instance)) continue;
    // Empty page files without a note: killed before tracing began, nothing to keep.
    std::error_code size_ec;
    if (!note && std::filesystem::file_size(e.path(), size_ec) == 0 && !size_ec) {
      std::filesystem::remove(e.path(), size_ec);
      continue;
    }
    found.push_back(e.path());
  }
  return found;
}

RecoveryResult RecoverRecording(const std::filesystem::path& out, Messages& messages) {
  const std::filesystem::path note_path = RecoveryNoteFor(out);
  const std::optional<std::string> text = ReadWholeFile(note_path);
  if (!text) {
    const bool pages = !LeftoversOf(out).empty();
    throw Error(pages ? fmt::format("'{}' is missing: the recording was killed before tracing "
                                    "started, and its page files cannot be read without it",
                                    note_path.string())
                      : fmt::format("nothing to recover: no '{}' (a recording into '{}' that "
                                    "was killed leaves it)",
                                    note_path.string(), out.string()),
                ExitCode::kUsage);
  }
  if (const int pid = LiveRecorderOf(out))
    throw Error(fmt::format("a recording into '{}' is still in progress (cstool pid {}): stop it "
                            "with Ctrl-C or kill -INT {}, it writes the file itself",
                            out.string(), pid, pid),
                ExitCode::kUsage);
  TraceFileContents contents;
  RecordingInfo info;
  int file_cpus = 0;
  int note_recorder_pid = 0;
  std::map<std::string, int64_t> note_stamps;  // by buffer ("" the trace's)
  bool ended = false;
  std::vector<std::string> cpu_stats;
  std::map<std::string, uint64_t> page_bytes;  // an ended recording's page files, by name
  try {
    const nlohmann::json note = nlohmann::json::parse(*text);
    if (note.at("version").get<int>() != kNoteVersion)
      throw Error(fmt::format("'{}' was written by another cstool version", note_path.string()));
    contents = ContentsFromJson(note.at("contents"));
    info = note.at("info").get<RecordingInfo>();
    file_cpus = note.at("file_cpus").get<int>();
    note_recorder_pid = note.value("recorder_pid", 0);
    note_stamps = note.value("instance_stamps", std::map<std::string, int64_t>());
    ended = note.value("ended", false);
    cpu_stats = note.value("cpu_stats", std::vector<std::string>());
    page_bytes = note.value("page_bytes", std::map<std::string, uint64_t>());
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("'{}' is damaged: {}", note_path.string(), e.what()));
  }
  if (file_cpus <= 0 || file_cpus > (1 << 16))
    throw Error(fmt::format("'{}' is damaged: {} CPUs", note_path.string(), file_cpus));
  if (contents.page_size < 512 || (contents.page_size & (contents.page_size - 1)) != 0)
    throw Error(
        fmt::format("'{}' is damaged: page size {}", note_path.string(), contents.page_size));

  std::error_code ec;
  // The end holds only for the pages it was written with: any other is recovered as
  // a recording cut short.
  const std::filesystem::path dir = out.has_parent_path() ? out.parent_path() : ".";
  for (const auto& [name, bytes] : page_bytes) {
    const uintmax_t now = std::filesystem::file_size(dir / name, ec);
    if (!ec && now == bytes) continue;
    messages.Warning(fmt::format(
        "'{}' is not as the ended recording left it ({}, not {} bytes): "
        "recovered as a recording cut short",
        (dir / name).string(), ec ? std::string("missing") : std::to_string(now), bytes));
    ended = false;
    break;
  }
  if (ended && page_bytes.empty()) ended = false;  // a note without them: not trusted
  RecoveryResult result;
  result.ended = ended;
  // A CPU's page file of `buffer` as far as it holds whole pages (or compressed chunks:
  // one cut short by the kill is not one); empty when there is none.
  auto whole_pages = [&](int cpu, std::string_view buffer) -> std::filesystem::path {
    std::filesystem::path pages = PagesFileFor(out, cpu, buffer);
    const auto size = std::filesystem::file_size(pages, ec);
    if (ec) return {};
    const uint64_t keep =
        contents.compression.empty() ? size - size % contents.page_size : ScanChunks(pages).bytes;
    std::filesystem::resize_file(pages, keep, ec);
    if (ec) throw Error(fmt::format("cannot truncate '{}': {}", pages.string(), ec.message()));
    if (buffer.empty()) {
      result.bytes += keep;
      ++result.cpus;
    }
    return pages;
  };
  contents.cpus.resize(static_cast<size_t>(file_cpus));
  for (int cpu = 0; cpu < file_cpus; ++cpu) {
    CpuTraceData& data = contents.cpus[static_cast<size_t>(cpu)];
    data.pages_file = whole_pages(cpu, {});
    if (static_cast<size_t>(cpu) < cpu_stats.size()) data.stats = cpu_stats[cpu];
  }
  for (InstanceTraceData& inst : contents.instances) {
    inst.cpus.resize(static_cast<size_t>(file_cpus));
    for (int cpu = 0; cpu < file_cpus; ++cpu)
      inst.cpus[static_cast<size_t>(cpu)].pages_file = whole_pages(cpu, inst.name);
  }
  // What the killed recorder had not read yet: its instances still hold it (until they
  // are removed below), after the pages the files have. Only the instances the note
  // names by their stamp: one made since under the same name is another recording's.
  auto drain = [&](std::string_view buffer, std::vector<CpuTraceData>& cpus) {
    const auto stamp = note_stamps.find(std::string(buffer));
    if (note_recorder_pid <= 0 || stamp == note_stamps.end()) return;
    const std::string name = InstanceOf(note_recorder_pid, buffer);
    std::optional<OrphanBuffers> orphan =
        OrphanBuffers::Open(name, note_recorder_pid, stamp->second);
    if (!orphan) return;
    result.drained = true;
    for (int cpu = 0; cpu < file_cpus; ++cpu) {
      std::filesystem::path& file = cpus[static_cast<size_t>(cpu)].pages_file;
      const bool had_file = !file.empty();
      try {
        if (!had_file) file = PagesFileFor(out, cpu, buffer);
        const uint64_t bytes = AppendOrphanPages(file, orphan->Drain(cpu), contents);
        if (bytes == 0 && !had_file) file.clear();
        if (buffer.empty()) {
          result.drained_bytes += bytes;
          if (bytes > 0 && !had_file) ++result.cpus;
        }
      } catch (const Error& e) {
        if (!had_file) file.clear();
        messages.Warning(
            fmt::format("CPU {}: the events the killed recorder had not read from {} "
                        "are not recovered: {}",
                        cpu, name, e.what()));
      }
    }
  };
  // An ended recording read its buffers out before it wrote the note, and its info is
  // the file's: only one cut short lacks what the end brings.
  if (!ended) {
    drain({}, contents.cpus);
    for (InstanceTraceData& inst : contents.instances) drain(inst.name, inst.cpus);
    info.recovered = true;
    info.kernel_counters = nullptr;  // the end samples and exit records were never taken
  }
  contents.cstool_info_json =
      nlohmann::json(info).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // A file there (the recording before, which the recorder put back when its own write
  // failed) is kept, as record keeps it; one that cannot be is not written over.
  KeepPreviousOutput(out, messages);
  WriteTraceFile(out, contents);
  for (int cpu = 0; cpu < file_cpus; ++cpu) {
    std::filesystem::remove(PagesFileFor(out, cpu), ec);
    for (const InstanceTraceData& inst : contents.instances)
      std::filesystem::remove(PagesFileFor(out, cpu, inst.name), ec);
  }
  std::filesystem::remove(note_path, ec);
  // The killed recorder's instance, if still there; the next recording would remove it.
  try {
    TracefsSession::CheckAccess();
    TracefsSession::ReapStaleInstances(messages);
  } catch (const Error& e) {
    messages.Detail(fmt::format("its tracefs instance was left alone: {}", e.what()));
  }
  return result;
}

}  // namespace cstool
