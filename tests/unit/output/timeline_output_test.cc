// The two timeline writers carry the same content: the Perfetto protobuf timeline is
// decoded here as the trace processor reads it (per-sequence interning, defaults and
// incremental clock; begin/end events matched per track after a stable sort by time)
// and compared, slice by slice in exact nanoseconds, with what the timeline observer
// produced and with the JSON timeline of the same file.
#include "output/timeline_output.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "analysis/timeline.h"
#include "output/perfetto_trace.pb.h"
#include "tests/support/pingpong_script.h"
#include "tests/support/run_command.h"
#include "tests/support/sim.h"

namespace cstool::testing {
namespace {

namespace pb = perfetto::protos;
using nlohmann::json;
using TrackKey = std::pair<int64_t, int64_t>;  // pid, tid

struct SliceRecord {
  std::string name;
  int64_t start = 0;
  int64_t end = 0;
  bool instant = false;
  std::string cause;         // "" when no switch-out ends it
  std::string preempted_at;  // "" when voluntary
  int64_t count = -1;        // instants: their "count" argument
  bool operator<(const SliceRecord& o) const {
    return std::tie(start, o.end, name) < std::tie(o.start, end, o.name);
  }
  bool operator==(const SliceRecord& o) const = default;
};

std::ostream& operator<<(std::ostream& os, const SliceRecord& s) {
  return os << s.name << " [" << s.start << ", " << s.end << ")" << (s.instant ? " instant" : "")
            << (s.cause.empty() ? "" : " cause=" + s.cause)
            << (s.preempted_at.empty() ? "" : " at=" + s.preempted_at) << " count=" << s.count;
}

struct FlowRecord {
  TrackKey from, to;
  int64_t from_ts = 0, to_ts = 0;
};

// A timeline as a list of records, whichever way it was written.
struct Timeline {
  std::map<TrackKey, std::string> thread_names;
  std::map<TrackKey, int64_t> thread_sort;
  std::map<int64_t, std::string> process_names;
  std::map<TrackKey, std::vector<SliceRecord>> slices;  // sorted
  std::map<uint64_t, FlowRecord> flows;
  std::set<int> primary_clocks;  // the protobuf's, one per sequence
  void Sort() {
    for (auto& [key, v] : slices) std::sort(v.begin(), v.end());
  }
};

// Comms are bytes; both formats write those outside ASCII as Latin-1 characters.
std::string Latin1(std::string_view s) {
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x80) {
      out += ch;
    } else {
      out += static_cast<char>(0xc0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3f));
    }
  }
  return out;
}

// Records what the observer produces, and passes it on to a writer.
class RecordingSink : public TimelineSink {
 public:
  RecordingSink(Timeline& out, TimelineSink& next) : out_(out), next_(next) {}
  void ProcessName(int64_t pid, std::string_view name) override {
    out_.process_names[pid] = Latin1(name);
    next_.ProcessName(pid, name);
  }
  void ProcessSortIndex(int64_t pid, int64_t index) override { next_.ProcessSortIndex(pid, index); }
  void ThreadName(int64_t pid, int64_t tid, std::string_view name) override {
    out_.thread_names[{pid, tid}] = Latin1(name);
    next_.ThreadName(pid, tid, name);
  }
  void ThreadSortIndex(int64_t pid, int64_t tid, int64_t index) override {
    out_.thread_sort[{pid, tid}] = index;
    next_.ThreadSortIndex(pid, tid, index);
  }
  void Slice(const TimelineSlice& s) override {
    out_.slices[{s.pid, s.tid}].push_back({.name = Latin1(s.name),
                                           .start = s.start,
                                           .end = s.end,
                                           .cause = std::string(s.cause),
                                           .preempted_at = std::string(s.preempted_at)});
    next_.Slice(s);
  }
  void Instant(const TimelineInstant& i) override {
    out_.slices[{i.pid, i.tid}].push_back({.name = Latin1(i.name),
                                           .start = i.ts,
                                           .end = i.ts,
                                           .instant = true,
                                           .count = i.arg_value});
    next_.Instant(i);
  }
  void Flow(uint64_t id, const TimelineFlowEnd& from, const TimelineFlowEnd& to) override {
    out_.flows[id] = {{from.pid, from.tid}, {to.pid, to.tid}, from.ts, to.ts};
    next_.Flow(id, from, to);
  }
  void Close() override { next_.Close(); }

 private:
  Timeline& out_;
  TimelineSink& next_;
};

// Decodes a protobuf timeline the way Perfetto's trace processor reads it.
Timeline DecodeProto(const std::string& bytes) {
  Timeline out;
  pb::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes));
  struct Sequence {
    bool cleared = false;
    uint64_t track = 0;
    uint32_t clock = 0;
    int64_t now = 0;
    bool clock_defined = false;
    std::map<uint64_t, std::string> names, arg_names, arg_values;
  };
  struct Event {
    int64_t ts;
    size_t order;
    uint64_t track;
    pb::TrackEvent ev;
    Sequence* seq;
  };
  std::map<uint32_t, Sequence> sequences;
  std::map<uint64_t, TrackKey> tracks;
  std::vector<Event> events;
  for (const pb::TracePacket& p : trace.packet()) {
    EXPECT_TRUE(p.has_trusted_packet_sequence_id());
    Sequence& seq = sequences[p.trusted_packet_sequence_id()];
    if (p.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED)
      seq = {.cleared = true};
    if (p.has_trace_packet_defaults()) {
      seq.clock = p.trace_packet_defaults().timestamp_clock_id();
      seq.track = p.trace_packet_defaults().track_event_defaults().track_uuid();
    }
    for (const auto& n : p.interned_data().event_names()) seq.names[n.iid()] = n.name();
    for (const auto& n : p.interned_data().debug_annotation_names())
      seq.arg_names[n.iid()] = n.name();
    for (const auto& n : p.interned_data().debug_annotation_string_values())
      seq.arg_values[n.iid()] = n.str();
    if (p.has_clock_snapshot()) {
      // The incremental clock is the trace's, from 0.
      const auto& clocks = p.clock_snapshot().clocks();
      EXPECT_EQ(clocks.size(), 2);
      EXPECT_EQ(clocks[0].clock_id(), 64u);
      EXPECT_TRUE(clocks[0].is_incremental());
      EXPECT_EQ(clocks[0].timestamp(), 0u);
      EXPECT_EQ(clocks[1].clock_id(),
                static_cast<uint32_t>(p.clock_snapshot().primary_trace_clock()));
      EXPECT_EQ(clocks[1].timestamp(), 0u);
      out.primary_clocks.insert(p.clock_snapshot().primary_trace_clock());
      seq.clock_defined = true;
      seq.now = 0;
      continue;
    }
    if (p.has_track_descriptor()) {
      const pb::TrackDescriptor& d = p.track_descriptor();
      if (d.has_thread()) {
        const TrackKey key{d.thread().pid(), d.thread().tid()};
        tracks[d.uuid()] = key;
        out.thread_names[key] = d.thread().thread_name();
        if (d.thread().has_legacy_sort_index())
          out.thread_sort[key] = d.thread().legacy_sort_index();
      } else if (d.has_process()) {
        out.process_names[d.process().pid()] = d.process().process_name();
      }
      continue;
    }
    if (!p.has_track_event()) continue;
    EXPECT_TRUE(seq.cleared && seq.clock_defined);
    EXPECT_EQ(seq.clock, 64u);
    EXPECT_FALSE(p.has_timestamp_clock_id());
    seq.now += static_cast<int64_t>(p.timestamp());
    const uint64_t track =
        p.track_event().has_track_uuid() ? p.track_event().track_uuid() : seq.track;
    events.push_back({seq.now, events.size(), track, p.track_event(), &seq});
  }
  // The trace processor's order: by time, then the file's order.
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.ts < b.ts; });
  std::map<uint64_t, std::vector<SliceRecord>> open;
  for (const Event& e : events) {
    EXPECT_TRUE(tracks.count(e.track)) << "event on an undescribed track " << e.track;
    const TrackKey key = tracks[e.track];
    auto name_of = [&] {
      if (!e.ev.has_name_iid()) return std::string();
      EXPECT_TRUE(e.seq->names.count(e.ev.name_iid())) << "name iid not interned";
      return e.seq->names[e.ev.name_iid()];
    };
    SliceRecord s{.name = name_of(), .start = e.ts, .end = e.ts};
    for (const pb::DebugAnnotation& a : e.ev.debug_annotations()) {
      const std::string arg = e.seq->arg_names.at(a.name_iid());
      if (arg == "cause") s.cause = e.seq->arg_values.at(a.string_value_iid());
      if (arg == "preempted_at") s.preempted_at = e.seq->arg_values.at(a.string_value_iid());
      if (arg == "count") s.count = a.int_value();
    }
    for (uint64_t id : e.ev.flow_ids()) {
      out.flows[id].from = key;
      out.flows[id].from_ts = e.ts;
    }
    for (uint64_t id : e.ev.terminating_flow_ids()) {
      out.flows[id].to = key;
      out.flows[id].to_ts = e.ts;
    }
    switch (e.ev.type()) {
      case pb::TrackEvent::TYPE_SLICE_BEGIN:
        open[e.track].push_back(s);
        break;
      case pb::TrackEvent::TYPE_SLICE_END: {
        auto& stack = open[e.track];
        EXPECT_FALSE(stack.empty()) << "end without begin at " << e.ts;
        if (stack.empty()) break;
        // An end with a name closes the innermost open slice of that name.
        size_t i = stack.size() - 1;
        if (!s.name.empty())
          while (i > 0 && stack[i].name != s.name) --i;
        SliceRecord done = stack[i];
        stack.erase(stack.begin() + static_cast<std::ptrdiff_t>(i));
        done.end = e.ts;
        out.slices[key].push_back(done);
        break;
      }
      case pb::TrackEvent::TYPE_INSTANT:
        s.instant = true;
        out.slices[key].push_back(s);
        break;
      default:
        ADD_FAILURE() << "unexpected event type " << e.ev.type();
    }
  }
  for (const auto& [track, stack] : open) EXPECT_TRUE(stack.empty()) << "unended slices";
  out.Sort();
  return out;
}

// Nanoseconds of a JSON time in microseconds ("12.345"), exactly.
int64_t JsonNs(const json& micros) {
  return static_cast<int64_t>(std::llround(micros.get<double>() * 1000.0));
}

Timeline DecodeJson(const std::string& text) {
  Timeline out;
  const json doc = json::parse(text);
  for (const json& e : doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    const TrackKey key{e.at("pid"), e.at("tid")};
    if (ph == "M") {
      if (e.at("name") == "thread_name") out.thread_names[key] = e.at("args").at("name");
      if (e.at("name") == "thread_sort_index") out.thread_sort[key] = e.at("args").at("sort_index");
      if (e.at("name") == "process_name") out.process_names[key.first] = e.at("args").at("name");
    } else if (ph == "X" || ph == "i") {
      SliceRecord s{.name = e.at("name"), .start = JsonNs(e.at("ts"))};
      s.end = ph == "X" ? s.start + JsonNs(e.at("dur")) : s.start;
      s.instant = ph == "i";
      if (e.contains("args")) {
        const json& a = e.at("args");
        if (a.contains("cause")) s.cause = a.at("cause");
        if (a.contains("preempted_at")) s.preempted_at = a.at("preempted_at");
        if (a.contains("count")) s.count = a.at("count");
      }
      out.slices[key].push_back(s);
    } else if (ph == "s") {
      out.flows[e.at("id")].from = key;
      out.flows[e.at("id")].from_ts = JsonNs(e.at("ts"));
    } else if (ph == "f") {
      out.flows[e.at("id")].to = key;
      out.flows[e.at("id")].to_ts = JsonNs(e.at("ts"));
    }
  }
  out.Sort();
  return out;
}

// The slice of `slices` a flow end at ts binds to: the deepest enclosing ts.
const SliceRecord* Enclosing(const std::vector<SliceRecord>& slices, int64_t ts) {
  const SliceRecord* best = nullptr;
  for (const SliceRecord& s : slices)
    if (!s.instant && s.start <= ts && ts < s.end && (!best || s.start >= best->start)) best = &s;
  return best;
}

// Two threads of one process on two CPUs: a sleep in read, a wakeup from the other
// thread, an interrupt nested in a CPU run, a tick preemption, a lost-events gap, and a
// rename by exec (the comm is not UTF-8).
void Script(Sim& s) {
  s.SysEnter(1000, 0, 100, kRead);
  s.SysExit(1100, 0, 100, kRead);
  s.Fork(1500, 0, 100, 101, /*thread=*/true);
  s.Wake(1600, 0, 100, 101, 1, 0, WakeupKind::kWakeupNew);
  s.Switch(1700, 1, 0, kR, 101);
  s.SysExit(1800, 1, 101, 56);
  s.SysEnter(1900, 0, 100, kRead);
  s.Switch(2000, 0, 100, kS, 0);
  s.IrqEntry(2100, 1, 101);
  s.IrqExit(2200, 1, 101);
  s.WakeBoth(2500, 1, 101, 100, 0);
  s.Switch(2600, 0, 0, kR, 100, false, "caf\xe9");
  s.SysExit(2700, 0, 100, kRead);
  s.Vector(3000, 1, 101, true);
  s.Tick(3005, 1, 101, kFlagHardirq | kFlagNeedResched);
  s.Vector(3010, 1, 101, false);
  s.Switch(3100, 1, 101, kR, 0);
  s.Lost(3500, 1, 5);
  s.Finish(4000);
}

// Runs the script into a writer of `format`, recording what the observer produced.
std::string Write(TimelineFormat format, Timeline& model, void (*script)(Sim&)) {
  std::ostringstream os;
  {
    Sim sim;
    auto writer = MakeTimelineWriter(format, os);
    RecordingSink recorder(model, *writer);
    TimelineObserver timeline(recorder, sim.syscalls(), [](const Thread&) { return true; });
    sim.AddObserver(&timeline);
    script(sim);
  }
  model.Sort();
  return os.str();
}

TEST(TimelineFormat, ChosenByExtensionOrName) {
  EXPECT_EQ(TimelineFormatForPath("t.pftrace"), TimelineFormat::kProto);
  EXPECT_EQ(TimelineFormatForPath("dir/t.perfetto-trace"), TimelineFormat::kProto);
  EXPECT_EQ(TimelineFormatForPath("t.pb"), TimelineFormat::kProto);
  EXPECT_EQ(TimelineFormatForPath("t.json"), TimelineFormat::kJson);
  EXPECT_EQ(TimelineFormatForPath("pftrace"), TimelineFormat::kJson);
  EXPECT_EQ(TimelineFormatForPath("t.pftrace.json"), TimelineFormat::kJson);
  EXPECT_EQ(ParseTimelineFormat("proto"), TimelineFormat::kProto);
  EXPECT_EQ(ParseTimelineFormat("json"), TimelineFormat::kJson);
  EXPECT_EQ(ParseTimelineFormat("xml"), std::nullopt);
}

// The protobuf carries exactly what the observer produced: every track and name, every
// slice with its times, cause and preemption point, the lost-events instant with its
// count, every flow bound to the slices enclosing its ends.
TEST(ProtoTimeline, DecodesToTheModel) {
  Timeline model;
  const Timeline proto = DecodeProto(Write(TimelineFormat::kProto, model, Script));
  EXPECT_EQ(proto.thread_names, model.thread_names);
  EXPECT_EQ(proto.thread_sort, model.thread_sort);
  EXPECT_EQ(proto.process_names, model.process_names);
  EXPECT_EQ(proto.process_names.at(TimelineObserver::kCpuPid), "CPUs");
  // Not told the trace's clock: BOOTTIME, as Perfetto's own ftrace data.
  EXPECT_EQ(proto.primary_clocks, std::set<int>{pb::BUILTIN_CLOCK_BOOTTIME});
  // The renamed thread, its non-UTF-8 byte as Latin-1 like the JSON's \u00e9.
  EXPECT_EQ(proto.thread_names.at({100, 100}), "caf\xc3\xa9 100");
  // And its group (its process is not known here), after its new name (before, it kept
  // its first).
  EXPECT_EQ(proto.process_names.at(100), "caf\xc3\xa9 (process unknown)");
  ASSERT_EQ(proto.slices.size(), model.slices.size());
  EXPECT_EQ(proto.slices.size(), 4u);  // two threads, two CPUs
  for (const auto& [key, slices] : model.slices) {
    ASSERT_TRUE(proto.slices.count(key)) << key.first << "/" << key.second;
    EXPECT_EQ(proto.slices.at(key), slices) << key.first << "/" << key.second;
  }
  const TrackKey cpu1{TimelineObserver::kCpuPid, TimelineObserver::kCpuPid + 2};
  const auto& cpu1_slices = proto.slices.at(cpu1);
  EXPECT_TRUE(std::any_of(cpu1_slices.begin(), cpu1_slices.end(), [](const SliceRecord& s) {
    return s.instant && s.name == "lost events" && s.count == 5 && s.start == 3500;
  }));
  ASSERT_EQ(proto.flows.size(), model.flows.size());
  ASSERT_EQ(proto.flows.size(), 2u);
  for (const auto& [id, f] : model.flows) {
    const FlowRecord& p = proto.flows.at(id);
    EXPECT_EQ(p.from, f.from);
    EXPECT_EQ(p.to, f.to);
    const SliceRecord* from = Enclosing(model.slices.at(f.from), f.from_ts);
    const SliceRecord* to = Enclosing(model.slices.at(f.to), f.to_ts);
    ASSERT_TRUE(from && to);
    EXPECT_EQ(p.from_ts, from->start) << "flow " << id << " starts on " << *from;
    EXPECT_EQ(p.to_ts, to->start) << "flow " << id << " ends on " << *to;
  }
}

// A process started by the recorder: forked as "cstool", it execs the workload. The
// process is named after its leader's new name (every workload cstool record started was
// "cstool", the name it was forked with).
void ExecScript(Sim& s) {
  s.Switch(0, 0, 0, kR, 1);
  s.Fork(100, 0, 1, 200, /*thread=*/false);
  s.Wake(150, 0, 1, 200, 0, 0, WakeupKind::kWakeupNew);
  s.Switch(200, 0, 1, kS, 200, false, "cstool");
  s.SysExit(250, 0, 200, 56);
  s.Rename(300, 0, 200, "workload");
  s.Switch(400, 0, 200, kS, 0);
  s.Finish(500);
}

TEST(ProtoTimeline, AProcessIsNamedAfterItsLeaderAsItExecs) {
  for (TimelineFormat format : {TimelineFormat::kProto, TimelineFormat::kJson}) {
    Timeline model;
    Write(format, model, ExecScript);
    EXPECT_EQ(model.process_names.at(200), "workload");
    EXPECT_EQ(model.thread_names.at({200, 200}), "workload 200");
  }
  Timeline model;
  EXPECT_EQ(DecodeProto(Write(TimelineFormat::kProto, model, ExecScript)).process_names.at(200),
            "workload");
}

// Both writers fed by the same observer give the same threads, slices and flows.
TEST(ProtoTimeline, SameContentAsJson) {
  Timeline model_p, model_j;
  const Timeline proto = DecodeProto(Write(TimelineFormat::kProto, model_p, Script));
  const Timeline js = DecodeJson(Write(TimelineFormat::kJson, model_j, Script));
  EXPECT_EQ(proto.thread_names.size(), js.thread_names.size());
  EXPECT_EQ(proto.slices, js.slices);
  ASSERT_EQ(proto.flows.size(), js.flows.size());
  for (const auto& [id, f] : js.flows) {
    EXPECT_EQ(proto.flows.at(id).from, f.from);
    EXPECT_EQ(proto.flows.at(id).to, f.to);
  }
}

// A CPU track where runs and their interrupts arrive out of order (interrupts before
// the run they interrupted, a run whose cause waited before a later one), with an
// interrupt starting and one ending exactly at its run's bounds: the begin/end events
// still nest as the slices do.
void OutOfOrder(TimelineSink& sink) {
  const int64_t pid = TimelineObserver::kCpuPid, tid = pid + 1;
  sink.ProcessName(pid, "CPUs");
  sink.ThreadName(pid, tid, "CPU 0");
  sink.Slice({.pid = pid, .tid = tid, .name = "irq:1", .start = 100, .end = 150});
  sink.Slice({.pid = pid, .tid = tid, .name = "irq:2", .start = 180, .end = 200});
  sink.Slice({.pid = pid,
              .tid = tid,
              .name = "a 1",
              .start = 100,
              .end = 200,
              .switched_out = true,
              .cause = "sleep:read"});
  sink.Slice({.pid = pid, .tid = tid, .name = "c 3", .start = 300, .end = 400});
  sink.Slice({.pid = pid, .tid = tid, .name = "b 2", .start = 200, .end = 300});
  // Far more than the reorder window, then one run that comes too late for it.
  for (int64_t i = 0; i < 2000; ++i)
    sink.Slice(
        {.pid = pid, .tid = tid, .name = "d 4", .start = 1000 + 10 * i, .end = 1010 + 10 * i});
  sink.Slice({.pid = pid, .tid = tid, .name = "late 5", .start = 400, .end = 1000});
  sink.Close();
}

TEST(ProtoTimeline, NestsSlicesThatArriveOutOfOrder) {
  std::ostringstream os;
  Timeline model;
  {
    auto writer = MakeProtoTimelineWriter(os);
    RecordingSink recorder(model, *writer);
    OutOfOrder(recorder);
  }
  model.Sort();
  const Timeline proto = DecodeProto(os.str());
  const TrackKey cpu0{TimelineObserver::kCpuPid, TimelineObserver::kCpuPid + 1};
  EXPECT_EQ(proto.slices.at(cpu0).size(), 2006u);
  EXPECT_EQ(proto.slices.at(cpu0), model.slices.at(cpu0));
}

// The synthetic ping-pong (tests/support/pingpong_script.h): the protobuf holds the JSON's
// 12005 thread slices, 2002 CPU runs and 2000 arrows in at most 60 bytes per traced event
// (the target; the JSON needs ~100).
TEST(ProtoTimeline, PingPongBytesPerEvent) {
  static uint64_t events = 0;
  Timeline model_p, model_j;
  const std::string bytes =
      Write(TimelineFormat::kProto, model_p, [](Sim& sim) { events = ScriptPingPong(sim); });
  const Timeline proto = DecodeProto(bytes);
  const Timeline js =
      DecodeJson(Write(TimelineFormat::kJson, model_j, [](Sim& sim) { ScriptPingPong(sim); }));
  EXPECT_EQ(proto.slices, js.slices);
  size_t thread_slices = 0, cpu_slices = 0;
  for (const auto& [key, v] : proto.slices)
    (key.first == TimelineObserver::kCpuPid ? cpu_slices : thread_slices) += v.size();
  EXPECT_EQ(thread_slices, 12005u);
  EXPECT_EQ(cpu_slices, 2002u);
  EXPECT_EQ(proto.flows.size(), 2000u);
  const double per_event = static_cast<double>(bytes.size()) / static_cast<double>(events);
  std::printf("%zu bytes, %llu events, %.1f B/event\n", bytes.size(),
              static_cast<unsigned long long>(events), per_event);
  EXPECT_LE(per_event, 60.0);
}

// The file the command writes: `report FILE --timeline t.pftrace` and `--timeline
// t.json` on a real recording (lost events, interrupts, ~1500 events) hold the same
// threads, slices (names, exact times, causes) and flows.
TEST(ProtoTimeline, ReportWritesBothFormatsAlike) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("cstool_timeline_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fixture = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/small_v6.dat";
  const std::string pf = (dir / "t.pftrace").string(), js = (dir / "t.json").string(),
                    forced = (dir / "t.out").string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{CSTOOL_BINARY, "report", fixture, "--all-threads", "--timeline",
                                 pf},
        {CSTOOL_BINARY, "report", fixture, "--all-threads", "--timeline", js},
        {CSTOOL_BINARY, "report", fixture, "--all-threads", "--timeline", forced,
         "--timeline-format", "proto"}}) {
    const CommandResult r = RunCommand(args);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string pf_bytes = read(pf), js_text = read(js);
  EXPECT_EQ(read(forced), pf_bytes);
  const Timeline proto = DecodeProto(pf_bytes);
  EXPECT_EQ(proto.primary_clocks, std::set<int>{pb::BUILTIN_CLOCK_BOOTTIME});  // says none
  const Timeline json_tl = DecodeJson(js_text);
  EXPECT_EQ(proto.thread_names, json_tl.thread_names);
  EXPECT_EQ(proto.process_names, json_tl.process_names);
  EXPECT_EQ(proto.slices.size(), json_tl.slices.size());
  size_t total = 0;
  for (const auto& [key, slices] : json_tl.slices) {
    ASSERT_TRUE(proto.slices.count(key)) << key.first << "/" << key.second;
    EXPECT_EQ(proto.slices.at(key).size(), slices.size()) << key.first << "/" << key.second;
    EXPECT_EQ(proto.slices.at(key), slices) << key.first << "/" << key.second;
    total += slices.size();
  }
  EXPECT_GT(total, 1000u);
  ASSERT_EQ(proto.flows.size(), json_tl.flows.size());
  for (const auto& [id, f] : json_tl.flows) {
    EXPECT_EQ(proto.flows.at(id).from, f.from) << id;
    EXPECT_EQ(proto.flows.at(id).to, f.to) << id;
  }
  // A third of the JSON's size or less.
  EXPECT_LE(pf_bytes.size() * 3, js_text.size());
  // Threads no event names (5329, the fixture's recorder) are named from the saved
  // cmdlines from the start, as in the report, not " 5329" and " (process unknown)".
  for (const auto& [key, name] : json_tl.thread_names)
    EXPECT_FALSE(name.starts_with(" ")) << key.second << " '" << name << "'";
  for (const auto& [pid, name] : json_tl.process_names)
    EXPECT_FALSE(name.starts_with(" ")) << pid << " '" << name << "'";
  for (const auto& [key, slices] : json_tl.slices)
    if (key.first == TimelineObserver::kCpuPid) {
      for (const SliceRecord& slice : slices)
        EXPECT_FALSE(slice.name.starts_with(" ")) << "'" << slice.name << "'";
    }

  // cstool records on the monotonic clock ("mono"), not on BOOTTIME: after a suspend
  // they differ, and another Perfetto trace would be merged misaligned.
  const CommandResult r = RunCommand(
      {CSTOOL_BINARY, "report", std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat",
       "--timeline", pf});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(DecodeProto(read(pf)).primary_clocks, std::set<int>{pb::BUILTIN_CLOCK_MONOTONIC});
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cstool::testing
