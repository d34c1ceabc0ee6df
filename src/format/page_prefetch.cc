#include "format/page_prefetch.h"

#include <algorithm>
#include <deque>
#include <exception>
#include <string>
#include <utility>

#include "base/cache_lines.h"
#include "base/errors.h"

namespace cstool {

// One CPU's source and its queue of runs read ahead, in reading order. Whoever set
// `claiming` uses `source` (but for MakeRun, which any thread may call) and `log`; the
// lane's worker alone uses `eviction`; everything else is guarded by `mutex`.
struct PagePrefetcher::Lane {
  struct Item {
    PageBuffer buffer;
    PageRun run;
    ChunkClaim claim;
    std::vector<std::string> salvaged;
    std::vector<int> cut_cpus;
    std::exception_ptr error;
    bool ready = false;  // made: the reader may take it
  };

  std::unique_ptr<ChunkPageSource> source;
  std::unique_ptr<SalvageLog> log;
  size_t worker = 0;
  Depth depth{};

  std::mutex mutex;
  std::condition_variable ready;  // an item was made, or a claim ended
  // Items stay where they are while others are added and taken at the ends (a deque),
  // so the thread making one keeps its reference with the lock released.
  std::deque<Item> items;
  uint64_t queued_bytes = 0;     // of the items made and not yet taken
  std::vector<PageBuffer> free;  // handed back by the reader; reused last-in first-out
  // Spare, for whichever thread makes a run next (one per thread that made runs at once).
  std::vector<std::unique_ptr<Decompressor>> decompressors;
  int making = 0;         // items claimed and not yet made
  bool done = false;      // the source ended (or failed): nothing more to claim
  bool closed = false;    // the reader is gone
  bool claiming = false;  // a thread is claiming the next chunk
  bool reader_waits = false;
  // The worker's: whether to evict the buffers it refills. Here, not on the reader's
  // thread, which is mostly the slower one (a v7+zstd ping-pong, -j 2 on an AMD VM,
  // medians of 21 alternated runs: 186 ms with no eviction, 187 ms with the worker
  // evicting every buffer, 200 ms with the reader evicting every buffer it read).
  EvictionChoice eviction;

  bool Full() const { return items.size() >= depth.runs || queued_bytes >= depth.bytes; }
  // A thread may claim one more chunk: there is room, and a reader for it.
  bool Wanted() const { return !done && !closed && !claiming && !Full(); }
  // Drained to half of either bound: time for the worker to read ahead again.
  bool HalfDrained() const {
    return items.size() <= depth.runs / 2 && queued_bytes <= depth.bytes / 2;
  }
  bool FrontReady() const { return !items.empty() && items.front().ready; }

  // With `lock` (on `mutex`) held and Wanted(): claims the next chunk into a new item at
  // the back, then makes its run, with the lock released meanwhile (other threads may
  // claim and make the chunks after it). `by_worker`: on the lane's worker, which evicts
  // the buffer the reader handed back before refilling it, where that pays (see
  // base/cache_lines.h).
  void ClaimAndMake(std::unique_lock<std::mutex>& lock, bool by_worker) {
    claiming = true;
    ++making;
    Item& item = items.emplace_back();
    if (!free.empty()) {
      item.buffer = std::move(free.back());
      free.pop_back();
    }
    std::unique_ptr<Decompressor> decompressor;
    if (!decompressors.empty()) {
      decompressor = std::move(decompressors.back());
      decompressors.pop_back();
    }
    lock.unlock();
    bool claimed = false;
    try {
      source->ClaimChunk(item.claim, /*copy=*/true);
      claimed = !item.claim.end;
    } catch (...) {
      item.error = std::current_exception();
    }
    if (log && !log->empty()) {
      item.salvaged = log->entries();
      item.cut_cpus = log->cut_cpus();
      *log = SalvageLog();
    }
    lock.lock();
    claiming = false;
    if (!claimed) done = true;
    if (reader_waits || closed) ready.notify_all();  // the reader may claim the next itself
    lock.unlock();
    if (claimed) Make(item, decompressor, by_worker);
    lock.lock();
    if (decompressor) decompressors.push_back(std::move(decompressor));
    if (item.error) done = true;  // the reader stops there
    --making;
    item.ready = true;
    queued_bytes += item.run.pages.size();
    if (reader_waits || closed) ready.notify_all();
  }
  // Decompresses the claimed `item` (no lock held).
  void Make(Item& item, std::unique_ptr<Decompressor>& decompressor, bool by_worker) {
    try {
      if (!decompressor) decompressor = source->NewDecompressor();
      std::vector<uint8_t>& bytes = item.buffer.bytes();
      if (by_worker && !bytes.empty() && eviction.Evict())
        EvictCacheLines(bytes.data(), bytes.size());
      const std::string damage = source->MakeRun(item.claim, item.buffer, *decompressor);
      if (by_worker) eviction.Refilled();
      item.claim.in = {};
      item.claim.compressed = {};
      if (damage.empty()) {
        item.run = {{bytes.data(), bytes.size()}, item.claim.at, 0, false};
      } else if (!source->salvages()) {
        item.error = std::make_exception_ptr(DamagedDataError(damage));
      } else {  // skipped: a gap before what follows
        item.salvaged.push_back(ChunkPageSource::SkippedChunkNote(damage));
        item.run = {{}, item.claim.at, -1, false};
      }
    } catch (...) {
      item.error = std::current_exception();
    }
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
      lane_->ready.wait(lock, [&] { return !lane_->claiming && lane_->making == 0; });
    }
    std::lock_guard lock(owner_.mutex_);
    std::erase(owner_.lanes_, lane_);
  }

  PrefetchedSource(const PrefetchedSource&) = delete;
  PrefetchedSource& operator=(const PrefetchedSource&) = delete;

  // Hands back `buffer` (the previous run's) and swaps in the next run's. While that run
  // is not made yet, the reader claims and makes the next chunk not claimed yet itself
  // rather than wait: with as many jobs as cores, the reader's thread takes its share of
  // the decompression whenever it would otherwise wait.
  PageRun NextRun(PageBuffer& buffer) override {
    PagePrefetcher::Lane& lane = *lane_;
    PagePrefetcher::Lane::Item item;
    bool wake = false;
    {
      std::unique_lock lock(lane.mutex);
      if (!buffer.bytes().empty()) lane.free.push_back(std::move(buffer));
      while (!lane.FrontReady()) {
        if (lane.items.empty() && lane.done) return {};  // ended, and every run was taken
        if (lane.Wanted()) {
          lane.ClaimAndMake(lock, /*by_worker=*/false);
          wake = true;  // the worker may have skipped this CPU while it was claimed here
          continue;
        }
        lane.reader_waits = true;
        lock.unlock();
        owner_.Wake();
        lock.lock();
        lane.ready.wait(lock, [&] {
          return lane.FrontReady() || (lane.items.empty() && lane.done) || lane.Wanted();
        });
        lane.reader_waits = false;
      }
      const bool was_half_drained = lane.HalfDrained();
      item = std::move(lane.items.front());
      lane.items.pop_front();
      lane.queued_bytes -= item.run.pages.size();
      // The worker sleeps only with every queue full, so crossing half is what wakes it.
      wake = wake || (!lane.done && !was_half_drained && lane.HalfDrained());
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
  const size_t n = static_cast<size_t>(std::max(workers, 0));
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

std::unique_ptr<PageSource> PagePrefetcher::Wrap(std::unique_ptr<ChunkPageSource> source,
                                                 std::unique_ptr<SalvageLog> log, Depth depth,
                                                 SalvageLog* salvage) {
  auto lane = std::make_shared<Lane>();
  lane->source = std::move(source);
  lane->log = std::move(log);
  lane->depth = {std::max<uint32_t>(depth.runs, 1), std::max<uint64_t>(depth.bytes, 1)};
  {
    std::lock_guard lock(mutex_);
    lane->worker = workers_.empty() ? 0 : lanes_.size() % workers_.size();
    lanes_.push_back(lane);
  }
  Wake();
  return std::make_unique<PrefetchedSource>(*this, std::move(lane), salvage);
}

bool PagePrefetcher::ReadAheadOnce() {
  std::shared_ptr<Lane> pick;
  size_t fewest = SIZE_MAX;
  {
    std::lock_guard lock(mutex_);
    for (const auto& lane : lanes_) {
      std::lock_guard lane_lock(lane->mutex);
      if (lane->Wanted() && lane->items.size() < fewest) {
        fewest = lane->items.size();
        pick = lane;
      }
    }
  }
  if (!pick) return false;
  std::unique_lock lock(pick->mutex);
  if (pick->Wanted()) pick->ClaimAndMake(lock, /*by_worker=*/false);
  return true;
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
        std::unique_lock lock(lane->mutex);
        if (!lane->Wanted()) break;
        lane->ClaimAndMake(lock, /*by_worker=*/true);
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
