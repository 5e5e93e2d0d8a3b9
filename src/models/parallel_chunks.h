// Work split by demand rather than by a fixed share: libtorch's threads take
// chunks of [0, count) from a shared counter as they finish the last. Threads
// of unequal speed (a vCPU its hypervisor slows, a core another process
// shares) then end together, where at::parallel_for's equal shares wait for
// the slowest: measured on a 2-vCPU VM, one thread of a 512-token forward had
// idled a quarter of the time.
#pragma once

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "core/free_cpus.h"

namespace semroute {

// The size of the chunk to take when `left` items of a split over `threads`
// are left: at most `chunk`, at most a 2·threads-th of what is left (at least
// one). The first chunks keep long runs; the last ones are small, so a thread
// that started late (its wake-up) or ran slow leaves the others little to wait
// for. Measured on 2 vCPUs, paired: int8 16 and 64 tokens 2-5 % faster.
// Past `floor` (at most `chunk`) they stop shrinking: fewer claims where an
// item is short, each claim a cache line passed between cores.
inline int64_t next_chunk(int64_t left, int64_t chunk, int64_t threads, int64_t floor = 1) {
  return std::min(left, std::clamp<int64_t>(left / (2 * threads), std::min(floor, chunk), chunk));
}

// Items [0, count) in chunks of at most `chunk`, shrinking to `floor` (next_chunk).
struct ChunkSplit {
  int64_t count = 0, chunk = 1, floor = 1;
};

namespace detail {

// A cache line of its own for a counter threads write while others spin on
// another: sharing one, each write would take the line from the spinners.
constexpr size_t kLine = 64;

// Items [0, count) handed out in chunks (next_chunk) to whichever thread asks.
class alignas(kLine) ChunkQueue {
 public:
  ChunkQueue(const ChunkSplit& split, int64_t threads)
      : count_(split.count), chunk_(std::max<int64_t>(split.chunk, 1)), threads_(threads), floor_(split.floor) {}
  // Runs fn(begin, end) on every chunk this thread takes, until none is left.
  template <class Fn>
  void drain(const Fn& fn) {
    int64_t begin = next_.load(std::memory_order_relaxed);
    while (begin < count_) {
      const int64_t end = begin + next_chunk(count_ - begin, chunk_, threads_, floor_);
      // On failure `begin` becomes what another thread left: size again.
      if (next_.compare_exchange_weak(begin, end, std::memory_order_relaxed)) {
        fn(begin, end);
        begin = next_.load(std::memory_order_relaxed);
      }
    }
  }

 private:
  std::atomic<int64_t> next_{0};
  const int64_t count_, chunk_, threads_, floor_;
};

// Threads for chunks of `chunk` over `count` items: at most one a chunk.
inline int64_t threads_for(int64_t count, int64_t chunk) {
  return std::min<int64_t>(at::get_num_threads(), (count + std::max<int64_t>(chunk, 1) - 1) / std::max<int64_t>(chunk, 1));
}

// Runs body() on `threads` of libtorch's threads, or serially on this one.
// Under ThreadSanitizer the team is made of std::threads instead: libgomp is
// not instrumented, so TSan would not see that an OpenMP team starts after
// the caller's writes and ends before the caller goes on, and would report
// every region. It sees thread creation and join, and so checks the team's
// own handoffs (the ParallelChunks tests make teams of two on purpose).
template <class Body>
void run_team(int64_t threads, const Body& body) {
#if defined(__SANITIZE_THREAD__)
  if (threads <= 1 || at::in_parallel_region()) return body();
  std::vector<std::exception_ptr> failures(static_cast<size_t>(threads));
  const auto member = [&](size_t t) {
    try {
      body();
    } catch (...) {
      failures[t] = std::current_exception();
    }
  };
  std::vector<std::thread> team;
  for (size_t t = 1; t < failures.size(); ++t) team.emplace_back(member, t);
  member(0);
  for (std::thread& thread : team) thread.join();
  for (const std::exception_ptr& failure : failures)
    if (failure) std::rethrow_exception(failure);
#else
  std::optional<ScopedTeam> serial;  // one thread takes every chunk, here
  if (threads <= 1) serial.emplace(1);
  at::parallel_for(0, std::max<int64_t>(threads, 1), 1, [&](int64_t, int64_t) { body(); });
#endif
}

}  // namespace detail

// Runs fn(begin, end) over consecutive chunks of at most `chunk` items,
// shrinking as the work runs out (next_chunk); a call from inside a parallel
// region runs them all on its own thread. fn runs serially either way: what it
// calls (oneDNN's sgemm) takes one thread, as on a team's, since a library's
// split of one product over threads changes its rounding with the team size.
template <class Fn>
void parallel_chunks(int64_t count, int64_t chunk, const Fn& fn, int64_t floor = 1) {
  if (count <= 0) return;
  const int64_t threads = detail::threads_for(count, chunk);
  detail::ChunkQueue queue({count, chunk, floor}, threads);
  detail::run_team(threads, [&] { queue.drain(fn); });
}

// One pass of a region that runs several in turn: run(begin, end) over the
// chunks of `split`.
struct ParallelPass {
  ChunkSplit split;
  std::function<void(int64_t, int64_t)> run;
};

// Passes in one parallel region, each starting once every chunk of the one
// before has finished, on whichever thread (a product reading every row the
// pass before made; a norm reading every column of a product). Against a
// region per pass it saves each region's start and end (3 µs measured on 2
// vCPUs) and spreads passes too small for a region of their own. A thread
// that ends its share of a pass waits only for chunks other threads took, so
// a team of any size finishes; an exception ends every wait and is rethrown.
using PassBatch = std::vector<ParallelPass>;
void parallel_passes(PassBatch passes);

// The batch of passes after the one it returned last (a model's next
// layer); none: that one was the last.
using NextPassBatch = std::function<std::optional<PassBatch>()>;

// Batches of passes in one region, as parallel_passes runs a batch's, each
// batch starting once the one before has finished. `next` is asked for the
// batch after this one on the calling thread, at the start of this one and
// before it takes a chunk, while the other threads start on its passes:
// planning costs the team no wait, and a region no start and end. `next`
// runs in the caller's thread-local state (InferenceMode; libtorch's
// per-thread setup, which only the caller has surely had). A batch's passes
// (and what they hold) are destroyed once the batch after starts. The first
// batch sizes the team (a model's layers are alike).
void parallel_pass_batches(PassBatch first, const NextPassBatch& next);

// A chunk that gives each thread about `per_thread` chunks of `count` items.
inline int64_t chunk_for(int64_t count, int64_t per_thread) {
  return std::max<int64_t>(1, count / (std::max(at::get_num_threads(), 1) * per_thread));
}

}  // namespace semroute
