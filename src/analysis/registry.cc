#include "analysis/registry.h"

#include "analysis/counter_window_observer.h"
#include "analysis/irq_time.h"
#include "analysis/kernel_stacks.h"
#include "analysis/microstates.h"
#include "analysis/migrations.h"
#include "analysis/switch_causes.h"
#include "analysis/syscalls.h"
#include "analysis/wakers.h"

namespace cstool {

std::vector<std::unique_ptr<Observer>> MakeReportObservers(ReportModel& model,
                                                           bool counter_windows) {
  std::vector<std::unique_ptr<Observer>> observers;
  observers.push_back(std::make_unique<MicrostateObserver>(model));
  observers.push_back(std::make_unique<SwitchCauseObserver>(model));
  observers.push_back(std::make_unique<SyscallObserver>(model));
  observers.push_back(std::make_unique<IrqTimeObserver>(model));
  observers.push_back(std::make_unique<WakerObserver>(model));
  observers.push_back(std::make_unique<MigrationObserver>(model));
  observers.push_back(std::make_unique<CounterWindowObserver>(model, counter_windows));
  if (model.has_stacks) observers.push_back(std::make_unique<KernelStackObserver>(model));
  return observers;
}

}  // namespace cstool
