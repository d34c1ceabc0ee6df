// The timeline as a Perfetto protobuf trace (src/output/perfetto_trace.proto, Perfetto's
// own field numbers), which Perfetto's trace processor and UI open like their own
// traces. Every event is small because each track is a packet sequence of its own:
//  - the sequence's first packet clears its incremental state and sets its defaults:
//    the track (so no event names it) and an incremental clock (clock 64, defined
//    equal to the trace clock (MONOTONIC for cstool's "mono") by a ClockSnapshot: its values
//    come out unchanged), so a timestamp is the delta from the sequence's previous
//    one (2-3 bytes instead of 7);
//  - names, argument keys and argument strings are interned per sequence (iids), each
//    string sent once, with the first packet that uses it;
//  - a slice is a TYPE_SLICE_BEGIN (name, switch-out arguments, flows) and a
//    TYPE_SLICE_END (nothing but its time).
// Processes and threads are TrackDescriptors (with ProcessDescriptor/ThreadDescriptor)
// on a sequence of their own; CPU tracks are threads of the synthetic "CPUs" process
// as in the JSON, so both formats give the trace processor the same threads.
//
// Begin/end events nest by their order: the trace processor sorts by time and keeps the
// file's order between equal times. So each track holds its slices in a reorder window
// and writes them sorted (start, then the longer first), parents before children; a
// slice not nested in the one it starts in is cut at that one's end (only around lost
// events). A slice that arrives after its place was written (a CPU run whose cause
// waited for longer than the window) is written late with its name on the end event
// too, which the trace processor matches the begin by. A flow binds to the deepest
// slice enclosing its time on its track (the next slice when none encloses it), as the
// JSON importer binds 's'/'f' records.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "output/perfetto_trace.pb.h"
#include "output/timeline_output.h"

namespace cstool {
namespace {

namespace pb = perfetto::protos;

constexpr uint32_t kIncrementalClock = 64;  // the first sequence-scoped clock id
constexpr uint32_t kDescriptorSequence = 1;
// A track writes its oldest slices once it holds twice this many.
constexpr size_t kReorderWindow = 256;
// ... and writes them even without a clean cut (one slice enclosing all the others)
// once it holds this many.
constexpr size_t kMaxHeld = 64 * kReorderWindow;

// Comms are bytes, not necessarily UTF-8 (which proto strings must be): bytes outside
// ASCII are taken as Latin-1, as the JSON writer's \u00XX escapes do.
std::string Utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
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

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// The strings a sequence has interned, iids from 1; each is sent once.
class InternTable {
 public:
  uint64_t Intern(std::string_view s) {
    if (auto it = ids_.find(s); it != ids_.end()) return it->second;
    strings_.push_back(Utf8(s));
    sent_.push_back(false);
    ids_.emplace(std::string(s), strings_.size());
    return strings_.size();
  }
  // The string of iid if it was not sent yet (then it counts as sent).
  const std::string* TakeUnsent(uint64_t iid) {
    if (sent_[iid - 1]) return nullptr;
    sent_[iid - 1] = true;
    return &strings_[iid - 1];
  }

 private:
  std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>> ids_;
  std::vector<std::string> strings_;
  std::vector<bool> sent_;
};

struct Held {
  int64_t start = 0;
  int64_t end = 0;
  uint64_t name = 0;          // event name iid
  uint64_t cause = 0;         // annotation value iid, 0: no switch-out
  uint64_t preempted_at = 0;  // annotation value iid, 0: none
  bool instant = false;
  uint64_t arg_key = 0;  // instants: annotation name iid of arg_value
  int64_t arg_value = 0;
  uint64_t order = 0;  // arrival, for a stable order
};

struct FlowPoint {
  int64_t ts = 0;
  uint64_t id = 0;
  bool terminating = false;
};

struct Process {
  uint64_t uuid = 0;
  int64_t pid = 0;
  std::string name;
  std::optional<int64_t> sort_index;
  bool dirty = true;  // its descriptor needs (re)writing
};

struct Track {
  uint64_t uuid = 0;
  uint32_t sequence = 0;
  int64_t pid = 0;
  int64_t tid = 0;
  std::string name;
  std::optional<int64_t> sort_index;
  bool dirty = true;
  bool started = false;                                    // the sequence's first packet is written
  int64_t last_ts = 0;                                     // the incremental clock
  int64_t frontier = std::numeric_limits<int64_t>::min();  // latest time written
  InternTable names, arg_names, arg_values;
  std::vector<Held> held;
  std::vector<FlowPoint> flows;
  uint64_t arrivals = 0;
  size_t release_at = 2 * kReorderWindow;  // held slices that make it try to write some
};

class ProtoTimelineWriter : public TimelineSink {
 public:
  explicit ProtoTimelineWriter(std::ostream& os) : os_(os) {
    raw_.emplace(&os_);
    coded_.emplace(&*raw_);
  }
  ~ProtoTimelineWriter() override { Close(); }

  void ProcessName(int64_t pid, std::string_view name) override {
    Process& p = ProcessOf(pid);
    p.name = Utf8(name);
    p.dirty = true;
  }
  void ProcessSortIndex(int64_t pid, int64_t index) override {
    Process& p = ProcessOf(pid);
    p.sort_index = index;
    p.dirty = true;
  }
  void ThreadName(int64_t pid, int64_t tid, std::string_view name) override {
    Track& t = TrackOf(pid, tid);
    t.name = Utf8(name);
    t.dirty = true;
  }
  void ThreadSortIndex(int64_t pid, int64_t tid, int64_t index) override {
    Track& t = TrackOf(pid, tid);
    t.sort_index = index;
    t.dirty = true;
  }

  // The builtin clock of the tracefs one: cstool records on "mono"; a clock Perfetto has
  // no builtin for ("local", "global", ...) stays BOOTTIME, the clock of Perfetto's own
  // ftrace data, which none of them equals exactly.
  void TraceClock(std::string_view clock) override {
    trace_clock_ = clock == "mono"       ? pb::BUILTIN_CLOCK_MONOTONIC
                   : clock == "mono_raw" ? pb::BUILTIN_CLOCK_MONOTONIC_RAW
                                         : pb::BUILTIN_CLOCK_BOOTTIME;
  }

  void Slice(const TimelineSlice& s) override {
    if (closed_) return;
    Track& t = TrackOf(s.pid, s.tid);
    Held h{.start = s.start, .end = s.end, .name = t.names.Intern(s.name)};
    if (s.switched_out) {
      h.cause = t.arg_values.Intern(s.cause);
      if (!s.preempted_at.empty()) h.preempted_at = t.arg_values.Intern(s.preempted_at);
    }
    Hold(t, h);
  }

  void Instant(const TimelineInstant& i) override {
    if (closed_) return;
    Track& t = TrackOf(i.pid, i.tid);
    Hold(t, {.start = i.ts,
             .end = i.ts,
             .name = t.names.Intern(i.name),
             .instant = true,
             .arg_key = t.arg_names.Intern(i.arg_key),
             .arg_value = i.arg_value});
  }

  void Flow(uint64_t id, const TimelineFlowEnd& from, const TimelineFlowEnd& to) override {
    if (closed_) return;
    TrackOf(from.pid, from.tid).flows.push_back({from.ts, id, false});
    TrackOf(to.pid, to.tid).flows.push_back({to.ts, id, true});
  }

  void Close() override {
    if (closed_) return;
    for (Track& t : tracks_) Release(t, true);
    for (Process& p : processes_)
      if (p.dirty) WriteProcess(p);
    // (A track that only an arrow reached stays unnamed, as in the JSON.)
    for (Track& t : tracks_)
      if (t.dirty && (!t.name.empty() || t.started)) WriteThread(t);
    closed_ = true;
    coded_.reset();
    raw_.reset();
    os_.flush();
  }

 private:
  static uint64_t Key(int64_t pid, int64_t tid) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | static_cast<uint32_t>(tid);
  }

  Process& ProcessOf(int64_t pid) {
    auto [it, inserted] = process_index_.try_emplace(pid, processes_.size());
    if (inserted) processes_.push_back({.uuid = next_uuid_++, .pid = pid});
    return processes_[it->second];
  }

  Track& TrackOf(int64_t pid, int64_t tid) {
    auto [it, inserted] = track_index_.try_emplace(Key(pid, tid), tracks_.size());
    if (inserted) {
      ProcessOf(pid);
      tracks_.emplace_back();
      Track& t = tracks_.back();
      t.uuid = next_uuid_++;
      t.sequence = next_sequence_++;
      t.pid = pid;
      t.tid = tid;
    }
    return tracks_[it->second];
  }

  void Hold(Track& t, Held h) {
    h.order = t.arrivals++;
    t.held.push_back(h);
    if (t.held.size() >= t.release_at) Release(t, false);
  }

  void WritePacket(const pb::TracePacket& packet) {
    const size_t size = packet.ByteSizeLong();
    coded_->WriteTag(0x0a);  // Trace.packet, length-delimited
    coded_->WriteVarint32(static_cast<uint32_t>(size));
    packet.SerializeWithCachedSizes(&*coded_);
  }

  void WriteProcess(Process& p) {
    p.dirty = false;
    packet_.Clear();
    packet_.set_trusted_packet_sequence_id(kDescriptorSequence);
    pb::TrackDescriptor* d = packet_.mutable_track_descriptor();
    d->set_uuid(p.uuid);
    pb::ProcessDescriptor* pd = d->mutable_process();
    pd->set_pid(static_cast<int32_t>(p.pid));
    if (!p.name.empty()) pd->set_process_name(p.name);
    if (p.sort_index) pd->set_legacy_sort_index(static_cast<int32_t>(*p.sort_index));
    WritePacket(packet_);
  }

  void WriteThread(Track& t) {
    Process& p = ProcessOf(t.pid);
    if (p.dirty) WriteProcess(p);
    t.dirty = false;
    packet_.Clear();
    packet_.set_trusted_packet_sequence_id(kDescriptorSequence);
    pb::TrackDescriptor* d = packet_.mutable_track_descriptor();
    d->set_uuid(t.uuid);
    d->set_parent_uuid(p.uuid);
    pb::ThreadDescriptor* td = d->mutable_thread();
    td->set_pid(static_cast<int32_t>(t.pid));
    td->set_tid(t.tid);
    if (!t.name.empty()) td->set_thread_name(t.name);
    if (t.sort_index) td->set_legacy_sort_index(static_cast<int32_t>(*t.sort_index));
    WritePacket(packet_);
  }

  // The sequence's first packet: its incremental state, defaults and clock.
  void StartSequence(Track& t) {
    t.started = true;
    packet_.Clear();
    packet_.set_trusted_packet_sequence_id(t.sequence);
    packet_.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    pb::TracePacketDefaults* defaults = packet_.mutable_trace_packet_defaults();
    defaults->set_timestamp_clock_id(kIncrementalClock);
    defaults->mutable_track_event_defaults()->set_track_uuid(t.uuid);
    pb::ClockSnapshot* clocks = packet_.mutable_clock_snapshot();
    pb::ClockSnapshot::Clock* incremental = clocks->add_clocks();
    incremental->set_clock_id(kIncrementalClock);
    incremental->set_timestamp(0);
    incremental->set_is_incremental(true);
    pb::ClockSnapshot::Clock* trace_clock = clocks->add_clocks();
    trace_clock->set_clock_id(trace_clock_);
    trace_clock->set_timestamp(0);
    clocks->set_primary_trace_clock(trace_clock_);
    WritePacket(packet_);
    t.last_ts = 0;
  }

  // Starts an event packet on t's sequence at ts.
  pb::TrackEvent* BeginEvent(Track& t, int64_t ts, pb::TrackEvent::Type type) {
    if (t.dirty) WriteThread(t);
    if (!t.started) StartSequence(t);
    packet_.Clear();
    packet_.set_timestamp(static_cast<uint64_t>(ts - t.last_ts));  // wraps when negative
    t.last_ts = ts;
    t.frontier = std::max(t.frontier, ts);
    packet_.set_trusted_packet_sequence_id(t.sequence);
    pb::TrackEvent* e = packet_.mutable_track_event();
    e->set_type(type);
    return e;
  }

  void SetName(Track& t, pb::TrackEvent* e, uint64_t iid) {
    e->set_name_iid(iid);
    if (const std::string* s = t.names.TakeUnsent(iid)) {
      pb::EventName* n = packet_.mutable_interned_data()->add_event_names();
      n->set_iid(iid);
      n->set_name(*s);
    }
  }

  void AddArg(Track& t, pb::TrackEvent* e, std::string_view key, uint64_t value_iid) {
    pb::DebugAnnotation* a = e->add_debug_annotations();
    a->set_name_iid(ArgName(t, key));
    a->set_string_value_iid(value_iid);
    if (const std::string* s = t.arg_values.TakeUnsent(value_iid)) {
      pb::InternedString* v = packet_.mutable_interned_data()->add_debug_annotation_string_values();
      v->set_iid(value_iid);
      v->set_str(*s);
    }
  }

  uint64_t ArgName(Track& t, std::string_view key) {
    return ArgNameIid(t, t.arg_names.Intern(key));
  }
  uint64_t ArgNameIid(Track& t, uint64_t iid) {
    if (const std::string* s = t.arg_names.TakeUnsent(iid)) {
      pb::DebugAnnotationName* n = packet_.mutable_interned_data()->add_debug_annotation_names();
      n->set_iid(iid);
      n->set_name(*s);
    }
    return iid;
  }

  void WriteStart(Track& t, const Held& h, const FlowPoint* flows, size_t nflows) {
    pb::TrackEvent* e = BeginEvent(
        t, h.start, h.instant ? pb::TrackEvent::TYPE_INSTANT : pb::TrackEvent::TYPE_SLICE_BEGIN);
    SetName(t, e, h.name);
    if (h.cause) AddArg(t, e, "cause", h.cause);
    if (h.preempted_at) AddArg(t, e, "preempted_at", h.preempted_at);
    if (h.instant) {
      pb::DebugAnnotation* a = e->add_debug_annotations();
      a->set_name_iid(ArgNameIid(t, h.arg_key));
      a->set_int_value(h.arg_value);
    }
    for (size_t i = 0; i < nflows; ++i) {
      if (flows[i].terminating)
        e->add_terminating_flow_ids(flows[i].id);
      else
        e->add_flow_ids(flows[i].id);
    }
    WritePacket(packet_);
  }

  void WriteEnd(Track& t, const Held& h, bool late) {
    pb::TrackEvent* e = BeginEvent(t, h.end, pb::TrackEvent::TYPE_SLICE_END);
    if (late) SetName(t, e, h.name);
    WritePacket(packet_);
  }

  // Writes the oldest held slices (all of them when `all`) in nesting order.
  void Release(Track& t, bool all) {
    std::vector<Held>& held = t.held;
    std::sort(held.begin(), held.end(), [](const Held& a, const Held& b) {
      if (a.start != b.start) return a.start < b.start;
      if (a.end != b.end) return a.end > b.end;
      if (a.instant != b.instant) return b.instant;
      return a.order < b.order;
    });
    // The cut: the slices before it end before the ones after it start.
    size_t cut = all ? held.size() : 0;
    int64_t group_end = std::numeric_limits<int64_t>::min();
    {
      int64_t max_end = std::numeric_limits<int64_t>::min();
      for (size_t i = 0; i < held.size(); ++i) {
        if (!all && i > 0 && i + kReorderWindow <= held.size() && held[i].start >= max_end) {
          cut = i;
          group_end = max_end;
        }
        max_end = std::max(max_end, held[i].end);
      }
      if (all) group_end = std::numeric_limits<int64_t>::max();
      if (cut == 0 && held.size() >= kMaxHeld) {
        cut = held.size() - kReorderWindow;
        group_end = held[cut].start;
      }
    }
    // Without a cut, try again once more have come.
    t.release_at = held.size() - cut + (cut == 0 ? kReorderWindow : kReorderWindow + 1);
    if (cut == 0) return;

    // Nesting, and which slice each flow binds to (the deepest enclosing its time, else
    // the next one).
    std::sort(t.flows.begin(), t.flows.end(),
              [](const FlowPoint& a, const FlowPoint& b) { return a.ts < b.ts; });
    size_t nflows = 0;
    while (nflows < t.flows.size() && t.flows[nflows].ts < group_end) ++nflows;
    std::vector<size_t> owner(nflows, 0);
    {
      std::vector<size_t> stack;
      size_t f = 0;
      auto bind_flows_before = [&](int64_t limit, size_t next) {
        for (; f < nflows && t.flows[f].ts < limit; ++f) {
          while (!stack.empty() && held[stack.back()].end <= t.flows[f].ts) stack.pop_back();
          owner[f] = stack.empty() ? next : stack.back();
        }
      };
      for (size_t i = 0; i < cut; ++i) {
        Held& h = held[i];
        bind_flows_before(h.start, i);
        while (!stack.empty() && held[stack.back()].end <= h.start) stack.pop_back();
        if (!stack.empty() && h.end > held[stack.back()].end) h.end = held[stack.back()].end;
        if (!h.instant) stack.push_back(i);
      }
      bind_flows_before(std::numeric_limits<int64_t>::max(), cut > 0 ? cut - 1 : 0);
    }
    std::vector<size_t> by_owner(nflows);
    for (size_t f = 0; f < nflows; ++f) by_owner[f] = f;
    std::stable_sort(by_owner.begin(), by_owner.end(),
                     [&](size_t a, size_t b) { return owner[a] < owner[b]; });
    std::vector<FlowPoint> bound;

    std::vector<std::pair<size_t, bool>> open;  // slice, written late
    size_t next_flow = 0;
    for (size_t i = 0; i < cut; ++i) {
      const Held& h = held[i];
      while (!open.empty() && held[open.back().first].end <= h.start) {
        WriteEnd(t, held[open.back().first], open.back().second);
        open.pop_back();
      }
      bound.clear();
      while (next_flow < nflows && owner[by_owner[next_flow]] == i)
        bound.push_back(t.flows[by_owner[next_flow++]]);
      const bool late = h.start < t.frontier;
      WriteStart(t, h, bound.data(), bound.size());
      if (!h.instant) open.emplace_back(i, late);
    }
    while (!open.empty()) {
      WriteEnd(t, held[open.back().first], open.back().second);
      open.pop_back();
    }
    held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(cut));
    t.flows.erase(t.flows.begin(), t.flows.begin() + static_cast<std::ptrdiff_t>(nflows));
  }

  std::ostream& os_;
  std::optional<google::protobuf::io::OstreamOutputStream> raw_;
  std::optional<google::protobuf::io::CodedOutputStream> coded_;
  pb::TracePacket packet_;
  std::deque<Process> processes_;
  std::unordered_map<int64_t, size_t> process_index_;
  std::deque<Track> tracks_;
  std::unordered_map<uint64_t, size_t> track_index_;
  uint64_t next_uuid_ = 1;
  pb::BuiltinClock trace_clock_ = pb::BUILTIN_CLOCK_BOOTTIME;
  uint32_t next_sequence_ = kDescriptorSequence + 1;
  bool closed_ = false;
};

}  // namespace

std::unique_ptr<TimelineSink> MakeProtoTimelineWriter(std::ostream& os) {
  return std::make_unique<ProtoTimelineWriter>(os);
}

}  // namespace cstool
