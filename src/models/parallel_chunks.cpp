#include "models/parallel_chunks.h"

#include <memory>

namespace semroute {
namespace {

// A pass's queue and the count of its items finished, apart from the other
// passes' (each counter on its own cache line: detail::kLine).
struct PassState {
  PassState(const ChunkSplit& split, int64_t threads) : queue(split, threads) {}
  detail::ChunkQueue queue;
  alignas(detail::kLine) std::atomic<int64_t> finished{0};
};

}  // namespace

void parallel_passes(const std::vector<ParallelPass>& passes) {
  int64_t threads = 1;
  for (const ParallelPass& pass : passes)
    if (pass.split.count > 0) threads = std::max(threads, detail::threads_for(pass.split.count, pass.split.chunk));
  std::vector<std::unique_ptr<PassState>> states;
  for (const ParallelPass& pass : passes) states.push_back(std::make_unique<PassState>(pass.split, threads));
  alignas(detail::kLine) std::atomic<bool> failed{false};
  detail::run_team(threads, [&] {
    for (size_t i = 0; i < passes.size() && !failed.load(std::memory_order_relaxed); ++i) {
      PassState& state = *states[i];
      state.queue.drain([&](int64_t begin, int64_t end) {
        try {
          passes[i].run(begin, end);
        } catch (...) {
          failed.store(true, std::memory_order_relaxed);
          throw;
        }
        state.finished.fetch_add(end - begin, std::memory_order_release);
      });
      detail::wait_for(state.finished, passes[i].split.count, failed);
    }
  });
}

}  // namespace semroute
