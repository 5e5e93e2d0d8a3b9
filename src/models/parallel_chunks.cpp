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

// Spins until `done` reaches `count` or `failed` is set, yielding the core
// after a few thousand tries (a thread that shares its core with another
// process finishes sooner when the spinner lets it run).
void wait_for(const std::atomic<int64_t>& done, int64_t count, const std::atomic<bool>& failed) {
  constexpr int kSpinsBeforeYield = 4096;
  for (int spins = 0; done.load(std::memory_order_acquire) < count && !failed.load(std::memory_order_relaxed);) {
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
  PassState(const ChunkSplit& split, int64_t threads) : queue(split, threads) {}
  detail::ChunkQueue queue;
  alignas(detail::kLine) std::atomic<int64_t> finished{0};
};

}  // namespace

void parallel_passes(const std::vector<ParallelPass>& passes, const std::function<void()>& aside) {
  int64_t threads = 1;
  for (const ParallelPass& pass : passes)
    if (pass.split.count > 0) threads = std::max(threads, detail::threads_for(pass.split.count, pass.split.chunk));
  std::vector<std::unique_ptr<PassState>> states;
  for (const ParallelPass& pass : passes) states.push_back(std::make_unique<PassState>(pass.split, threads));
  alignas(detail::kLine) std::atomic<bool> failed{false};
  const std::thread::id caller = std::this_thread::get_id();
  detail::run_team(threads, [&] {
    if (aside && std::this_thread::get_id() == caller) run_or_fail(failed, aside);
    for (size_t i = 0; i < passes.size() && !failed.load(std::memory_order_relaxed); ++i) {
      PassState& state = *states[i];
      state.queue.drain([&](int64_t begin, int64_t end) {
        run_or_fail(failed, [&] { passes[i].run(begin, end); });
        state.finished.fetch_add(end - begin, std::memory_order_release);
      });
      wait_for(state.finished, passes[i].split.count, failed);
    }
  });
}

}  // namespace semroute
