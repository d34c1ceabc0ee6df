// Workloads with known scheduling behaviour, for the demo, the integration tests and
// the benchmarks. Usage: cstool_workload MODE [ARGS...]; see Usage() below.
// Threads are pinned with sched_setaffinity where the mode says so, so that the
// expected switch causes (yield, wakeup preemption, tick preemption) really happen.
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

void PinToCpu(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    std::perror("sched_setaffinity");
    std::exit(1);
  }
}

void SpinFor(std::chrono::nanoseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  volatile uint64_t x = 0;
  while (std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 1000; ++i) x = x + i;
  }
}

long Arg(int argc, char** argv, int i, long def) {
  return argc > i ? std::strtol(argv[i], nullptr, 10) : def;
}

// Two threads on one CPU calling sched_yield N times each.
int Yield(long n, int cpu) {
  std::atomic<int> ready{0};
  auto body = [&] {
    PinToCpu(cpu);
    ready.fetch_add(1);
    while (ready.load() < 2) {
    }
    for (long i = 0; i < n; ++i) sched_yield();
  };
  std::thread a(body), b(body);
  a.join();
  b.join();
  return 0;
}

// N nanosleeps of `us` microseconds on the main thread.
int Nanosleep(long n, long us) {
  timespec ts{us / 1000000, (us % 1000000) * 1000};
  for (long i = 0; i < n; ++i) {
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
    }
    ts = {us / 1000000, (us % 1000000) * 1000};
  }
  return 0;
}

// Pipe ping-pong of N round trips between two threads pinned to `cpu`.
int PingPong(long n, int cpu) {
  int ab[2], ba[2];
  if (pipe(ab) != 0 || pipe(ba) != 0) return 1;
  std::thread peer([&] {
    PinToCpu(cpu);
    char c;
    for (long i = 0; i < n; ++i) {
      if (read(ab[0], &c, 1) != 1) return;
      if (write(ba[1], &c, 1) != 1) return;
    }
  });
  PinToCpu(cpu);
  char c = 'x';
  for (long i = 0; i < n; ++i) {
    if (write(ab[1], &c, 1) != 1) break;
    if (read(ba[0], &c, 1) != 1) break;
  }
  peer.join();
  for (int fd : {ab[0], ab[1], ba[0], ba[1]}) close(fd);
  return 0;
}

// Pipe ping-pong between two threads pinned to `cpu` for `secs` seconds; prints the
// round trips per second on stdout ("pingrate RATE round_trips/s"). With `target` > 0
// the pinger paces itself to about `target` round trips per second (busy-waiting, so
// no extra sleeps or timer events appear in a trace): the loss benchmark raises it.
int PingRate(double secs, int cpu, double target) {
  int ab[2], ba[2];
  if (pipe(ab) != 0 || pipe(ba) != 0) return 1;
  std::thread peer([&] {
    PinToCpu(cpu);
    char c;
    for (;;) {
      if (read(ab[0], &c, 1) != 1 || c == 'q') return;
      if (write(ba[1], &c, 1) != 1) return;
    }
  });
  PinToCpu(cpu);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs));
  const double period_ns = target > 0 ? 1e9 / target : 0;
  uint64_t n = 0;
  char c = 'x';
  for (;;) {
    // Check the clock only every 64 round trips at full speed: it is not free.
    if (period_ns > 0 || (n & 63) == 0) {
      const auto now = Clock::now();
      if (now >= end) break;
      if (period_ns > 0) {
        const auto due = start + std::chrono::nanoseconds(static_cast<int64_t>(n * period_ns));
        while (Clock::now() < due) {
        }
      }
    }
    if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1) break;
    ++n;
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  c = 'q';
  if (write(ab[1], &c, 1) != 1) return 1;
  peer.join();
  for (int fd : {ab[0], ab[1], ba[0], ba[1]}) close(fd);
  std::printf("pingrate %.0f round_trips/s %llu round_trips %.3f s\n", n / elapsed,
              static_cast<unsigned long long>(n), elapsed);
  return 0;
}

// `threads` threads each taking a shared mutex `iters` times, with work inside.
int Mutex(long threads, long iters) {
  std::mutex m;
  uint64_t counter = 0;
  std::vector<std::thread> ts;
  for (long t = 0; t < threads; ++t) {
    ts.emplace_back([&] {
      for (long i = 0; i < iters; ++i) {
        std::lock_guard<std::mutex> g(m);
        SpinFor(std::chrono::microseconds(20));
        ++counter;
      }
    });
  }
  for (auto& t : ts) t.join();
  return counter == static_cast<uint64_t>(threads * iters) ? 0 : 1;
}

// `n` times: write 4 KiB to a new file in `dir` and fsync it (the sleeps of a
// filesystem's sync path; `dir` must be on a disk's filesystem, not tmpfs).
int Fsync(const char* dir, long n) {
  const std::string path =
      std::string(dir) + "/cstool_workload_fsync." + std::to_string(::getpid());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return 1;
  std::string block(4096, 'x');
  int rc = 0;
  for (long i = 0; i < n && rc == 0; ++i)
    if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size()) ||
        ::fsync(fd) != 0)
      rc = 1;
  ::close(fd);
  ::unlink(path.c_str());
  return rc;
}

// Two CPU-bound threads sharing `cpu` for `ms` milliseconds: the tick preempts them.
int CpuBound(long ms, int cpu) {
  auto body = [&] {
    PinToCpu(cpu);
    SpinFor(std::chrono::milliseconds(ms));
  };
  std::thread a(body), b(body);
  a.join();
  b.join();
  return 0;
}

// Sleep-heavy phase then CPU-bound phase, each `ms` long (for live msa tests).
int Phases(long ms) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) usleep(1000);
  SpinFor(std::chrono::milliseconds(ms));
  return 0;
}

// `threads` threads, each running about 1 ms every 20 ms for `ms` ms (about 5 % on
// CPU in short bursts: the case a barscope must not hide behind "Sleeping").
int Bursty(long threads, long ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  std::vector<std::thread> ts;
  for (long t = 0; t < threads; ++t) {
    ts.emplace_back([end, t] {
      // Spread the threads' bursts over the period.
      usleep(static_cast<useconds_t>(t * 2500));
      while (std::chrono::steady_clock::now() < end) {
        SpinFor(std::chrono::milliseconds(1));
        usleep(19000);
      }
    });
  }
  for (auto& t : ts) t.join();
  return 0;
}

// A little of everything, for `make demo`.
int Demo() {
  std::thread sleeper([] { Nanosleep(200, 500); });
  std::thread pinger([] { PingPong(2000, 0); });
  std::thread locker([] { Mutex(4, 200); });
  std::thread spinner([] { CpuBound(100, 1); });
  sleeper.join();
  pinger.join();
  locker.join();
  spinner.join();
  return 0;
}

// One thread pinned to `cpu` doing a fixed amount of work (`mloops` million loop
// iterations, no clock reads, no syscalls): interrupts on that CPU lengthen its run
// time instead of being absorbed as with a time-bounded spin.
int Spin(long mloops, int cpu) {
  PinToCpu(cpu);
  volatile uint64_t x = 0;
  for (long m = 0; m < mloops; ++m)
    for (int i = 0; i < 1000000; ++i) x = x + static_cast<uint64_t>(i);
  return 0;
}

// THREADS threads asleep in a loop (100 ms each) and the main thread, all on `cpu`,
// which spins SPIN_MS and calls exit() with the others alive: exit_group() wakes them to
// kill them before the kernel takes its exit record, as a thread pool's process does.
int ExitPool(long threads, long spin_ms, int cpu) {
  PinToCpu(cpu);
  for (long i = 0; i < threads; ++i)
    std::thread([] {
      for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }).detach();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  SpinFor(std::chrono::milliseconds(spin_ms));
  std::exit(0);
}

// A thread that is not the leader execs (`nanosleep 20 1000` of this program), while the
// leader spins 50 ms and then sleeps in 2 ms steps: the kernel ends the leader and gives
// the thread its tid (de_thread()) before sched_process_exec.
int ExecThread(const char* self) {
  std::thread([self] {
    SpinFor(std::chrono::milliseconds(30));
    for (int i = 0; i < 10; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ::execl(self, "cstool_workload", "nanosleep", "20", "1000", static_cast<char*>(nullptr));
    std::perror("execl");
    std::exit(1);
  }).detach();
  SpinFor(std::chrono::milliseconds(50));
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

// The process's only thread, renamed "staller", busy for BUSY_MS, asleep once for
// STALL_MS, busy again for BUSY_MS: the one stall a flight recorder's trigger should
// catch (no other thread sleeps, e.g. in a join). The busy phases make a syscall every
// 100 us so that the trace keeps flowing around the stall.
int Stall(long busy_ms, long stall_ms) {
  pthread_setname_np(pthread_self(), "staller");
  auto busy = [](long ms) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      SpinFor(std::chrono::microseconds(100));
      syscall(SYS_getppid);
    }
  };
  busy(busy_ms);
  std::this_thread::sleep_for(std::chrono::milliseconds(stall_ms));
  busy(busy_ms);
  return 0;
}

void FutexWait(std::atomic<int>& word, int while_value) {
  while (word.load() == while_value)
    syscall(SYS_futex, reinterpret_cast<int*>(&word), FUTEX_WAIT_PRIVATE, while_value, nullptr,
            nullptr, 0);
}
void FutexWake(std::atomic<int>& word) {
  word.store(1);
  syscall(SYS_futex, reinterpret_cast<int*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

// Polls /proc until thread `tid` of this process is asleep in a system call, for up to
// 1 s. /proc/.../syscall reads "running" until the thread is off its CPU and off the run
// queue; the state letter in /proc/.../stat turns 'S' before the thread switches out.
void WaitUntilAsleep(pid_t tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/syscall";
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (std::chrono::steady_clock::now() < end) {
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) return;
    char line[16] = {};
    const size_t n = std::fread(line, 1, sizeof(line) - 1, f);
    std::fclose(f);
    if (n == 0 || std::strncmp(line, "running", 7) != 0) return;
    sched_yield();  // it may be waiting for this CPU
  }
}

// A wakeup chain with known answers, `rounds` times: thread chain-a wakes chain-b
// through a pipe, chain-b wakes chain-c through a futex, chain-c spins `ms` ms, then
// wakes chain-b (futex), which wakes chain-a (pipe). chain-a's wall time is the chain's.
// chain-a and chain-b share CPU 0 and chain-c has CPU 1 (with two CPUs or more), so that
// chain-b sleeps while chain-c spins instead of waiting behind it.
int Chain(long rounds, long ms) {
  int to_b[2], to_a[2];
  if (pipe(to_b) != 0 || pipe(to_a) != 0) {
    std::perror("pipe");
    return 1;
  }
  std::vector<std::atomic<int>> b_to_c(rounds), c_to_b(rounds);
  std::atomic<pid_t> a_tid{0};
  // chain-b exits only after chain-a and chain-c have: threads exiting at once can sleep
  // in the kernel's exit path until another one wakes them, a wakeup outside the chain
  // (seen: chain-a waking chain-b, twice in 40 runs).
  std::atomic<int> b_may_exit{0};
  std::thread c([&] {
    pthread_setname_np(pthread_self(), "chain-c");
    PinToCpu(std::thread::hardware_concurrency() >= 2 ? 1 : -1);
    for (long r = 0; r < rounds; ++r) {
      FutexWait(b_to_c[r], 0);
      SpinFor(std::chrono::milliseconds(ms));
      FutexWake(c_to_b[r]);
    }
  });
  std::thread b([&] {
    pthread_setname_np(pthread_self(), "chain-b");
    PinToCpu(0);
    char x;
    for (long r = 0; r < rounds; ++r) {
      if (read(to_b[0], &x, 1) != 1) std::exit(1);
      // Only once chain-a sleeps in its read does its wait depend on the rest of the
      // chain (else it could be runnable behind chain-c instead, on a busy machine).
      WaitUntilAsleep(a_tid.load());
      FutexWake(b_to_c[r]);
      FutexWait(c_to_b[r], 0);
      if (write(to_a[1], &x, 1) != 1) std::exit(1);
    }
    FutexWait(b_may_exit, 0);
  });
  std::thread a([&] {
    pthread_setname_np(pthread_self(), "chain-a");
    PinToCpu(0);
    a_tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
    usleep(5000);  // b and c are blocked by then
    char x = 'x';
    for (long r = 0; r < rounds; ++r) {
      if (write(to_b[1], &x, 1) != 1) std::exit(1);
      if (read(to_a[0], &x, 1) != 1) std::exit(1);
    }
  });
  a.join();
  c.join();
  FutexWake(b_may_exit);
  b.join();
  return 0;
}

void WriteLine(const char* text) {
  if (write(STDOUT_FILENO, text, std::strlen(text)) < 0) std::exit(1);
}

// Blocks in open(2) until someone opens the FIFO for writing.
void AwaitFifo(const char* path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    std::perror(path);
    std::exit(1);
  }
  close(fd);
}

// Known counts for the counter tests: a worker thread pinned to CPU 0 prints "ready
// TID" and blocks opening GO_FIFO; once released it touches PAGES fresh pages (one
// fault each, huge pages off), moves itself MOVES times between CPU 0 and 1 with
// sched_setaffinity, writes BYTES to /dev/null, writes "done\n" to stdout and blocks
// opening END_FIFO. Released again, it exits.
int Counters(long pages, long moves, long bytes, long mloops, const char* go, const char* end) {
  std::thread worker([=] {
    PinToCpu(0);
    const long page = sysconf(_SC_PAGESIZE);
    std::vector<char> chunk(4096, 'x');
    int null_fd = open("/dev/null", O_WRONLY);
    char line[64];
    std::snprintf(line, sizeof(line), "ready %ld\n", static_cast<long>(syscall(SYS_gettid)));
    WriteLine(line);
    AwaitFifo(go);
    char* mem =
        static_cast<char*>(mmap(nullptr, static_cast<size_t>(pages * page), PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    madvise(mem, static_cast<size_t>(pages * page), MADV_NOHUGEPAGE);
    for (long i = 0; i < pages; ++i) mem[i * page] = 1;
    for (long i = 0; i < moves; ++i) PinToCpu(static_cast<int>((i + 1) % 2));
    for (long left = bytes; left > 0;) {
      const long n = std::min<long>(left, static_cast<long>(chunk.size()));
      if (write(null_fd, chunk.data(), static_cast<size_t>(n)) != n) std::exit(1);
      left -= n;
    }
    volatile uint64_t x = 0;
    for (long m = 0; m < mloops; ++m)
      for (int i = 0; i < 1000000; ++i) x = x + static_cast<uint64_t>(i);
    WriteLine("done\n");
    AwaitFifo(end);
    munmap(mem, static_cast<size_t>(pages * page));
    close(null_fd);
  });
  worker.join();
  return 0;
}

// The modes, on stderr with status 2 for a wrong call, on stdout with 0 when asked for.
int Usage(bool asked = false) {
  std::fprintf(
      asked ? stdout : stderr,
      "usage: cstool_workload MODE [ARGS]\n"
      "  yield N [CPU]          two threads on CPU (default 0) yield N times each\n"
      "  nanosleep N [US]       N sleeps of US microseconds (default 1000)\n"
      "  pingpong N [CPU]       N pipe round trips between two threads on CPU\n"
      "  pingrate SECS [CPU] [RATE]  ping-pong for SECS s, print round trips/s;\n"
      "                         RATE > 0 paces it to about RATE round trips/s\n"
      "  mutex [THREADS] [ITERS] threads contend one mutex (default 4 x 500)\n"
      "  cpubound MS [CPU]      two spinning threads share CPU for MS ms\n"
      "  fsync DIR [N]          N times write 4 KiB to a file in DIR and fsync it (20)\n"
      "  phases MS              sleep-heavy then CPU-bound, MS ms each\n"
      "  spin MLOOPS [CPU]      one thread on CPU (default 0) runs MLOOPS million loops\n"
      "  bursty [THREADS] [MS]  1 ms runs every 20 ms for MS ms (default 8 x 2000)\n"
      "  stall BUSY_MS STALL_MS busy, asleep STALL_MS once, busy again (one thread)\n"
      "  chain [ROUNDS] [MS]    chain-a wakes chain-b (pipe) wakes chain-c (futex), which\n"
      "                         spins MS ms and wakes them back (default 1 x 20)\n"
      "  exitpool THREADS MS [CPU]  THREADS sleeping threads; the main thread spins MS ms\n"
      "                         and calls exit() with them alive (all on CPU, default 0)\n"
      "  execthread             a thread that is not the leader execs `nanosleep 20 1000`\n"
      "  demo                   a mix of the above\n"
      "  counters PAGES MOVES BYTES MLOOPS GO_FIFO END_FIFO  known faults, migrations,\n"
      "                         bytes and CPU time of one thread, between two FIFOs\n");
  return asked ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  std::string mode = argv[1];
  if (mode == "--help" || mode == "-h" || mode == "help") return Usage(true);
  if (mode == "yield") return Yield(Arg(argc, argv, 2, 1000), Arg(argc, argv, 3, 0));
  if (mode == "nanosleep") return Nanosleep(Arg(argc, argv, 2, 100), Arg(argc, argv, 3, 1000));
  if (mode == "pingpong") return PingPong(Arg(argc, argv, 2, 10000), Arg(argc, argv, 3, 0));
  if (mode == "pingrate")
    return PingRate(argc > 2 ? std::strtod(argv[2], nullptr) : 1.0, Arg(argc, argv, 3, 0),
                    argc > 4 ? std::strtod(argv[4], nullptr) : 0.0);
  if (mode == "mutex") return Mutex(Arg(argc, argv, 2, 4), Arg(argc, argv, 3, 500));
  if (mode == "fsync" && argc >= 3) return Fsync(argv[2], Arg(argc, argv, 3, 20));
  if (mode == "cpubound") return CpuBound(Arg(argc, argv, 2, 200), Arg(argc, argv, 3, 0));
  if (mode == "phases") return Phases(Arg(argc, argv, 2, 1000));
  if (mode == "bursty") return Bursty(Arg(argc, argv, 2, 8), Arg(argc, argv, 3, 2000));
  if (mode == "demo") return Demo();
  if (mode == "stall") return Stall(Arg(argc, argv, 2, 1000), Arg(argc, argv, 3, 200));
  if (mode == "chain") return Chain(Arg(argc, argv, 2, 1), Arg(argc, argv, 3, 20));
  if (mode == "exitpool")
    return ExitPool(Arg(argc, argv, 2, 8), Arg(argc, argv, 3, 5), Arg(argc, argv, 4, 0));
  if (mode == "execthread") return ExecThread("/proc/self/exe");
  if (mode == "spin") return Spin(Arg(argc, argv, 2, 100), Arg(argc, argv, 3, 0));
  if (mode == "counters" && argc == 8)
    return Counters(Arg(argc, argv, 2, 0), Arg(argc, argv, 3, 0), Arg(argc, argv, 4, 0),
                    Arg(argc, argv, 5, 0), argv[6], argv[7]);
  return Usage();
}
