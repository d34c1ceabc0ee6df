// Kernel counters against real threads: taskstats exit notifications (root), /proc
// snapshots of a live process, and the delay-accounting sysctl guard (root).
//
// Fixture capture (tests/fixtures/taskstats/, used by tests/unit/kernel/kernel_counters_test.cc):
//   export CSTOOL_CAPTURE_DIR=$PWD/tests/fixtures/taskstats
//   build/cstool_integration_tests --gtest_also_run_disabled_tests
//       --gtest_filter='*CaptureFixtures*'
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "kernel/delay_accounting.h"
#include "kernel/proc_task_counters.h"
#include "kernel/taskstats_listener.h"

namespace cstool {
namespace {

constexpr int kWorkers = 3;
constexpr int kSleepsPerWorker = 50;

// Lives in a MAP_SHARED page so the forked child can report to the test.
struct Shared {
  std::atomic<int> started{0};  // workers that set their name and tid
  std::atomic<int> parked{0};   // workers done sleeping (hold mode)
  int32_t main_tid = 0;
  int32_t worker_tid[kWorkers] = {};
  // The worker's own last reading of /proc/thread-self/status, taken just before it
  // returns from its thread function.
  uint64_t last_nvcsw[kWorkers] = {};
  uint64_t last_nivcsw[kWorkers] = {};
  uint64_t main_last_nvcsw = 0;
  bool read_failed = false;
};

Shared* MapShared() {
  void* p =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  return new (p) Shared;
}

int32_t GetTid() { return static_cast<int32_t>(syscall(SYS_gettid)); }

// Reads the calling thread's switch counts without touching the heap (a malloc arena
// lock could make us sleep, which would itself be a voluntary switch).
bool ReadOwnSwitches(uint64_t* nvcsw, uint64_t* nivcsw) {
  char buf[4096];
  int fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  if (n <= 0) return false;
  auto f = ParseProcStatus(std::string_view(buf, static_cast<size_t>(n)));
  if (!f) return false;
  *nvcsw = f->nvcsw;
  *nivcsw = f->nivcsw;
  return true;
}

void SleepShort(int n) {
  for (int i = 0; i < n; ++i) {
    timespec ts{0, 200'000};  // 200 us
    nanosleep(&ts, nullptr);
  }
}

struct WorkerArg {
  Shared* shared;
  int index;
  int sleeps;
  int release_fd;  // >= 0: park (blocking read) after sleeping, for /proc snapshots
};

void* Worker(void* p) {
  auto* a = static_cast<WorkerArg*>(p);
  char name[16];
  std::snprintf(name, sizeof name, "cst-w%d", a->index);
  prctl(PR_SET_NAME, name);
  a->shared->worker_tid[a->index] = GetTid();
  a->shared->started.fetch_add(1);
  // Start together once all threads exist: no mmap (stack allocation) by the creating
  // thread can then contend with the exit paths below.
  while (a->shared->started.load() < kWorkers) SleepShort(1);
  // Sleep until the kernel has counted `sleeps` more voluntary switches. A nanosleep
  // is not always one: if the thread is preempted between arming the timer and
  // schedule() and the timer fires meanwhile, it returns without blocking (seen under
  // load), so counting calls would not give a known number of switches.
  uint64_t base = 0, now = 0, iv = 0;
  if (!ReadOwnSwitches(&base, &iv)) a->shared->read_failed = true;
  do {
    SleepShort(1);
    if (!ReadOwnSwitches(&now, &iv)) a->shared->read_failed = true;
  } while (now < base + static_cast<uint64_t>(a->sleeps) && !a->shared->read_failed);
  if (a->release_fd >= 0) {
    a->shared->parked.fetch_add(1);
    char c;
    while (read(a->release_fd, &c, 1) < 0 && errno == EINTR) {
    }
    return nullptr;
  }
  uint64_t v = 0;
  if (!ReadOwnSwitches(&v, &iv)) a->shared->read_failed = true;
  a->shared->last_nvcsw[a->index] = v;
  a->shared->last_nivcsw[a->index] = iv;
  return nullptr;
}

// Body of the forked child: kWorkers threads doing `sleeps` nanosleeps each.
[[noreturn]] void ChildMain(Shared* shared, int go_fd, int release_fd, int sleeps) {
  prctl(PR_SET_NAME, "cst-main");
  shared->main_tid = GetTid();
  char c;
  if (go_fd >= 0 && read(go_fd, &c, 1) != 1) _exit(3);
  pthread_t th[kWorkers];
  WorkerArg args[kWorkers];
  for (int i = 0; i < kWorkers; ++i) {
    args[i] = {shared, i, sleeps, release_fd};
    if (pthread_create(&th[i], nullptr, Worker, &args[i]) != 0) _exit(4);
  }
  for (auto& t : th) pthread_join(t, nullptr);
  uint64_t v = 0, iv = 0;
  ReadOwnSwitches(&v, &iv);
  shared->main_last_nvcsw = v;
  _exit(0);
}

struct Child {
  pid_t pid = -1;
  int go_wr = -1;  // write a byte to start the workload
};

Child ForkChild(Shared* shared, int release_fd, int sleeps, int close_in_child = -1) {
  int go[2];
  if (pipe2(go, O_CLOEXEC) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    close(go[1]);
    if (close_in_child >= 0) close(close_in_child);
    ChildMain(shared, go[0], release_fd, sleeps);
  }
  close(go[0]);
  return {pid, go[1]};
}

int WaitExit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

TEST(TaskstatsListener, ReportsExitOfEveryThreadOfAFilteredChild) {
  if (geteuid() != 0) GTEST_SKIP() << "taskstats exit notifications need root";
  Shared* shared = MapShared();
  ASSERT_NE(shared, nullptr);
  // Fork before the listener starts its thread, so the child is single-threaded.
  Child child = ForkChild(shared, -1, kSleepsPerWorker);
  ASSERT_GT(child.pid, 0);

  TaskstatsListenerOptions opts;
  opts.pids = {child.pid};
  TaskstatsListener listener(opts);
  if (!listener.available()) {
    close(child.go_wr);  // child exits on EOF
    WaitExit(child.pid);
    GTEST_SKIP() << "taskstats " << listener.status();
  }
  ASSERT_EQ(write(child.go_wr, "g", 1), 1);
  close(child.go_wr);
  int status = WaitExit(child.pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // All threads have passed taskstats_exit() before wait returns; Stop() drains up to
  // the deregistration ack, so no waiting or timing is involved.
  listener.Stop();
  ASSERT_FALSE(shared->read_failed);

  std::map<int32_t, KernelTaskCounters> by_tid;
  for (const auto& r : listener.Records()) {
    EXPECT_EQ(r.source, KernelTaskCounters::Source::kTaskstatsExit);
    EXPECT_EQ(r.tgid, child.pid) << "filter kept a foreign thread " << r.tid;
    EXPECT_TRUE(by_tid.emplace(r.tid, r).second) << "duplicate exit for " << r.tid;
  }
  ASSERT_EQ(by_tid.size(), size_t{kWorkers + 1});
  ASSERT_TRUE(by_tid.count(shared->main_tid));
  EXPECT_EQ(shared->main_tid, child.pid);
  EXPECT_EQ(by_tid[child.pid].comm, "cst-main");
  EXPECT_GT(by_tid[child.pid].exec_runtime_ns, 0);
  EXPECT_EQ(by_tid[child.pid].nvcsw, shared->main_last_nvcsw);

  for (int i = 0; i < kWorkers; ++i) {
    const int32_t tid = shared->worker_tid[i];
    ASSERT_TRUE(by_tid.count(tid)) << "no exit record for worker " << i << " tid " << tid;
    const KernelTaskCounters& r = by_tid[tid];
    EXPECT_EQ(r.comm, "cst-w" + std::to_string(i));
    EXPECT_EQ(r.ppid, getpid());
    EXPECT_GE(r.nvcsw, uint64_t{kSleepsPerWorker});
    EXPECT_GT(r.exec_runtime_ns, 0);
    EXPECT_GT(r.run_delay_count, 0u);
    // The exit record is filled in do_exit() -> taskstats_exit(), before the thread's
    // final switch (which is not counted in it). Between the worker's last /proc read and
    // that point it only closes a file, returns through glibc's thread exit and enters
    // exit(): nothing there sleeps, so the two readings are equal. (Measured over 500
    // runs on this machine: always equal.) nivcsw may differ: a preemption can happen
    // anywhere in between.
    EXPECT_EQ(r.nvcsw, shared->last_nvcsw[i]) << "worker " << i;
    EXPECT_GE(r.nivcsw, shared->last_nivcsw[i]) << "worker " << i;
  }
  const auto st = listener.stats();
  EXPECT_EQ(st.enobufs, 0u);
  EXPECT_EQ(st.parse_errors, 0u);
  EXPECT_EQ(st.kept, size_t{kWorkers + 1});
  EXPECT_GE(st.tgid_aggregates, 1u);  // the last thread of the child carries the process sum
  munmap(shared, sizeof(Shared));
}

TEST(TaskstatsListener, BadCpuListIsReportedAsUnavailableWithoutThrowing) {
  if (geteuid() != 0) GTEST_SKIP() << "taskstats registration needs root";
  TaskstatsListenerOptions opts;
  opts.cpu_list = "0-100000";  // not a subset of the possible CPUs: EINVAL
  TaskstatsListener listener(opts);
  EXPECT_FALSE(listener.available());
  EXPECT_EQ(listener.status().rfind("unavailable: ", 0), 0u) << listener.status();
  KernelCounterSet set;
  listener.ExportTo(&set);
  EXPECT_TRUE(set.empty());
  ASSERT_EQ(set.notes().size(), 1u);
  listener.Stop();  // harmless
}

TEST(TaskstatsListener, AcceptAllAndAddPidWhileRunning) {
  if (geteuid() != 0) GTEST_SKIP() << "taskstats exit notifications need root";
  TaskstatsListenerOptions all_opts;
  all_opts.accept_all = true;
  TaskstatsListener all(all_opts);
  TaskstatsListenerOptions late_opts;
  late_opts.follow_children = false;
  TaskstatsListener late(late_opts);  // empty filter: keeps nothing until AddPid
  if (!all.available()) GTEST_SKIP() << "taskstats " << all.status();
  ASSERT_TRUE(late.available()) << late.status();
  pid_t first = fork();
  if (first == 0) _exit(0);
  WaitExit(first);
  pid_t second = fork();
  if (second == 0) {
    usleep(1000);
    _exit(0);
  }
  late.AddPid(second);
  WaitExit(second);
  all.Stop();
  late.Stop();
  std::set<int32_t> seen_all, seen_late;
  for (const auto& r : all.Records()) seen_all.insert(r.tid);
  for (const auto& r : late.Records()) seen_late.insert(r.tid);
  EXPECT_TRUE(seen_all.count(first));
  EXPECT_TRUE(seen_all.count(second));
  EXPECT_EQ(seen_late, std::set<int32_t>{second});
}

TEST(TaskstatsListener, SocketOverflowIsCountedAndReported) {
  if (geteuid() != 0) GTEST_SKIP() << "taskstats exit notifications need root";
  // The predicate blocks the receiving thread on the first exit it sees until we have
  // produced many more exits than the tiny socket buffer holds: the kernel must drop
  // some, and the listener must say so.
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  TaskstatsListenerOptions opts;
  opts.follow_children = false;
  opts.receive_buffer_bytes = 1;  // the kernel rounds up to its minimum (a few KiB)
  opts.predicate = [&](const KernelTaskCounters&) {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return release; });
    return true;
  };
  TaskstatsListener listener(opts);
  if (!listener.available()) GTEST_SKIP() << "taskstats " << listener.status();
  constexpr int kChildren = 200;
  for (int i = 0; i < kChildren; ++i) {
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    WaitExit(pid);
  }
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  listener.Stop();
  const auto st = listener.stats();
  for (auto& e : listener.errors()) ADD_FAILURE() << e;
  EXPECT_GE(st.enobufs, 1u);
  EXPECT_LT(st.kept, uint64_t{kChildren});
  KernelCounterSet set;
  listener.ExportTo(&set);
  EXPECT_EQ(set.counters().at("taskstats_enobufs"), st.enobufs);
  ASSERT_FALSE(set.notes().empty());
  EXPECT_NE(set.notes()[0].find("overflowed"), std::string::npos) << set.notes()[0];
}

TEST(ProcTaskCounters, SnapshotOfLiveMultithreadedChild) {
  Shared* shared = MapShared();
  ASSERT_NE(shared, nullptr);
  int release[2];
  ASSERT_EQ(pipe2(release, O_CLOEXEC), 0);
  Child child = ForkChild(shared, release[0], 10, release[1]);
  ASSERT_GT(child.pid, 0);
  close(release[0]);
  ASSERT_EQ(write(child.go_wr, "g", 1), 1);
  close(child.go_wr);
  while (shared->parked.load() < kWorkers) {
    timespec ts{0, 1'000'000};
    nanosleep(&ts, nullptr);
  }
  const int32_t pids[] = {child.pid, shared->worker_tid[1], 999999999};
  ProcSnapshot snap = SnapshotProcTasks(pids);
  close(release[1]);  // EOF releases the workers
  int status = WaitExit(child.pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  EXPECT_TRUE(snap.errors.empty()) << snap.errors.front();
  EXPECT_EQ(snap.missing_processes, 1u);               // 999999999
  ASSERT_EQ(snap.tasks.size(), size_t{kWorkers + 1});  // the worker tid did not add a copy
  std::map<int32_t, KernelTaskCounters> by_tid;
  for (const auto& t : snap.tasks) {
    EXPECT_EQ(t.source, KernelTaskCounters::Source::kProcSnapshot);
    EXPECT_EQ(t.tgid, child.pid);
    EXPECT_EQ(t.ppid, getpid());
    EXPECT_GT(t.taken_at_ns, 0);
    // The switch counts were read before the times, inside the same bracket.
    EXPECT_GT(t.switches_read_from_ns, 0);
    EXPECT_LT(t.switches_read_from_ns, t.switches_read_to_ns);
    EXPECT_LT(t.switches_read_to_ns, t.taken_at_ns);
    by_tid[t.tid] = t;
  }
  ASSERT_TRUE(by_tid.count(child.pid));
  EXPECT_EQ(by_tid[child.pid].comm, "cst-main");
  for (int i = 0; i < kWorkers; ++i) {
    ASSERT_TRUE(by_tid.count(shared->worker_tid[i]));
    const auto& t = by_tid[shared->worker_tid[i]];
    EXPECT_EQ(t.comm, "cst-w" + std::to_string(i));
    EXPECT_GE(t.nvcsw, 10u);  // 10 counted sleeps, then blocked in read()
    EXPECT_GT(t.exec_runtime_ns, 0);
    EXPECT_GT(t.run_delay_count, 0u);
    EXPECT_FALSE(t.blkio_delay_ns.has_value());
  }
  munmap(shared, sizeof(Shared));
}

TEST(DelayAccounting, EnablesAndRestoresTheSysctl) {
  if (geteuid() != 0) GTEST_SKIP() << "writing kernel.task_delayacct needs root";
  const std::string path = "/proc/sys/kernel/task_delayacct";
  auto read_value = [&] {
    std::ifstream f(path);
    std::string v;
    f >> v;
    return v;
  };
  const std::string before = read_value();
  if (before.empty()) GTEST_SKIP() << path << " not readable";
  {
    DelayAccountingGuard guard;
    ASSERT_TRUE(guard.active()) << guard.message();
    EXPECT_EQ(read_value(), "1");
    EXPECT_EQ(guard.state(), before == "0" ? DelayAccountingGuard::State::kEnabled
                                           : DelayAccountingGuard::State::kAlreadyOn);
  }
  EXPECT_EQ(read_value(), before);
}

// Not a test: writes the fixtures of tests/fixtures/taskstats/ (see the top of the file).
TEST(TaskstatsListener, DISABLED_CaptureFixtures) {
  ASSERT_EQ(geteuid(), 0u);
  const char* dir = std::getenv("CSTOOL_CAPTURE_DIR");
  ASSERT_NE(dir, nullptr) << "set CSTOOL_CAPTURE_DIR";
  std::vector<std::vector<uint8_t>> datagrams;
  std::mutex mu;
  TaskstatsListenerOptions opts;
  opts.accept_all = true;
  opts.raw_datagram_hook = [&](std::span<const uint8_t> d) {
    std::lock_guard lock(mu);
    datagrams.emplace_back(d.begin(), d.end());
  };
  Shared* shared = MapShared();
  ASSERT_NE(shared, nullptr);
  Child multi = ForkChild(shared, -1, 5);  // cst-main + cst-w0..2, 5 sleeps each
  pid_t single = fork();
  if (single == 0) {
    prctl(PR_SET_NAME, "cst-single");
    SleepShort(3);
    _exit(7);
  }
  TaskstatsListener listener(opts);
  ASSERT_TRUE(listener.available()) << listener.status();
  ASSERT_EQ(write(multi.go_wr, "g", 1), 1);
  close(multi.go_wr);
  WaitExit(multi.pid);
  WaitExit(single);
  listener.Stop();

  auto save = [&](const std::string& name, const std::vector<uint8_t>& d) {
    std::ofstream f(std::string(dir) + "/" + name, std::ios::binary);
    f.write(reinterpret_cast<const char*>(d.data()), static_cast<std::streamsize>(d.size()));
  };
  nlohmann::json expected;
  for (const auto& d : datagrams) {
    auto r = ParseTaskstatsMessage(d);
    if (r.tasks.size() != 1) continue;
    const auto& t = r.tasks[0];
    std::string name;
    if (t.tid == shared->worker_tid[0]) name = "worker_exit.bin";
    if (t.tid == multi.pid) name = "leader_exit_with_tgid.bin";
    if (t.tid == single) name = "single_thread_exit.bin";
    if (name.empty()) continue;
    save(name, d);
    expected[name] = {{"tid", t.tid},
                      {"tgid", t.tgid},
                      {"comm", t.comm},
                      {"bytes", d.size()},
                      {"tgid_aggregates", r.tgid_aggregates},
                      {"parsed", t}};
    if (t.tid == shared->worker_tid[0])
      expected[name]["own_last_proc_nvcsw"] = shared->last_nvcsw[0];
  }
  std::ofstream(std::string(dir) + "/captured.json") << expected.dump(2) << "\n";
  munmap(shared, sizeof(Shared));
}

}  // namespace
}  // namespace cstool
