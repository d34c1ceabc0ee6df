#include "analysis/irq_time.h"

namespace cstool {

void IrqTimeObserver::OnTraceEnd(int64_t /*ts*/) {
  summary_.ForEachTask([&](const Thread& t, const IrqTaskSummary& task) {
    for (const auto& [name, n] : task.sources) {
      if (n.count == 0 && n.time_ns == 0) continue;  // a rest moved away whole
      // The model owns the names its keys point to: the observer dies before the model
      // is rendered.
      auto it = model_.irq_names.find(name);
      if (it == model_.irq_names.end()) it = model_.irq_names.emplace(name).first;
      IrqStats& st = model_.For(t).irqs[&*it];
      st.count += n.count;
      st.time_ns += n.time_ns;
    }
  });
}

}  // namespace cstool
