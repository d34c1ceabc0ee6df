#include "commands/record_trigger.h"

#include <optional>
#include <vector>

#include "analysis/state_condition.h"
#include "decode/event_decoder.h"
#include "decode/merge.h"
#include "format/trace_handles.h"
#include "model/syscall_table.h"
#include "sched/state_machine.h"
#include "sched/trace_capabilities.h"
#include "tracefs/live_cpu_source.h"
#include "tracefs/session_formats.h"

namespace cstool {
namespace {

class StateTrigger final : public LiveTrigger {
 public:
  explicit StateTrigger(const std::string& condition)
      : observer_(ParseStateCondition(condition, syscalls_), syscalls_) {}

  bool SchedulerEventsSuffice() const override {
    return cstool::SchedulerEventsSuffice(observer_.condition());
  }

  void Start(const TracefsSession& session, int file_cpus, const TriggerScope& scope) override {
    tep_ = LoadSessionTep(session, file_cpus);
    decoder_ = std::make_unique<EventDecoder>(tep_.get());
    TrackingPolicy policy;
    policy.AddKnownThreads(scope.known_threads);
    policy.recorder_tids = scope.recorder_tids;
    if (!scope.target_pids.empty()) {
      policy.all = false;
      policy.root_pids = scope.target_pids;
    }
    machine_ =
        std::make_unique<StateMachine>(syscalls_, CapabilitiesOf(*decoder_), std::move(policy));
    machine_->AddObserver(&observer_);
    for (const AttachSeed& s : scope.seeds) machine_->SeedThread(s, scope.seeds_ts);
    open_after_ns_ = scope.window_ns;
  }

  std::optional<TriggerHit> Feed(const std::vector<LiveCpuSource*>& sources, int64_t cut) override {
    std::vector<std::unique_ptr<CpuRecordStream>> streams;
    streams.reserve(sources.size());
    for (LiveCpuSource* s : sources) streams.push_back(s->StreamUntil(cut));
    RecordMerger merger(std::move(streams));
    std::optional<TriggerHit> hit;
    merger.Run([&](const RawRecord& r) {
      if (r.is_loss()) {
        machine_->PushLostEvents(LostEvents{r.ts, r.cpu, r.lost});
      } else {
        decoder_->Decode(r, *machine_);
      }
      if (!hit)
        if (auto h = observer_.Take()) hit = TriggerHit{h->ts, std::move(h->what)};
    });
    // A stretch still going on at the cut, longer than the window (TriggerScope::window_ns).
    for (const Thread& t : machine_->threads()) {
      if (hit) break;
      observer_.CheckOpen(t, cut, open_after_ns_);
      if (auto h = observer_.Take()) hit = TriggerHit{h->ts, std::move(h->what)};
    }
    return hit;
  }

 private:
  SyscallTable syscalls_;
  StateConditionObserver observer_;
  TepHandlePtr tep_;
  std::unique_ptr<EventDecoder> decoder_;
  std::unique_ptr<StateMachine> machine_;
  int64_t open_after_ns_ = 0;
};

}  // namespace

std::unique_ptr<LiveTrigger> MakeStateTrigger(const std::string& condition) {
  return std::make_unique<StateTrigger>(condition);
}

}  // namespace cstool
