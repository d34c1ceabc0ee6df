#include "kernel/taskstats_listener.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <future>
#include <optional>
#include <utility>

namespace cstool {
namespace {

// Offsets in struct taskstats. The layout is append-only except for version 15, which
// inserted fields in the middle (fixed in 16 by moving them to the end), so these hold
// for every version but 15. Checked against the build's <linux/taskstats.h> below.
constexpr size_t kOffVersion = 0;
constexpr size_t kOffCpuCount = 16;
constexpr size_t kOffCpuDelayTotal = 24;
constexpr size_t kOffBlkioDelayTotal = 40;
constexpr size_t kOffSwapinDelayTotal = 56;
constexpr size_t kOffCpuRunVirtualTotal = 72;  // = se.sum_exec_runtime
constexpr size_t kOffComm = 80;
constexpr size_t kCommLen = 32;
constexpr size_t kOffPid = 128;
constexpr size_t kOffPpid = 132;
constexpr size_t kOffElapsedUs = 144;  // ac_etime: since the task started, in us
constexpr size_t kOffNvcsw = 272;
constexpr size_t kOffNivcsw = 280;
constexpr size_t kOffReadChar = 216;
constexpr size_t kOffWriteChar = 224;
constexpr size_t kOffTgid = 368;  // v12+

#if TASKSTATS_VERSION != 15
static_assert(offsetof(struct taskstats, version) == kOffVersion);
static_assert(offsetof(struct taskstats, cpu_count) == kOffCpuCount);
static_assert(offsetof(struct taskstats, cpu_delay_total) == kOffCpuDelayTotal);
static_assert(offsetof(struct taskstats, blkio_delay_total) == kOffBlkioDelayTotal);
static_assert(offsetof(struct taskstats, swapin_delay_total) == kOffSwapinDelayTotal);
static_assert(offsetof(struct taskstats, cpu_run_virtual_total) == kOffCpuRunVirtualTotal);
static_assert(offsetof(struct taskstats, ac_comm) == kOffComm);
static_assert(offsetof(struct taskstats, ac_pid) == kOffPid);
static_assert(offsetof(struct taskstats, ac_ppid) == kOffPpid);
static_assert(offsetof(struct taskstats, nvcsw) == kOffNvcsw);
static_assert(offsetof(struct taskstats, nivcsw) == kOffNivcsw);
static_assert(offsetof(struct taskstats, read_char) == kOffReadChar);
static_assert(offsetof(struct taskstats, write_char) == kOffWriteChar);
#if TASKSTATS_VERSION >= 12
static_assert(offsetof(struct taskstats, ac_tgid) == kOffTgid);
#endif
#endif

constexpr size_t kNlaHdrLen = 4;  // struct nlattr, already 4-aligned
constexpr size_t Align4(size_t n) { return (n + 3) & ~size_t{3}; }

template <typename T>
bool Load(std::span<const uint8_t> p, size_t off, T* out) {
  if (off > p.size() || p.size() - off < sizeof(T)) return false;
  std::memcpy(out, p.data() + off, sizeof(T));
  return true;
}

struct Attr {
  uint16_t type = 0;  // without NLA_F_NESTED / NLA_F_NET_BYTEORDER
  std::span<const uint8_t> payload;
};

// Splits a run of netlink attributes. Returns false (with *error) when one is malformed;
// the attributes before it are still in *out.
bool SplitAttrs(std::span<const uint8_t> data, std::vector<Attr>* out, std::string* error) {
  size_t off = 0;
  while (data.size() - off >= kNlaHdrLen) {
    uint16_t len = 0, type = 0;
    Load(data, off, &len);
    Load(data, off + 2, &type);
    if (len < kNlaHdrLen || len > data.size() - off) {
      *error = fmt::format("attribute at offset {} has length {} (only {} bytes left)", off, len,
                           data.size() - off);
      return false;
    }
    out->push_back({static_cast<uint16_t>(type & NLA_TYPE_MASK),
                    data.subspan(off + kNlaHdrLen, len - kNlaHdrLen)});
    off += Align4(len);
    if (off > data.size()) off = data.size();
  }
  if (off != data.size()) {
    *error = fmt::format("{} stray bytes after the last attribute", data.size() - off);
    return false;
  }
  return true;
}

void ParseGenlMessage(std::span<const uint8_t> payload, int64_t taken_at_ns,
                      TaskstatsParseResult* r) {
  if (payload.size() < GENL_HDRLEN) {
    r->errors.push_back("generic netlink message shorter than its header");
    return;
  }
  uint8_t cmd = payload[0];
  if (cmd != TASKSTATS_CMD_NEW) {
    r->errors.push_back(fmt::format("unexpected taskstats command {}", cmd));
    return;
  }
  std::vector<Attr> top;
  std::string err;
  if (!SplitAttrs(payload.subspan(GENL_HDRLEN), &top, &err)) {
    r->errors.push_back("taskstats message: " + err);
  }
  for (const Attr& a : top) {
    if (a.type == TASKSTATS_TYPE_NULL) continue;  // alignment padding on some arches
    if (a.type == TASKSTATS_TYPE_AGGR_TGID) {
      ++r->tgid_aggregates;
      continue;
    }
    if (a.type != TASKSTATS_TYPE_AGGR_PID) {
      r->errors.push_back(fmt::format("unexpected taskstats attribute type {}", a.type));
      continue;
    }
    std::vector<Attr> nested;
    if (!SplitAttrs(a.payload, &nested, &err)) {
      r->errors.push_back("TASKSTATS_TYPE_AGGR_PID: " + err);
      continue;  // never decode a half-parsed aggregate
    }
    uint32_t pid = 0;
    bool have_pid = false;
    const Attr* stats = nullptr;
    for (const Attr& n : nested) {
      if (n.type == TASKSTATS_TYPE_PID && n.payload.size() >= sizeof(uint32_t)) {
        Load(n.payload, 0, &pid);
        have_pid = true;
      } else if (n.type == TASKSTATS_TYPE_STATS) {
        stats = &n;
      }
    }
    if (!stats) {
      r->errors.push_back("TASKSTATS_TYPE_AGGR_PID without TASKSTATS_TYPE_STATS");
      continue;
    }
    KernelTaskCounters c;
    if (!DecodeTaskstatsStruct(stats->payload, &c, &err)) {
      r->errors.push_back(err);
      continue;
    }
    if (have_pid) c.tid = static_cast<int32_t>(pid);
    c.taken_at_ns = taken_at_ns;
    r->tasks.push_back(std::move(c));
  }
}

}  // namespace

bool DecodeTaskstatsStruct(std::span<const uint8_t> p, KernelTaskCounters* out,
                           std::string* error) {
  uint16_t version = 0;
  if (!Load(p, kOffVersion, &version)) {
    *error = fmt::format("taskstats struct of {} bytes has no version", p.size());
    return false;
  }
  if (version == 0) {
    *error = "taskstats struct with version 0";
    return false;
  }
  if (version == 15) {
    *error = "taskstats version 15 has an incompatible layout (fixed in 16); record skipped";
    return false;
  }
  if (p.size() < kOffNivcsw + sizeof(uint64_t)) {
    *error = fmt::format("taskstats struct version {} too short: {} bytes, need {} for nvcsw",
                         version, p.size(), kOffNivcsw + sizeof(uint64_t));
    return false;
  }
  KernelTaskCounters c;
  c.source = KernelTaskCounters::Source::kTaskstatsExit;
  uint64_t u = 0;
  uint32_t u32 = 0;
  Load(p, kOffCpuCount, &c.run_delay_count);
  Load(p, kOffCpuDelayTotal, &u);
  c.run_delay_ns = static_cast<int64_t>(u);
  // A delay longer than the task's life is none the kernel measured: delay accounting
  // switched on while the task waited adds the whole clock (seen once, 72 867 s, as
  // another recorder restored task_delayacct). Left unknown.
  uint64_t elapsed_us = 0;
  const bool elapsed_known = Load(p, kOffElapsedUs, &elapsed_us) && elapsed_us > 0;
  auto delay = [&](size_t off) -> std::optional<int64_t> {
    uint64_t ns = 0;
    Load(p, off, &ns);
    if (elapsed_known && ns / 1000 > elapsed_us + 1) return std::nullopt;
    return static_cast<int64_t>(ns);
  };
  c.blkio_delay_ns = delay(kOffBlkioDelayTotal);
  c.swapin_delay_ns = delay(kOffSwapinDelayTotal);
  Load(p, kOffCpuRunVirtualTotal, &u);
  c.exec_runtime_ns = static_cast<int64_t>(u);
  const char* comm = reinterpret_cast<const char*>(p.data() + kOffComm);
  c.comm.assign(comm, strnlen(comm, kCommLen));
  Load(p, kOffPid, &u32);
  c.tid = static_cast<int32_t>(u32);
  Load(p, kOffPpid, &u32);
  c.ppid = static_cast<int32_t>(u32);
  if (Load(p, kOffReadChar, &u)) c.read_char = u;
  if (Load(p, kOffWriteChar, &u)) c.write_char = u;
  Load(p, kOffNvcsw, &c.nvcsw);
  Load(p, kOffNivcsw, &c.nivcsw);
  if (version >= 12 && Load(p, kOffTgid, &u32)) c.tgid = static_cast<int32_t>(u32);
  *out = std::move(c);
  return true;
}

TaskstatsParseResult ParseTaskstatsMessage(std::span<const uint8_t> data, int64_t taken_at_ns,
                                           int expected_family) {
  TaskstatsParseResult r;
  size_t off = 0;
  while (off < data.size()) {
    nlmsghdr h{};
    if (!Load(data, off, &h)) {
      r.errors.push_back(
          fmt::format("{} trailing bytes, too short for a netlink header", data.size() - off));
      break;
    }
    if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > data.size() - off) {
      r.errors.push_back(fmt::format("netlink message at offset {} claims {} bytes, {} present",
                                     off, h.nlmsg_len, data.size() - off));
      break;
    }
    ++r.messages;
    std::span<const uint8_t> payload = data.subspan(off + NLMSG_HDRLEN, h.nlmsg_len - NLMSG_HDRLEN);
    if (h.nlmsg_type == NLMSG_ERROR) {
      int32_t e = 0;
      nlmsghdr orig{};
      if (!Load(payload, 0, &e)) {
        r.errors.push_back("truncated NLMSG_ERROR");
      } else {
        uint32_t seq = Load(payload, sizeof(int32_t), &orig) ? orig.nlmsg_seq : h.nlmsg_seq;
        r.acks.push_back({seq, e});
      }
    } else if (h.nlmsg_type == NLMSG_OVERRUN) {
      r.errors.push_back("NLMSG_OVERRUN: the kernel dropped data");
    } else if (h.nlmsg_type >= NLMSG_MIN_TYPE) {
      if (expected_family != 0 && h.nlmsg_type != expected_family) {
        r.errors.push_back(
            fmt::format("message of family {} (expected {})", h.nlmsg_type, expected_family));
      } else {
        ParseGenlMessage(payload, taken_at_ns, &r);
      }
    }  // NLMSG_NOOP, NLMSG_DONE: nothing to do
    off += NLMSG_ALIGN(h.nlmsg_len);
  }
  return r;
}

std::string OnlineCpuList(const std::string& path) {
  std::string s;
  if (int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    char buf[512];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n > 0) s.assign(buf, static_cast<size_t>(n));
  }
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.empty()) {
    long n = sysconf(_SC_NPROCESSORS_CONF);
    s = n > 1 ? fmt::format("0-{}", n - 1) : "0";
  }
  return s;
}

// ---- TaskstatsListener -----------------------------------------------------------------

TaskstatsListener::TaskstatsListener(TaskstatsListenerOptions options)
    : options_(std::move(options)), buffer_(64 * 1024) {
  filter_.insert(options_.pids.begin(), options_.pids.end());
  if (!Open()) return;
  available_ = true;
  status_ = fmt::format("available (family {}, cpus {}, rcvbuf {} bytes)", family_, cpu_list_,
                        stats_.receive_buffer_bytes);
  // The tid is known once the thread runs; waiting for it here keeps it immutable after.
  // (The thread owns the promise: this frame may be gone before set_value() returns.)
  std::promise<int32_t> tid;
  std::future<int32_t> started = tid.get_future();
  thread_ = std::thread([this, tid = std::move(tid)]() mutable {
    tid.set_value(static_cast<int32_t>(::gettid()));
    ReceiveLoop();
  });
  receiver_tid_ = started.get();
}

TaskstatsListener::~TaskstatsListener() {
  Stop();
  if (sock_) nl_socket_free(sock_);
  if (stop_fd_ >= 0) close(stop_fd_);
}

bool TaskstatsListener::Open() {
  auto fail = [this](const std::string& why) {
    status_ = "unavailable: " + why;
    return false;
  };
  sock_ = nl_socket_alloc();
  if (!sock_) return fail("cannot allocate a netlink socket");
  if (int rc = genl_connect(sock_); rc < 0)
    return fail(fmt::format("generic netlink socket: {}", nl_geterror(rc)));
  fd_ = nl_socket_get_fd(sock_);
  family_ = genl_ctrl_resolve(sock_, TASKSTATS_GENL_NAME);
  if (family_ < 0) {
    int rc = family_;
    family_ = 0;
    if (rc == -NLE_OBJ_NOTFOUND)
      return fail("generic netlink family TASKSTATS not found (kernel without CONFIG_TASKSTATS?)");
    return fail(fmt::format("resolving generic netlink family TASKSTATS: {}", nl_geterror(rc)));
  }
  // Exits can come in bursts (a big process exiting); make the queue large.
  int want = options_.receive_buffer_bytes;
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof want) < 0)
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &want, sizeof want);
  int got = 0;
  socklen_t len = sizeof got;
  getsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &got, &len);
  stats_.receive_buffer_bytes = got;

  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) return fail(fmt::format("eventfd: {}", std::strerror(errno)));

  cpu_list_ = options_.cpu_list.empty() ? OnlineCpuList() : options_.cpu_list;
  int32_t error = 0;
  std::string why;
  if (!RunCpumaskCommand(TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, &error, &why))
    return fail("registering for exit notifications: " + why);
  if (error != 0) {
    std::string reason = fmt::format("registering for exit notifications on cpus {}: {}", cpu_list_,
                                     std::strerror(-error));
    if (error == -EPERM) reason += " (needs root / CAP_NET_ADMIN)";
    if (error == -EINVAL) reason += " (bad cpu list, or not in the initial pid/user namespace?)";
    return fail(reason);
  }
  registered_ = true;
  return true;
}

bool TaskstatsListener::SendCpumaskCommand(int attr, uint32_t* seq) {
  nl_msg* msg = nlmsg_alloc();
  if (!msg) return false;
  bool ok = genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family_, 0, NLM_F_REQUEST | NLM_F_ACK,
                        TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION) != nullptr &&
            nla_put_string(msg, attr, cpu_list_.c_str()) == 0;
  if (ok) {
    int rc = nl_send_auto(sock_, msg);
    ok = rc >= 0;
    if (!ok) AddError(fmt::format("netlink send: {}", nl_geterror(rc)));
    *seq = nlmsg_hdr(msg)->nlmsg_seq;
  }
  nlmsg_free(msg);
  return ok;
}

bool TaskstatsListener::RunCpumaskCommand(int attr, int32_t* error, std::string* why) {
  // Only called while no receiving thread runs. Notifications that arrive before the
  // ack are processed like any other. The kernel drops an ack like any message when the
  // socket is full (or still congested after an overrun); ENOBUFS then shows up instead,
  // and the command is sent again: registering or deregistering twice is harmless.
  constexpr int kAttempts = 20;
  constexpr int kTimeoutMs = 5000;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    if (!DrainSocket()) {
      *why = "receive failed";
      return false;
    }
    const uint64_t enobufs_before = stats().enobufs;
    uint32_t seq = 0;
    if (!SendCpumaskCommand(attr, &seq)) {
      *why = "sending the command failed";
      return false;
    }
    for (;;) {
      {
        std::lock_guard lock(mu_);
        for (const NetlinkAck& a : acks_) {
          if (a.seq == seq) {
            *error = a.error;
            acks_.clear();
            return true;
          }
        }
        acks_.clear();                                // acks of earlier attempts
        if (stats_.enobufs != enobufs_before) break;  // our ack may be lost: resend
      }
      pollfd p{fd_, POLLIN, 0};
      int rc = poll(&p, 1, kTimeoutMs);
      if (rc < 0 && errno == EINTR) continue;
      if (rc <= 0) {
        *why = fmt::format("no reply from the kernel within {} ms", kTimeoutMs);
        return false;
      }
      if (!DrainSocket()) {
        *why = "receive failed";
        return false;
      }
    }
  }
  *why = fmt::format("the reply was lost to socket overruns {} times", kAttempts);
  return false;
}

void TaskstatsListener::ReceiveLoop() {
  for (;;) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    int rc = poll(fds, 2, -1);
    if (rc < 0) {
      if (errno == EINTR) continue;
      AddError(fmt::format("poll: {}", std::strerror(errno)));
      return;
    }
    if (fds[0].revents & (POLLIN | POLLERR)) {
      if (!DrainSocket()) return;
    }
    if (fds[1].revents & POLLIN) return;
  }
}

bool TaskstatsListener::DrainSocket() {
  for (;;) {
    ssize_t n = recv(fd_, buffer_.data(), buffer_.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      std::lock_guard lock(mu_);
      if (errno == ENOBUFS) {  // the socket overflowed; the kernel dropped notifications
        ++stats_.enobufs;
        continue;
      }
      ++stats_.recv_errors;
      if (errors_.size() < 16) errors_.push_back(fmt::format("recv: {}", std::strerror(errno)));
      return false;
    }
    if (static_cast<size_t>(n) > buffer_.size()) {
      std::lock_guard lock(mu_);
      ++stats_.truncated;
      continue;
    }
    HandleDatagram(std::span<const uint8_t>(buffer_.data(), static_cast<size_t>(n)));
  }
}

void TaskstatsListener::HandleDatagram(std::span<const uint8_t> data) {
  if (options_.raw_datagram_hook) options_.raw_datagram_hook(data);
  TaskstatsParseResult r = ParseTaskstatsMessage(data, MonotonicNowNs(), family_);
  std::lock_guard lock(mu_);
  ++stats_.datagrams;
  stats_.task_records += r.tasks.size();
  stats_.tgid_aggregates += r.tgid_aggregates;
  stats_.parse_errors += r.errors.size();
  for (auto& e : r.errors) {
    if (errors_.size() < 16) errors_.push_back(std::move(e));
  }
  acks_.insert(acks_.end(), r.acks.begin(), r.acks.end());
  // Enough for the exits of a large build's process tree between a grandchild's exit
  // and its parent's; a record is ~200 bytes.
  constexpr size_t kMaxUnclaimed = 1 << 16;
  for (auto& c : r.tasks) {
    if (Wanted(c)) {
      Claim(std::move(c));
    } else {
      ++stats_.filtered_out;
      unclaimed_.push_back(std::move(c));
      if (unclaimed_.size() > kMaxUnclaimed) unclaimed_.pop_front();
    }
  }
}

// Keeps `c`; exits held back that its process links to a followed one are kept too
// (a process's threads, its children, and theirs: repeated until nothing more joins).
void TaskstatsListener::Claim(KernelTaskCounters c) {
  // mu_ is held.
  ++stats_.kept;
  records_.push_back(std::move(c));
  ClaimHeldBack();
}

void TaskstatsListener::ClaimHeldBack() {
  // mu_ is held.
  if (unclaimed_.empty()) return;
  for (bool joined = true; joined;) {
    joined = false;
    for (auto it = unclaimed_.begin(); it != unclaimed_.end();) {
      if (Wanted(*it)) {
        ++stats_.kept;
        --stats_.filtered_out;
        records_.push_back(std::move(*it));
        it = unclaimed_.erase(it);
        joined = true;
      } else {
        ++it;
      }
    }
  }
}

bool TaskstatsListener::Wanted(const KernelTaskCounters& c) {
  // mu_ is held.
  if (options_.accept_all) return true;
  if (filter_.count(c.tid) || (c.tgid != 0 && filter_.count(c.tgid))) return true;
  if (options_.follow_children && c.ppid != 0 && filter_.count(c.ppid)) {
    if (c.tgid != 0) filter_.insert(c.tgid);
    return true;
  }
  return options_.predicate && options_.predicate(c);
}

void TaskstatsListener::AddPid(int32_t pid) {
  std::lock_guard lock(mu_);
  filter_.insert(pid);
  ClaimHeldBack();
}

void TaskstatsListener::AddError(std::string e) {
  std::lock_guard lock(mu_);
  ++stats_.recv_errors;
  if (errors_.size() < 16) errors_.push_back(std::move(e));
}

void TaskstatsListener::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (thread_.joinable()) {
    uint64_t one = 1;
    if (write(stop_fd_, &one, sizeof one) < 0) AddError("eventfd write failed");
    thread_.join();
  }
  if (!registered_) return;
  registered_ = false;
  int32_t error = 0;
  std::string why;
  if (!RunCpumaskCommand(TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, &error, &why)) {
    AddError("deregistering: " + why + "; late exits may be missing");
  } else if (error != 0) {
    AddError(fmt::format("deregistering: {}", std::strerror(-error)));
  }
  DrainSocket();  // nothing should be left, but never leave data unread
}

std::vector<KernelTaskCounters> TaskstatsListener::Records() const {
  std::lock_guard lock(mu_);
  return records_;
}

TaskstatsListenerStats TaskstatsListener::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::vector<std::string> TaskstatsListener::errors() const {
  std::lock_guard lock(mu_);
  return errors_;
}

void TaskstatsListener::ExportTo(KernelCounterSet* set) const {
  if (!available_) {
    set->AddNote("taskstats " + status_ + "; no exit counters");
    return;
  }
  std::lock_guard lock(mu_);
  set->AddAll(records_);
  set->AddCounter("taskstats_exits", stats_.kept);
  set->AddCounter("taskstats_enobufs", stats_.enobufs);
  set->AddCounter("taskstats_truncated", stats_.truncated);
  set->AddCounter("taskstats_parse_errors", stats_.parse_errors);
  set->AddCounter("taskstats_recv_errors", stats_.recv_errors);
  if (stats_.enobufs || stats_.truncated)
    set->AddNote(fmt::format(
        "taskstats: the notification socket overflowed {} times; some exit counters are "
        "missing",
        stats_.enobufs + stats_.truncated));
  if (stats_.parse_errors || stats_.recv_errors)
    set->AddNote(
        fmt::format("taskstats: {} malformed notifications, {} receive errors{}{}",
                    stats_.parse_errors, stats_.recv_errors,
                    errors_.empty() ? "" : "; first: ", errors_.empty() ? "" : errors_.front()));
}

}  // namespace cstool
