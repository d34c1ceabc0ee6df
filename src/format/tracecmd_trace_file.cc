#include "format/tracecmd_trace_file.h"

#include <fmt/format.h>

#include "base/errors.h"
#include "base/isolated_call.h"
#include "base/library_leaks.h"

namespace cstool {
namespace {

constexpr size_t kRecordsPerBatch = 256;

bool InputHasData(tracecmd_input* in, int cpus) {
  for (int cpu = 0; cpu < cpus; ++cpu) {
    TepRecordPtr r(tracecmd_read_cpu_first(in, cpu));
    if (r) return true;
  }
  return false;
}

class TracecmdCpuStream final : public CpuRecordStream {
 public:
  TracecmdCpuStream(tracecmd_input* in, int cpu) : in_(in), cpu_(cpu) {
    // Rewind this CPU to its first record.
    TepRecordPtr first(tracecmd_read_cpu_first(in_, cpu_));
    pending_ = std::move(first);
  }

  int cpu() const override { return cpu_; }

  std::span<const RawRecord> NextBatch() override {
    out_.clear();
    held_.clear();
    while (out_.size() < kRecordsPerBatch) {
      TepRecordPtr r = pending_ ? std::move(pending_) : TepRecordPtr(tracecmd_read_data(in_, cpu_));
      if (!r) break;
      const auto ts = static_cast<int64_t>(r->ts);
      if (r->missed_events != 0) {
        // Dated where the gap began, as the native reader does.
        const int64_t lost = r->missed_events > 0 ? r->missed_events : -1;
        out_.push_back(RawRecord{last_ts_ >= 0 ? last_ts_ : ts, nullptr, 0, cpu_, lost});
      }
      out_.push_back(RawRecord{ts, static_cast<const uint8_t*>(r->data),
                               static_cast<uint32_t>(r->size), cpu_, 0});
      last_ts_ = ts;
      held_.push_back(std::move(r));
    }
    return out_;
  }

 private:
  tracecmd_input* in_;
  int cpu_;
  TepRecordPtr pending_;
  std::vector<RawRecord> out_;
  std::vector<TepRecordPtr> held_;  // keeps the batch's data alive
  int64_t last_ts_ = -1;            // of the latest record returned
};

}  // namespace

TracecmdTraceFile::TracecmdTraceFile(const std::string& path, const ReaderOptions& options) {
  path_ = path;
  timestamps_as_recorded_ = false;  // it applies TSC2NSEC and offsets where the file has them
  tracecmd_set_loglevel(TEP_LOG_NONE);
  // libtracecmd is not hardened against damaged files (a broken compressed block can
  // crash it, e.g. in tracecmd_buffer_instance_handle's error path): do the same open
  // and a full read once in a child process first.
  if (auto crash = CrashOfIsolatedCall([&] { TracecmdTraceFile(path, options, kNoProbe); }))
    throw Error(
        fmt::format("{}: libtracecmd cannot read this file (it crashed on it: {}; damaged v7 file? "
                    "offset unknown)",
                    path, *crash));
  Open(options);
}

TracecmdTraceFile::TracecmdTraceFile(const std::string& path, const ReaderOptions& options,
                                     NoProbe) {
  path_ = path;
  Open(options);
  // The probe reads everything, as a report would.
  for (int cpu = 0; cpu < cpus_; ++cpu) {
    auto stream = OpenCpu(cpu);
    while (!stream->NextBatch().empty()) {
    }
  }
}

void TracecmdTraceFile::Open(const ReaderOptions& options) {
  const std::string& path = path_;
  {
    LibraryLeaksIgnored known_leaks;
    top_.reset(
        tracecmd_open(path.c_str(), kTracecmdFlLoadNoPlugins | kTracecmdFlLoadNoSystemPlugins));
  }
  if (!top_)
    throw Error(
        fmt::format("{}: libtracecmd cannot read this file (corrupt or unsupported "
                    "trace.dat; offset unknown)",
                    path));
  input_ = top_.get();
  const int nbuf = tracecmd_buffer_instances(top_.get());
  int pick = -1;
  for (int i = 0; i < nbuf; ++i)
    if (const char* name = tracecmd_buffer_instance_name(top_.get(), i))
      instance_names_.push_back(name);
  if (!options.buffer.empty()) {
    for (int i = 0; i < nbuf; ++i) {
      const char* name = tracecmd_buffer_instance_name(top_.get(), i);
      if (name != nullptr && options.buffer == name) pick = i;
    }
    if (pick < 0) ThrowNoBuffer(options.buffer);
  } else if (nbuf > 0 && !InputHasData(top_.get(), tracecmd_cpus(top_.get()))) {
    pick = 0;
  }
  if (pick >= 0) {
    {
      LibraryLeaksIgnored known_leaks;
      instance_.reset(tracecmd_buffer_instance_handle(top_.get(), pick));
    }
    if (!instance_)
      throw Error(fmt::format("{}: libtracecmd cannot open buffer instance {}", path, pick));
    const char* name = tracecmd_buffer_instance_name(top_.get(), pick);
    buffer_name_ = name != nullptr ? name : "";
    input_ = instance_.get();
  }
  file_version_ = static_cast<int>(tracecmd_get_in_file_version(top_.get()));
  cpus_ = tracecmd_cpus(input_);
  long_size_ = tracecmd_long_size(top_.get());
  page_size_ = static_cast<uint32_t>(tracecmd_page_size(top_.get()));
  big_endian_ = tep_is_file_bigendian(tracecmd_get_tep(top_.get()));
  if (const char* clock = tracecmd_get_trace_clock(input_); clock != nullptr)
    trace_clock_ = ParseTraceClock(clock);
  if (const char* stats = tracecmd_get_cpustats(top_.get()); stats != nullptr) {
    // One text: the top buffer's CPUs, then "Buffer: NAME" and that instance's CPUs.
    std::string_view text(stats);
    std::string current;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t next = text.find("\nCPU: ", pos + 1);
      size_t marker = text.find("Buffer: ", pos + 1);
      size_t end = std::min(next, marker);
      if (end == std::string_view::npos) end = text.size();
      std::string_view chunk = text.substr(pos, end - pos);
      std::string name;
      CpuStatOption stat;
      if (ParseCpuStatBufferMarker(chunk, &name)) {
        current = name;
      } else if (ParseCpuStat(chunk, &stat) && current == buffer_name_) {
        cpu_stats_[stat.cpu] = stat;
      }
      pos = end;
    }
  }
}

tep_handle* TracecmdTraceFile::tep() const { return tracecmd_get_tep(input_); }

// libtracecmd registered the saved cmdlines with libtraceevent.
std::string TracecmdTraceFile::SavedComm(int32_t pid) {
  tep_handle* handle = tep();
  if (handle == nullptr || !tep_is_pid_registered(handle, pid)) return {};
  const char* comm = tep_data_comm_from_pid(handle, pid);
  return comm != nullptr ? comm : "";
}

// libtraceevent sorts its registered cmdlines at the first lookup, and only reads them
// after: that first lookup is made here, before any other thread uses tep().
void TracecmdTraceFile::PrepareSavedComms() {
  if (tep_handle* handle = tep()) tep_data_comm_from_pid(handle, 1);
}

std::unique_ptr<CpuRecordStream> TracecmdTraceFile::OpenCpuRecords(int cpu) {
  if (cpu < 0 || cpu >= cpus_)
    throw Error(fmt::format("{}: no CPU {} in this file ({} CPUs)", path_, cpu, cpus_));
  return std::make_unique<TracecmdCpuStream>(input_, cpu);
}

}  // namespace cstool
