#include "format/page_prefetch.h"

#include <algorithm>
#include <deque>
#include <exception>
#include <string>
#include <utility>

#include "base/cache_lines.h"

namespace cstool {

// One CPU's source and its queue of runs read ahead. Whoever set `busy` uses `source` and
// `log`; the lane's worker alone uses `eviction`; everything else is guarded by `mutex`.
struct PagePrefetcher::Lane {
  struct Item {
    PageBuffer buffer;
    PageRun run;
    std::vector<std::string> salvaged;
    std::vector<int> cut_cpus;
    std::exception_ptr error;
  };

  std::unique_ptr<PageSource> source;
  std::unique_ptr<SalvageLog> log;
  size_t worker = 0;
  Depth depth{};

  std::mutex mutex;
  std::condition_variable ready;  // an item was queued, or the worker left the source
  std::deque<Item> items;
  uint64_t queued_bytes = 0;
  std::vector<PageBuffer> free;  // handed back by the reader; reused last-in first-out
  bool done = false;             // the source ended (or failed): nothing more to read
  bool closed = false;           // the reader is gone
  bool busy = false;             // a worker (or the reader itself) is reading the source
  bool reader_waits = false;
  // The worker's: whether to evict the buffers it refills. Here, not on the reader's
  // thread, which is mostly the slower one (a v7+zstd ping-pong, -j 2 on an AMD VM,
  // medians of 21 alternated runs: 186 ms with no eviction, 187 ms with the worker
  // evicting every buffer, 200 ms with the reader evicting every buffer it read).
  EvictionChoice eviction;

  // Under `mutex`: the item's buffer, from those handed back (the last first).
  void TakeFreeBuffer(Item& item) {
    if (free.empty()) return;
    item.buffer = std::move(free.back());
    free.pop_back();
  }
  // With `lock` (on `mutex`) held and the source idle: reads the next run into `item`
  // with the lock released meanwhile (`busy` keeps others off the source), and notes
  // whether the source has ended. `by_worker`: on the lane's worker, which evicts the
  // buffer the reader handed back before refilling it, where that pays (see
  // base/cache_lines.h; the reader, reading itself, refills the buffer it just had).
  void ReadUnlocked(std::unique_lock<std::mutex>& lock, Item& item, bool by_worker) {
    busy = true;
    TakeFreeBuffer(item);
    lock.unlock();
    std::vector<uint8_t>& bytes = item.buffer.bytes();
    if (by_worker && !bytes.empty() && eviction.Evict())
      EvictCacheLines(bytes.data(), bytes.size());
    Read(item);
    if (by_worker) eviction.Refilled();
    lock.lock();
    busy = false;
    done = Ends(item);
  }
  // While `busy`: the next run, with what it left in the salvage log.
  void Read(Item& item) {
    try {
      item.run = source->NextRun(item.buffer);
    } catch (...) {
      item.error = std::current_exception();
    }
    if (log && !log->empty()) {
      item.salvaged = log->entries();
      item.cut_cpus = log->cut_cpus();
      *log = SalvageLog();
    }
  }

  // After reading `item`: whether the source has nothing more to give.
  static bool Ends(const Item& item) {
    return item.error != nullptr || (item.run.pages.empty() && item.run.lost_before == 0);
  }

  bool Full() const { return items.size() >= depth.runs || queued_bytes >= depth.bytes; }
  // The worker may read one more run: there is room and a reader for it.
  bool Wanted() const { return !done && !closed && !busy && !Full(); }
  // Drained to half of either bound: time for the worker to read ahead again.
  bool HalfDrained() const {
    return items.size() <= depth.runs / 2 && queued_bytes <= depth.bytes / 2;
  }
};

// The reader's side of a lane.
class PrefetchedSource final : public PageSource {
 public:
  PrefetchedSource(PagePrefetcher& owner, std::shared_ptr<PagePrefetcher::Lane> lane,
                   SalvageLog* salvage)
      : owner_(owner), lane_(std::move(lane)), salvage_(salvage) {}

  ~PrefetchedSource() override {
    {
      std::unique_lock lock(lane_->mutex);
      lane_->closed = true;
      lane_->ready.wait(lock, [&] { return !lane_->busy; });
    }
    std::lock_guard lock(owner_.mutex_);
    std::erase(owner_.lanes_, lane_);
  }

  PrefetchedSource(const PrefetchedSource&) = delete;
  PrefetchedSource& operator=(const PrefetchedSource&) = delete;

  // Hands back `buffer` (the previous run's) and swaps in the next run's. When none is
  // queued and no worker is reading this CPU, the reader reads it itself rather than
  // sleep: with as many jobs as cores, the reader's thread takes its share of the reading
  // (decompression, mostly) whenever it would otherwise wait.
  PageRun NextRun(PageBuffer& buffer) override {
    PagePrefetcher::Lane& lane = *lane_;
    PagePrefetcher::Lane::Item item;
    bool wake = false;
    {
      std::unique_lock lock(lane.mutex);
      if (!buffer.bytes().empty()) lane.free.push_back(std::move(buffer));
      if (lane.items.empty() && !lane.done && !lane.busy) {
        lane.ReadUnlocked(lock, item, /*by_worker=*/false);
        wake = !lane.done;  // the worker may have skipped this CPU while it was busy here
      } else {
        if (lane.items.empty() && !lane.done) {
          lane.reader_waits = true;
          lock.unlock();
          owner_.Wake();
          lock.lock();
          lane.ready.wait(lock, [&] { return !lane.items.empty() || lane.done; });
          lane.reader_waits = false;
        }
        if (lane.items.empty()) return {};  // ended, and every run was taken
        const bool was_half_drained = lane.HalfDrained();
        item = std::move(lane.items.front());
        lane.items.pop_front();
        lane.queued_bytes -= item.run.pages.size();
        // The worker sleeps only with every queue full, so crossing half is what wakes it.
        wake = !lane.done && !was_half_drained && lane.HalfDrained();
      }
    }
    if (wake) owner_.Wake();
    if (salvage_ != nullptr) {
      for (std::string& s : item.salvaged) salvage_->Add(std::move(s));
      for (int cpu : item.cut_cpus) salvage_->NoteCut(cpu);
    }
    if (item.error) std::rethrow_exception(item.error);
    buffer = std::move(item.buffer);
    return item.run;
  }

 private:
  PagePrefetcher& owner_;
  std::shared_ptr<PagePrefetcher::Lane> lane_;
  SalvageLog* salvage_;
};

PagePrefetcher::PagePrefetcher(int workers) {
  const size_t n = static_cast<size_t>(std::max(workers, 1));
  workers_.reserve(n);
  for (size_t w = 0; w < n; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
}

PagePrefetcher::~PagePrefetcher() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

std::unique_ptr<PageSource> PagePrefetcher::Wrap(std::unique_ptr<PageSource> source,
                                                 std::unique_ptr<SalvageLog> log, Depth depth,
                                                 SalvageLog* salvage) {
  auto lane = std::make_shared<Lane>();
  lane->source = std::move(source);
  lane->log = std::move(log);
  lane->depth = {std::max<uint32_t>(depth.runs, 1), std::max<uint64_t>(depth.bytes, 1)};
  {
    std::lock_guard lock(mutex_);
    lane->worker = lanes_.size() % workers_.size();
    lanes_.push_back(lane);
  }
  Wake();
  return std::make_unique<PrefetchedSource>(*this, std::move(lane), salvage);
}

void PagePrefetcher::Wake() {
  generation_.fetch_add(1);
  if (sleepers_.load() > 0) {
    std::lock_guard lock(mutex_);
    wake_.notify_all();
  }
}

void PagePrefetcher::WorkerLoop(size_t worker) {
  std::vector<std::shared_ptr<Lane>> mine;
  for (;;) {
    const uint64_t seen = generation_.load();
    {
      std::lock_guard lock(mutex_);
      if (stop_) return;
      mine.clear();
      for (const auto& lane : lanes_)
        if (lane->worker == worker) mine.push_back(lane);
    }
    bool worked = false;
    for (const auto& lane : mine) {
      // Fill this lane's queue while its reader wants more.
      for (;;) {
        Lane::Item item;
        std::unique_lock lock(lane->mutex);
        if (!lane->Wanted()) break;
        lane->ReadUnlocked(lock, item, /*by_worker=*/true);
        lane->queued_bytes += item.run.pages.size();
        lane->items.push_back(std::move(item));
        if (lane->reader_waits || lane->closed) lane->ready.notify_all();
        worked = true;
      }
    }
    mine.clear();  // a lane whose reader is gone goes with its last owner
    if (worked) continue;
    std::unique_lock lock(mutex_);
    ++sleepers_;
    wake_.wait(lock, [&] { return stop_ || generation_.load() != seen; });
    --sleepers_;
  }
}

}  // namespace cstool
