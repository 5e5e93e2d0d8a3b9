#include "models/parallel_chunks.h"

#include <memory>
#include <thread>

namespace semroute {
namespace {

void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until ready() or `failed` is set, yielding the core after a few
// thousand tries (a thread that shares its core with another process
// finishes sooner when the spinner lets it run).
template <class Ready>
void wait_until(const Ready& ready, const std::atomic<bool>& failed) {
  constexpr int kSpinsBeforeYield = 4096;
  for (int spins = 0; !ready() && !failed.load(std::memory_order_relaxed);) {
    if (++spins < kSpinsBeforeYield) {
      spin_pause();
    } else {
      std::this_thread::yield();
      spins = 0;
    }
  }
}

// Runs fn(); an exception it throws sets `failed`, ending every wait, and
// goes on to the region (which rethrows it on the caller).
template <class Fn>
void run_or_fail(std::atomic<bool>& failed, const Fn& fn) {
  try {
    fn();
  } catch (...) {
    failed.store(true, std::memory_order_relaxed);
    throw;
  }
}

// A pass's queue and the count of its items finished, apart from the other
// passes' (each counter on its own cache line: detail::kLine).
struct PassState {
  PassState(const ChunkSplit& split, int64_t threads) : queue(split, threads), count(split.count) {}
  detail::ChunkQueue queue;
  const int64_t count;
  alignas(detail::kLine) std::atomic<int64_t> finished{0};
};

// A batch of passes with their queues, and the batch after it once the
// caller has planned it (`after` is read once `decided`; null: the last).
struct Batch {
  Batch(PassBatch planned, int64_t threads) : passes(std::move(planned)) {
    for (const ParallelPass& pass : passes) states.push_back(std::make_unique<PassState>(pass.split, threads));
  }
  PassBatch passes;  // destroyed by the caller once the batch after starts
  std::vector<std::unique_ptr<PassState>> states;
  alignas(detail::kLine) std::atomic<bool> decided{false};
  Batch* after = nullptr;
};

int64_t team_for(const PassBatch& passes) {
  int64_t threads = 1;
  for (const ParallelPass& pass : passes)
    if (pass.split.count > 0) threads = std::max(threads, detail::threads_for(pass.split.count, pass.split.chunk));
  return threads;
}

// Runs a batch's passes in turn on this thread's share of their chunks.
// Only a claimed chunk reads `passes`: once every chunk has finished, the
// caller may destroy them while other threads still leave their waits.
void run_batch(Batch& batch, std::atomic<bool>& failed) {
  for (size_t i = 0; i < batch.states.size() && !failed.load(std::memory_order_relaxed); ++i) {
    PassState& state = *batch.states[i];
    state.queue.drain([&](int64_t begin, int64_t end) {
      run_or_fail(failed, [&] { batch.passes[i].run(begin, end); });
      state.finished.fetch_add(end - begin, std::memory_order_release);
    });
    wait_until([&] { return state.finished.load(std::memory_order_acquire) >= state.count; }, failed);
  }
}

}  // namespace

void parallel_pass_batches(PassBatch first, const NextPassBatch& next) {
  const int64_t threads = team_for(first);
  std::vector<std::unique_ptr<Batch>> batches;  // the caller's alone: the team follows `after`
  batches.push_back(std::make_unique<Batch>(std::move(first), threads));
  alignas(detail::kLine) std::atomic<bool> failed{false};
  const std::thread::id caller = std::this_thread::get_id();
  // On the caller: the batch before's passes go, then the batch after is planned.
  const auto plan_after = [&](Batch& batch) {
    if (batches.size() > 1) batches[batches.size() - 2]->passes.clear();
    std::optional<PassBatch> planned = next ? next() : std::nullopt;
    if (planned) {
      batches.push_back(std::make_unique<Batch>(std::move(*planned), threads));
      batch.after = batches.back().get();
    }
    batch.decided.store(true, std::memory_order_release);
  };
  // The team starts from here and follows `after`, never reading `batches`:
  // the caller's push_back moves its elements, and a thread that starts late
  // read a freed one (a crash seen about once in a few hundred forwards).
  Batch* const first_batch = batches.front().get();
  detail::run_team(threads, [&] {
    for (Batch* batch = first_batch; batch != nullptr && !failed.load(std::memory_order_relaxed);) {
      if (std::this_thread::get_id() == caller) run_or_fail(failed, [&] { plan_after(*batch); });
      run_batch(*batch, failed);
      wait_until([&] { return batch->decided.load(std::memory_order_acquire); }, failed);
      batch = failed.load(std::memory_order_relaxed) ? nullptr : batch->after;
    }
  });
}

void parallel_passes(PassBatch passes) { parallel_pass_batches(std::move(passes), {}); }

}  // namespace semroute
