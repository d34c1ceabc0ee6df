// How `cstool diff` tells that a thread of one recording is "the same" as a thread of
// another: pids and tids differ from run to run, so threads and processes are matched by
// command name and role, and among namesakes by creation order.
//
// - Processes: by name (the main thread's comm), the n-th created process of a name
//   matching the n-th of that name in the other recording.
// - Threads, within a matched process: the main thread (tid == pid) matches the main
//   thread; the others by comm, the n-th created thread of a comm matching the n-th.
// - Creation order: threads that existed before the trace began come first, by tid
//   (the kernel hands out tids in increasing order); threads whose fork the trace shows
//   follow, by the time they appeared. A process is as old as its oldest thread.
// - Threads whose process the file does not tell are one group ("-") matched by comm.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/diff_input.h"

namespace cstool {

// The identity of a process or thread across recordings.
struct SubjectKey {
  std::string process;       // the process's name; "-" for threads of unknown processes
  uint32_t process_nth = 0;  // 1-based among processes of that name (0: unknown process)
  bool is_thread = false;    // false: the process itself
  bool main_thread = false;  // the thread group leader
  std::string thread;        // the thread's comm (threads only)
  uint32_t thread_nth = 0;   // 1-based among same-named non-main threads of the process

  auto operator<=>(const SubjectKey&) const = default;
  bool operator==(const SubjectKey&) const = default;
  // "server", "server#2" (processes); "server (main)", "server/worker#3", "-/kworker" (threads).
  std::string Text() const;
};

struct KeyedProcess {
  SubjectKey key;
  int32_t pid = 0;
  std::vector<size_t> threads;  // indexes into DiffRecording::threads, creation order
};

struct KeyedRecording {
  std::vector<SubjectKey> thread_keys;  // parallel to DiffRecording::threads
  std::vector<KeyedProcess> processes;  // known processes, creation order
};

KeyedRecording KeyRecording(const DiffRecording& recording);

}  // namespace cstool
