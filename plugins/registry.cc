#include "plugins/registry.h"

#include "plugins/irq_time.h"
#include "plugins/kernel_window.h"
#include "plugins/microstates.h"
#include "plugins/switch_causes.h"
#include "plugins/syscalls.h"

namespace cstool {

std::vector<std::unique_ptr<Plugin>> MakeReportPlugins(ReportModel& model, bool kernel_windows) {
  std::vector<std::unique_ptr<Plugin>> plugins;
  plugins.push_back(std::make_unique<MicrostatePlugin>(model));
  plugins.push_back(std::make_unique<SwitchCausePlugin>(model));
  plugins.push_back(std::make_unique<SyscallPlugin>(model));
  plugins.push_back(std::make_unique<IrqTimePlugin>(model));
  plugins.push_back(std::make_unique<KernelWindowPlugin>(model, kernel_windows));
  return plugins;
}

}  // namespace cstool
