#include "base/stop_signal.h"

#include <signal.h>

#include <csignal>

namespace cstool {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
volatile std::sig_atomic_t g_stop_from_kernel = 0;

void OnStopSignal(int sig, siginfo_t* info, void*) {
  if (g_stop_signal == 0) {
    g_stop_from_kernel = info != nullptr && info->si_code == SI_KERNEL;
    g_stop_signal = sig;
  }
}

// A caught SIGPIPE does nothing: the write that raised it fails with EPIPE instead.
void OnBrokenPipe(int) {}

}  // namespace

StopSignalScope::StopSignalScope() {
  g_stop_signal = 0;
  g_stop_from_kernel = 0;
  struct sigaction sa {};
  sa.sa_sigaction = OnStopSignal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
  sigaction(SIGHUP, &sa, &old_hup_);
  // A reader of the progress lines that went away (`2>&1 | head`) must not kill a command
  // that holds tracefs instances: its writes fail, and it ends as it would have. A handler,
  // unlike SIG_IGN, is reset by exec: the recorded command keeps SIGPIPE's default.
  struct sigaction on_pipe {};
  on_pipe.sa_handler = OnBrokenPipe;
  on_pipe.sa_flags = SA_RESTART;
  sigemptyset(&on_pipe.sa_mask);
  sigaction(SIGPIPE, &on_pipe, &old_pipe_);
}

StopSignalScope::~StopSignalScope() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  sigaction(SIGHUP, &old_hup_, nullptr);
  sigaction(SIGPIPE, &old_pipe_, nullptr);
}

int StopSignalScope::Received() { return g_stop_signal; }
bool StopSignalScope::FromKernel() { return g_stop_from_kernel != 0; }

}  // namespace cstool
