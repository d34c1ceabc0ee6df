// Kernel counters without root: /proc and taskstats parsers over captured texts and
// messages (tests/fixtures/{proc,taskstats}), malformed input, JSON round trip, the
// delay-accounting guard on ordinary files.
#include "kernel/kernel_counters.h"

#include <gtest/gtest.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/errors.h"
#include "kernel/delay_accounting.h"
#include "kernel/proc_task_counters.h"
#include "kernel/taskstats_listener.h"

namespace cstool {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const std::string& rel) {
  std::ifstream f(std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/" + rel, std::ios::binary);
  EXPECT_TRUE(f.good()) << rel;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<uint8_t> ReadBytes(const std::string& rel) {
  std::string s = ReadText(rel);
  return std::vector<uint8_t>(s.begin(), s.end());
}

void WriteFile(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "cstool-kc-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// ---- /proc parsers -------------------------------------------------------------------

TEST(ProcStatus, ParsesCapturedThreadStatus) {
  auto f = ParseProcStatus(ReadText("proc/thread_status.txt"));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->name, "python3");
  EXPECT_EQ(f->tgid, 13392);
  EXPECT_EQ(f->pid, 13433);
  EXPECT_EQ(f->ppid, 13389);
  EXPECT_EQ(f->nvcsw, 2u);
  EXPECT_EQ(f->nivcsw, 3u);
}

TEST(ProcStatus, ParsesCapturedKernelThreadStatus) {
  auto f = ParseProcStatus(ReadText("proc/kthread_status.txt"));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->name, "kthreadd");
  EXPECT_EQ(f->tgid, 2);
  EXPECT_EQ(f->ppid, 0);
  EXPECT_EQ(f->nvcsw, 59u);
  EXPECT_EQ(f->nivcsw, 0u);
}

TEST(ProcStatus, RejectsMissingOrBadFields) {
  std::string error;
  EXPECT_FALSE(ParseProcStatus("", &error));
  EXPECT_NE(error.find("missing Tgid"), std::string::npos) << error;

  const std::string good =
      "Name:\tx\nTgid:\t5\nPid:\t6\nPPid:\t1\nvoluntary_ctxt_switches:\t7\n"
      "nonvoluntary_ctxt_switches:\t8\n";
  auto f = ParseProcStatus(good);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->nivcsw, 8u);
  // Truncated in the middle of the last line: no number.
  EXPECT_FALSE(ParseProcStatus(good.substr(0, good.size() - 2), &error));
  // Everything up to nonvoluntary is present but it is missing.
  EXPECT_FALSE(ParseProcStatus(good.substr(0, good.find("nonvoluntary")), &error));
  EXPECT_NE(error.find("nonvoluntary_ctxt_switches"), std::string::npos) << error;
  EXPECT_FALSE(ParseProcStatus("Tgid:\tabc\n", &error));
  EXPECT_NE(error.find("Tgid"), std::string::npos);
  EXPECT_FALSE(
      ParseProcStatus("Tgid:\t1\nPid:\t1\nvoluntary_ctxt_switches:\t-1\n"
                      "nonvoluntary_ctxt_switches:\t0\n"));
  EXPECT_FALSE(
      ParseProcStatus("Tgid:\t1\nPid:\t1\nvoluntary_ctxt_switches:\t99999999999999999999"
                      "9\nnonvoluntary_ctxt_switches:\t0\n"));
}

TEST(ProcSchedstat, ParsesCapturedTexts) {
  auto s = ParseProcSchedstat(ReadText("proc/thread_schedstat.txt"));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->exec_runtime_ns, 108843);
  EXPECT_EQ(s->run_delay_ns, 28065);
  EXPECT_EQ(s->timeslices, 5u);
  s = ParseProcSchedstat(ReadText("proc/kthread_schedstat.txt"));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->exec_runtime_ns, 4324365);
  EXPECT_EQ(s->run_delay_ns, 8236048);
  EXPECT_EQ(s->timeslices, 59u);
}

TEST(ProcSchedstat, RejectsMalformed) {
  std::string error;
  for (const char* bad : {"", "\n", "1 2", "1 2 3 4\n", "a b c\n", "1 2 -3\n", "1 2 3x\n"}) {
    error.clear();
    EXPECT_FALSE(ParseProcSchedstat(bad, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(ProcSnapshot, FakeProcTreeWithVanishedAndBrokenThreads) {
  TempDir tmp;
  const fs::path root = tmp.path();
  std::string status = ReadText("proc/thread_status.txt");
  status.replace(status.find("Tgid:\t13392"), 11, "Tgid:\t100");
  auto make_task = [&](int pid, int tid, const std::string& st, const std::string& sched,
                       const std::string& comm) {
    fs::path d = root / std::to_string(pid) / "task" / std::to_string(tid);
    if (!st.empty()) WriteFile(d / "status", st);
    if (!sched.empty()) WriteFile(d / "schedstat", sched);
    if (!comm.empty()) WriteFile(d / "comm", comm);
    fs::create_directories(d);
  };
  make_task(100, 100,
            "Tgid:\t100\nPid:\t100\nPPid:\t1\nvoluntary_ctxt_switches:\t4\n"
            "nonvoluntary_ctxt_switches:\t1\n",
            "10 20 3\n", "leader\n");
  make_task(100, 101, status, "5 6 7\n", "worker\n");
  make_task(100, 102, status, "", "");                 // vanished: no schedstat/comm
  make_task(100, 103, "garbage\n", "1 1 1\n", "x\n");  // malformed: an error, not a crash

  // As in /proc, a non-leader tid also has a (hidden) directory for its whole process.
  fs::create_directory_symlink("100", root / "101");

  const int32_t pids[] = {100, 101, 555};  // 101 is a thread of 100: not read twice
  ProcSnapshot snap = SnapshotProcTasks(pids, root.string());
  ASSERT_EQ(snap.tasks.size(), 2u);
  EXPECT_EQ(snap.vanished_threads, 1u);
  EXPECT_EQ(snap.missing_processes, 1u);
  ASSERT_EQ(snap.errors.size(), 1u);
  EXPECT_NE(snap.errors[0].find("103"), std::string::npos) << snap.errors[0];
  const auto& leader = snap.tasks[0].tid == 100 ? snap.tasks[0] : snap.tasks[1];
  const auto& worker = snap.tasks[0].tid == 100 ? snap.tasks[1] : snap.tasks[0];
  EXPECT_EQ(leader.comm, "leader");
  EXPECT_EQ(leader.nvcsw, 4u);
  EXPECT_EQ(leader.exec_runtime_ns, 10);
  EXPECT_EQ(leader.run_delay_ns, 20);
  EXPECT_EQ(leader.run_delay_count, 3u);
  EXPECT_EQ(leader.source, KernelTaskCounters::Source::kProcSnapshot);
  EXPECT_EQ(worker.tid, 101);
  EXPECT_EQ(worker.comm, "worker");
  EXPECT_EQ(worker.tgid, 100);
  EXPECT_EQ(worker.nvcsw, 2u);  // from the captured status text
  EXPECT_FALSE(worker.blkio_delay_ns.has_value());

  ProcSnapshot all = SnapshotAllProcTasks(root.string());  // lists 100 and 101
  EXPECT_EQ(all.tasks.size(), 2u);
  EXPECT_EQ(SnapshotAllProcTasks((root / "nonexistent").string()).errors.size(), 1u);
}

// ---- taskstats messages ----------------------------------------------------------------

TEST(TaskstatsParse, WorkerExitFixture) {
  auto bytes = ReadBytes("taskstats/worker_exit.bin");
  ASSERT_EQ(bytes.size(), 596u);
  TaskstatsParseResult r = ParseTaskstatsMessage(bytes, 1234);
  EXPECT_TRUE(r.errors.empty()) << r.errors.front();
  EXPECT_EQ(r.messages, 1u);
  EXPECT_EQ(r.tgid_aggregates, 0u);
  ASSERT_EQ(r.tasks.size(), 1u);
  const KernelTaskCounters& t = r.tasks[0];
  EXPECT_EQ(t.source, KernelTaskCounters::Source::kTaskstatsExit);
  EXPECT_EQ(t.tid, 13349);
  EXPECT_EQ(t.tgid, 13346);
  EXPECT_EQ(t.ppid, 13344);
  EXPECT_EQ(t.comm, "cst-w0");
  EXPECT_EQ(t.nvcsw, 6u);  // the worker's own last /proc reading was 6 too
  EXPECT_EQ(t.nivcsw, 1u);
  EXPECT_EQ(t.exec_runtime_ns, 197137);  // cpu_run_virtual_total, not cpu_run_real_total (0)
  EXPECT_EQ(t.run_delay_ns, 784877);
  EXPECT_EQ(t.run_delay_count, 8u);
  EXPECT_EQ(t.blkio_delay_ns, 0);
  EXPECT_EQ(t.swapin_delay_ns, 0);
  EXPECT_EQ(t.taken_at_ns, 1234);
  // The family id at capture time was 31.
  EXPECT_TRUE(ParseTaskstatsMessage(bytes, 0, 31).errors.empty());
  auto other = ParseTaskstatsMessage(bytes, 0, 32);
  EXPECT_TRUE(other.tasks.empty());
  EXPECT_EQ(other.errors.size(), 1u);
}

TEST(TaskstatsParse, LeaderExitFixtureCarriesTheProcessAggregate) {
  auto r = ParseTaskstatsMessage(ReadBytes("taskstats/leader_exit_with_tgid.bin"));
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.tgid_aggregates, 1u);
  ASSERT_EQ(r.tasks.size(), 1u);
  EXPECT_EQ(r.tasks[0].tid, 13346);
  EXPECT_EQ(r.tasks[0].tgid, 13346);
  EXPECT_EQ(r.tasks[0].comm, "cst-main");
  EXPECT_EQ(r.tasks[0].nvcsw, 1u);
  EXPECT_EQ(r.tasks[0].exec_runtime_ns, 226133);
}

TEST(TaskstatsParse, SingleThreadExitFixture) {
  auto r = ParseTaskstatsMessage(ReadBytes("taskstats/single_thread_exit.bin"));
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.tgid_aggregates, 0u);
  ASSERT_EQ(r.tasks.size(), 1u);
  EXPECT_EQ(r.tasks[0].tid, 13347);
  EXPECT_EQ(r.tasks[0].tgid, 13347);
  EXPECT_EQ(r.tasks[0].comm, "cst-single");
  EXPECT_EQ(r.tasks[0].nvcsw, 3u);  // three nanosleeps
  EXPECT_EQ(r.tasks[0].exec_runtime_ns, 110632);
}

TEST(TaskstatsParse, TwoMessagesInOneDatagram) {
  auto a = ReadBytes("taskstats/worker_exit.bin");
  auto b = ReadBytes("taskstats/single_thread_exit.bin");
  a.insert(a.end(), b.begin(), b.end());  // both lengths are multiples of 4
  auto r = ParseTaskstatsMessage(a);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.messages, 2u);
  ASSERT_EQ(r.tasks.size(), 2u);
  EXPECT_EQ(r.tasks[0].tid, 13349);
  EXPECT_EQ(r.tasks[1].tid, 13347);
}

TEST(TaskstatsParse, EveryTruncationIsAnErrorNotACrash) {
  const auto full = ReadBytes("taskstats/leader_exit_with_tgid.bin");
  for (size_t n = 1; n < full.size(); ++n) {
    auto r = ParseTaskstatsMessage(std::span<const uint8_t>(full.data(), n));
    EXPECT_TRUE(r.tasks.empty()) << n;
    EXPECT_FALSE(r.errors.empty()) << n;
  }
  auto empty = ParseTaskstatsMessage({});
  EXPECT_TRUE(empty.tasks.empty());
  EXPECT_TRUE(empty.errors.empty());
}

TEST(TaskstatsParse, RandomCorruptionNeverCrashes) {
  const auto full = ReadBytes("taskstats/leader_exit_with_tgid.bin");
  std::mt19937 rng(42);
  for (int i = 0; i < 20000; ++i) {
    auto copy = full;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      // Mostly hit the headers, where corruption matters.
      size_t pos = rng() % 2 ? rng() % 64 : rng() % copy.size();
      copy[pos] = static_cast<uint8_t>(rng());
    }
    auto r = ParseTaskstatsMessage(copy);
    EXPECT_LE(r.tasks.size(), 2u);
  }
}

// Builds one taskstats message: nlmsghdr + genlmsghdr + AGGR_PID{PID, STATS(stats)}.
std::vector<uint8_t> BuildMessage(uint32_t pid, const std::vector<uint8_t>& stats) {
  auto put_attr = [](std::vector<uint8_t>* out, uint16_t type, const void* data, size_t len) {
    uint16_t l = static_cast<uint16_t>(NLA_HDRLEN + len);
    size_t at = out->size();
    out->resize(at + NLA_ALIGN(l));
    std::memcpy(out->data() + at, &l, 2);
    std::memcpy(out->data() + at + 2, &type, 2);
    if (len) std::memcpy(out->data() + at + NLA_HDRLEN, data, len);
  };
  std::vector<uint8_t> nested;
  put_attr(&nested, TASKSTATS_TYPE_PID, &pid, sizeof pid);
  put_attr(&nested, TASKSTATS_TYPE_STATS, stats.data(), stats.size());
  std::vector<uint8_t> body(GENL_HDRLEN, 0);
  body[0] = TASKSTATS_CMD_NEW;
  body[1] = 1;
  put_attr(&body, TASKSTATS_TYPE_AGGR_PID | NLA_F_NESTED, nested.data(), nested.size());
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + body.size());
  h.nlmsg_type = 31;
  std::vector<uint8_t> out(NLMSG_HDRLEN);
  std::memcpy(out.data(), &h, sizeof h);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

std::vector<uint8_t> StatsPayload(uint16_t version, size_t size) {
  std::vector<uint8_t> s(size, 0);
  if (size >= 2) std::memcpy(s.data(), &version, 2);
  auto put64 = [&](size_t off, uint64_t v) {
    if (off + 8 <= s.size()) std::memcpy(s.data() + off, &v, 8);
  };
  put64(offsetof(struct taskstats, nvcsw), 11);
  put64(offsetof(struct taskstats, nivcsw), 22);
  put64(offsetof(struct taskstats, cpu_run_virtual_total), 33);
  put64(offsetof(struct taskstats, cpu_run_real_total), 999);
  put64(offsetof(struct taskstats, read_char), 4096);
  put64(offsetof(struct taskstats, write_char), 1 << 20);
  uint32_t tgid = 77;
  if (size >= offsetof(struct taskstats, ac_tgid) + 4)
    std::memcpy(s.data() + offsetof(struct taskstats, ac_tgid), &tgid, 4);
  if (size >= offsetof(struct taskstats, ac_comm) + 32)  // full length, no NUL
    std::memcpy(s.data() + offsetof(struct taskstats, ac_comm), "0123456789abcdef0123456789abcdef",
                32);
  return s;
}

TEST(TaskstatsParse, VersionsAndStructSizes) {
  // An old kernel (v11, before ac_tgid): shorter struct, tgid unknown.
  auto r = ParseTaskstatsMessage(BuildMessage(9, StatsPayload(11, 328)));
  ASSERT_EQ(r.tasks.size(), 1u) << (r.errors.empty() ? "" : r.errors[0]);
  EXPECT_EQ(r.tasks[0].tid, 9);
  EXPECT_EQ(r.tasks[0].tgid, 0);
  EXPECT_EQ(r.tasks[0].nvcsw, 11u);
  EXPECT_EQ(r.tasks[0].nivcsw, 22u);
  EXPECT_EQ(r.tasks[0].exec_runtime_ns, 33);
  EXPECT_EQ(r.tasks[0].comm, "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(r.tasks[0].read_char, 4096u);
  EXPECT_EQ(r.tasks[0].write_char, 1u << 20);

  // A future kernel with a longer struct: the known prefix is read.
  r = ParseTaskstatsMessage(BuildMessage(9, StatsPayload(99, 4096)));
  ASSERT_EQ(r.tasks.size(), 1u);
  EXPECT_EQ(r.tasks[0].tgid, 77);

  // Exactly up to nivcsw (v13 header says ac_tgid is at 368; a v12 struct cut short).
  r = ParseTaskstatsMessage(
      BuildMessage(9, StatsPayload(12, offsetof(struct taskstats, nivcsw) + 8)));
  ASSERT_EQ(r.tasks.size(), 1u);
  EXPECT_EQ(r.tasks[0].tgid, 0);
  EXPECT_EQ(r.tasks[0].write_char, 1u << 20);

  // Too short for nvcsw/nivcsw, version 0, the broken v15 layout: skipped with a reason.
  for (auto [version, size] : std::vector<std::pair<uint16_t, size_t>>{
           {16, 100}, {16, offsetof(struct taskstats, nivcsw) + 7}, {0, 560}, {15, 700}, {16, 1}}) {
    r = ParseTaskstatsMessage(BuildMessage(9, StatsPayload(version, size)));
    EXPECT_TRUE(r.tasks.empty()) << version << " " << size;
    ASSERT_EQ(r.errors.size(), 1u) << version << " " << size;
  }
}

// A delay longer than the task's life (ac_etime) is none the kernel measured (delay
// accounting turned on while the task waited adds the whole clock): left unknown.
TEST(TaskstatsParse, ADelayLongerThanTheTasksLifeIsUnknown) {
  for (const auto& [blkio_ns, expected] : std::vector<std::pair<uint64_t, std::optional<int64_t>>>{
           {5'000'000, 5'000'000},    // 5 ms of a 10 ms life
           {10'001'000, 10'001'000},  // within the microsecond ac_etime rounds to
           {72'867'542'202'247, std::nullopt}}) {
    std::vector<uint8_t> stats = StatsPayload(16, 560);
    const uint64_t elapsed_us = 10'000;
    std::memcpy(stats.data() + offsetof(struct taskstats, ac_etime), &elapsed_us, 8);
    std::memcpy(stats.data() + offsetof(struct taskstats, blkio_delay_total), &blkio_ns, 8);
    std::memcpy(stats.data() + offsetof(struct taskstats, swapin_delay_total), &blkio_ns, 8);
    auto r = ParseTaskstatsMessage(BuildMessage(9, stats));
    ASSERT_EQ(r.tasks.size(), 1u);
    EXPECT_EQ(r.tasks[0].blkio_delay_ns, expected) << blkio_ns;
    EXPECT_EQ(r.tasks[0].swapin_delay_ns, expected) << blkio_ns;
  }
}

TEST(TaskstatsParse, AcksAndErrors) {
  // NLMSG_ERROR carrying -EPERM for our request with seq 42.
  std::vector<uint8_t> msg(NLMSG_HDRLEN + sizeof(nlmsgerr), 0);
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(msg.size());
  h.nlmsg_type = NLMSG_ERROR;
  h.nlmsg_seq = 42;
  nlmsgerr e{};
  e.error = -EPERM;
  e.msg.nlmsg_seq = 42;
  std::memcpy(msg.data(), &h, sizeof h);
  std::memcpy(msg.data() + NLMSG_HDRLEN, &e, sizeof e);
  auto r = ParseTaskstatsMessage(msg);
  ASSERT_EQ(r.acks.size(), 1u);
  EXPECT_EQ(r.acks[0].seq, 42u);
  EXPECT_EQ(r.acks[0].error, -EPERM);
  EXPECT_TRUE(r.tasks.empty());

  // An unknown command.
  auto m = BuildMessage(5, StatsPayload(16, 560));
  m[NLMSG_HDRLEN] = TASKSTATS_CMD_GET;
  r = ParseTaskstatsMessage(m);
  EXPECT_TRUE(r.tasks.empty());
  EXPECT_EQ(r.errors.size(), 1u);

  // An AGGR_PID whose STATS attribute was renamed to an unknown type.
  m = BuildMessage(5, StatsPayload(16, 560));
  const size_t stats_type_at = NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN + NLA_HDRLEN + 4 + 2;
  ASSERT_EQ(m[stats_type_at], TASKSTATS_TYPE_STATS);
  m[stats_type_at] = 0x55;
  r = ParseTaskstatsMessage(m);
  EXPECT_TRUE(r.tasks.empty());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("without TASKSTATS_TYPE_STATS"), std::string::npos);
}

// ---- JSON ---------------------------------------------------------------------------

TEST(KernelCounterSet, JsonRoundTripAndLookup) {
  KernelCounterSet set;
  KernelTaskCounters a;
  a.tid = 10;
  a.tgid = 10;
  a.comm = "snap";
  a.nvcsw = 3;
  a.exec_runtime_ns = 1'000'000'000'000;
  a.taken_at_ns = 5;
  KernelTaskCounters b = a;
  b.source = KernelTaskCounters::Source::kTaskstatsExit;
  b.comm = "exit \"quoted\" \xc3\xa9";
  b.nvcsw = 7;
  b.nivcsw = 1;
  b.ppid = 1;
  b.run_delay_ns = 20;
  b.run_delay_count = 4;
  b.blkio_delay_ns = 0;
  b.swapin_delay_ns = 9;
  KernelTaskCounters c = a;
  c.tid = 11;
  set.Add(a);
  set.Add(b);
  set.Add(c);
  set.AddCounter("taskstats_enobufs", 2);
  set.AddCounter("taskstats_enobufs", 1);
  set.AddNote("a note");

  nlohmann::json j = set.ToJson();
  EXPECT_EQ(j["version"], 1);
  EXPECT_FALSE(j["records"][0].contains("blkio_delay_ns"));
  EXPECT_EQ(j["records"][1]["source"], "taskstats_exit");
  KernelCounterSet back = KernelCounterSet::FromJson(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(back.records(), set.records());
  EXPECT_EQ(back.ToJson(), j);
  EXPECT_EQ(back.counters().at("taskstats_enobufs"), 3u);
  ASSERT_EQ(back.notes().size(), 1u);

  ASSERT_NE(back.Find(10), nullptr);
  EXPECT_EQ(back.Find(10)->nvcsw, 7u);  // exit record preferred
  EXPECT_EQ(back.Find(10, KernelTaskCounters::Source::kProcSnapshot)->nvcsw, 3u);
  EXPECT_EQ(back.Find(11)->source, KernelTaskCounters::Source::kProcSnapshot);
  EXPECT_EQ(back.Find(11, KernelTaskCounters::Source::kTaskstatsExit), nullptr);
  EXPECT_EQ(back.Find(12), nullptr);
  EXPECT_EQ(back.FindAll(10).size(), 2u);
}

TEST(KernelCounterSet, FromJsonNullAndMalformed) {
  EXPECT_TRUE(KernelCounterSet::FromJson(nlohmann::json{}).empty());
  EXPECT_TRUE(KernelCounterSet::FromJson(nlohmann::json::object()).empty());
  EXPECT_THROW(KernelCounterSet::FromJson(nlohmann::json::array()), Error);
  EXPECT_THROW(KernelCounterSet::FromJson({{"records", {{{"tid", "x"}}}}}), Error);
  EXPECT_THROW(KernelCounterSet::FromJson({{"records", {{{"source", "bogus"}}}}}), Error);
  EXPECT_THROW(KernelCounterSet::FromJson({{"records", {1, 2}}}), Error);
  // Missing keys default.
  auto s = KernelCounterSet::FromJson({{"records", {{{"tid", 4}}}}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s.records()[0].tid, 4);
  EXPECT_EQ(s.records()[0].source, KernelTaskCounters::Source::kProcSnapshot);
}

// ---- delay accounting guard, on ordinary files --------------------------------------

std::string FileValue(const fs::path& p) {
  std::ifstream f(p);
  std::string v;
  f >> v;
  return v;
}

TEST(DelayAccountingGuard, EnablesAndRestores) {
  TempDir tmp;
  const fs::path p = tmp.path() / "task_delayacct";
  WriteFile(p, "0\n");
  {
    DelayAccountingGuard g(p.string());
    EXPECT_EQ(g.state(), DelayAccountingGuard::State::kEnabled);
    EXPECT_TRUE(g.active());
    EXPECT_EQ(FileValue(p), "1");
    EXPECT_FALSE(g.message().empty());
  }
  EXPECT_EQ(FileValue(p), "0");
}

TEST(DelayAccountingGuard, LeavesAnEnabledSysctlAlone) {
  TempDir tmp;
  const fs::path p = tmp.path() / "task_delayacct";
  WriteFile(p, "1\n");
  {
    DelayAccountingGuard g(p.string());
    EXPECT_EQ(g.state(), DelayAccountingGuard::State::kAlreadyOn);
    EXPECT_TRUE(g.message().empty());
  }
  EXPECT_EQ(FileValue(p), "1");
}

TEST(DelayAccountingGuard, MissingOrUnreadableIsAStatusNotAnError) {
  TempDir tmp;
  DelayAccountingGuard missing((tmp.path() / "nope").string());
  EXPECT_EQ(missing.state(), DelayAccountingGuard::State::kMissing);
  EXPECT_FALSE(missing.active());
  EXPECT_NE(missing.message().find("unavailable"), std::string::npos);

  DelayAccountingGuard dir(tmp.path().string());  // read() fails with EISDIR
  EXPECT_EQ(dir.state(), DelayAccountingGuard::State::kUnreadable);

  WriteFile(tmp.path() / "odd", "2\n");
  DelayAccountingGuard odd((tmp.path() / "odd").string());
  EXPECT_EQ(odd.state(), DelayAccountingGuard::State::kUnreadable);
  EXPECT_EQ(FileValue(tmp.path() / "odd"), "2");
}

TEST(DelayAccountingGuard, NotWritable) {
  TempDir tmp;
  const fs::path p = tmp.path() / "ro";
  WriteFile(p, "0\n");
  chmod(p.c_str(), 0444);
  auto refused = [&] {
    DelayAccountingGuard g(p.string());
    return g.state() == DelayAccountingGuard::State::kNotWritable &&
           g.message().find("cannot be set") != std::string::npos;
  };
  if (geteuid() != 0) {
    EXPECT_TRUE(refused());
    return;
  }
  // Root may write a read-only file: check as user nobody, in a child.
  chmod(tmp.path().c_str(), 0755);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
    _exit(refused() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 2) GTEST_SKIP() << "cannot switch to user nobody (65534) here";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the guard did not refuse a read-only file";
}

TEST(OnlineCpuList, ReadsAndFallsBack) {
  TempDir tmp;
  WriteFile(tmp.path() / "online", "0-3,5\n");
  EXPECT_EQ(OnlineCpuList((tmp.path() / "online").string()), "0-3,5");
  EXPECT_FALSE(OnlineCpuList((tmp.path() / "missing").string()).empty());
}

}  // namespace
}  // namespace cstool
