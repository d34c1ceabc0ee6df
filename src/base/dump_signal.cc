#include "base/dump_signal.h"

#include <csignal>

namespace cstool {
namespace {

volatile std::sig_atomic_t g_dump_requested = 0;

void OnDumpSignal(int) { g_dump_requested = 1; }

}  // namespace

DumpSignalScope::DumpSignalScope() {
  g_dump_requested = 0;
  struct sigaction sa {};
  sa.sa_handler = OnDumpSignal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, &old_usr1_);
}

DumpSignalScope::~DumpSignalScope() { sigaction(SIGUSR1, &old_usr1_, nullptr); }

bool DumpSignalScope::Take() {
  if (g_dump_requested == 0) return false;
  g_dump_requested = 0;
  return true;
}

}  // namespace cstool
