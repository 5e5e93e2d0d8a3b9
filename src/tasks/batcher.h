// Dynamic batching: concurrent calls (a router's goroutines sending one
// prompt each) are coalesced into one forward pass of up to `max_batch`
// texts, collected for at most `max_wait_us` after the first one arrives.
// A forward is unpadded (each text attends only to itself), so every text's
// answer is the one it gets alone: bitwise where oneDNN's kernels are made
// per row count (AVX-512), to float rounding (~1e-7) where its GEMM splits a
// sum by the row count (AVX2).
//
// Each batcher has one dispatcher thread, and the forwards of every batcher
// in the process run in turn on one compute lane (compute_lane()): one
// OpenMP team of the process-wide thread count runs them, instead of one
// team per calling thread competing for the same cores. While a batch
// computes, the next one collects, so the batch size follows the load.
// While other processes keep some of the cores busy, a second dispatcher
// computes batches beside the first on the sibling lane (sibling_lane()).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "core/runtime.h"

namespace semroute {

struct BatchingOptions {
  int64_t max_batch = 0;    // texts per forward; <= 1: no batching
  int64_t max_wait_us = 0;  // how long the first text of a batch may wait for others
  // Calls holding a text of more tokens than this (by the batcher's cost
  // estimate, where it has one) compute one call at a time on
  // long_input_lane(), so that short calls do not wait behind their
  // forwards; 0: every call on the compute lane.
  int64_t long_input_tokens = 1024;
  bool enabled() const { return max_batch > 1; }
};

// Throws InvalidInput for a negative or absurd setting (max_batch > 4096,
// max_wait_us > 1 s).
void check_batching(const BatchingOptions& options);

// What a call whose deadline passed before its batch was taken throws: it
// was not computed (the server answers 504; the caller has stopped waiting).
struct DeadlinePassed : std::runtime_error {
  explicit DeadlinePassed(const char* what = "the request's deadline passed while it waited for its model")
      : std::runtime_error(what) {}
};

// The process-wide thread batched forwards run on (and `semroute serve`'s
// unbatched ones): one OpenMP team of the process's thread count computes
// them in turn. A team per calling thread would oversubscribe the cores, and
// idle teams whose threads outnumber the CPUs make libgomp throttle the busy
// team's spin-wait (core/runtime.h).
class ComputeLane {
 public:
  // fn on the lane's thread (inline when called from it); its result, or its
  // exception rethrown.
  template <class Fn>
  auto run(Fn&& fn) -> decltype(fn()) {
    if (on_lane()) return fn();
    return run_via(std::forward<Fn>(fn), [this](const std::function<void()>& job) { execute(job); });
  }
  bool on_lane() const { return std::this_thread::get_id() == thread_.get_id(); }
  // Whether the calling thread is any lane's.
  static bool on_a_lane();

 private:
  struct Job {
    const std::function<void()>* run;  // does not throw
    bool done = false;
  };

  friend ComputeLane& compute_lane();
  friend ComputeLane& long_input_lane();
  friend ComputeLane& sibling_lane();
  explicit ComputeLane(int nice);
  void execute(const std::function<void()>& job);  // blocks until the lane ran it
  void loop();

  int nice_;  // the lane thread's scheduling niceness

  std::mutex mutex_;
  std::condition_variable queued_, finished_;
  std::deque<Job*> jobs_;
  bool ready_ = false;  // the thread has prepared itself (constructor waits for it)
  std::thread thread_;
};

// The lane: started on first use, never stopped (it outlives every model).
ComputeLane& compute_lane();

// The lane of long inputs' forwards (BatchingOptions::long_input_tokens):
// its thread runs at niceness 19, so while short calls compute on the
// compute lane the scheduler gives it almost nothing (and the compute lane's
// team waits on no descheduled thread), and it takes the cores when they are
// idle. An 8,192-token forward of ~20 s no longer holds every short call
// behind it. Started on first use, never stopped.
ComputeLane& long_input_lane();

// The lane that computes batches beside the compute lane while other
// processes keep some of this process's cores busy (Batcher's second
// dispatcher). Started on first use, never stopped.
ComputeLane& sibling_lane();

// Whether other processes keep some of this process's compute cores busy
// now (core/free_cpus.h).
bool cores_contended();

// A text's tokens, estimated from its bytes (about four a token in English
// prose): enough to send long inputs to their own lane before tokenizing.
inline int64_t estimated_tokens(std::string_view text) { return static_cast<int64_t>(text.size() / 4); }

// Input: what one item is (a text; or an encoded text, when the callers
// tokenize on their own threads and the batch only runs the forward).
template <class Answer, class Input = std::string_view>
class Batcher {
 public:
  // `run` answers a list of items, one answer per item, in order.
  using Run = std::function<std::vector<Answer>(const std::vector<Input>&)>;
  // An item's size in tokens, or an estimate (calls over
  // options.long_input_tokens batch apart on the long-input lane).
  using Cost = std::function<int64_t(const Input&)>;

  Batcher(Run run, BatchingOptions options, Cost cost = nullptr)
      : Batcher(std::move(run), options, std::move(cost), compute_lane()) {}
  ~Batcher() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    arrived_.notify_all();
    dispatcher_.join();
    if (beside_.joinable()) beside_.join();  // started by dispatcher_ alone, which has ended
  }
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  using Clock = std::chrono::steady_clock;

  // Answers `texts` (blocking) as run(texts) would; errors are the caller's
  // own. Throws DeadlinePassed, uncomputed, if the batch has not taken the
  // call by `deadline`.
  // `timing`, when given, receives how long the call waited for its batch
  // and how long the batch computed.
  struct Timing {
    Clock::duration queued{}, computed{};
  };
  std::vector<Answer> operator()(const std::vector<Input>& texts,
                                 Clock::time_point deadline = Clock::time_point::max(),
                                 Timing* timing = nullptr) const {
    if (texts.empty()) return {};
    if (Clock::now() > deadline) throw DeadlinePassed();
    // On a lane itself, waiting for a batch a lane must compute would
    // never end: answer alone (the same answers).
    if (ComputeLane::on_a_lane()) return run_(texts);
    if (long_ != nullptr && std::any_of(texts.begin(), texts.end(), [&](const Input& t) {
          return cost_(t) > options_.long_input_tokens;
        }))
      return (*long_)(texts, deadline, timing);
    Request request{&texts, Clock::now(), deadline};
    std::unique_lock<std::mutex> lock(mutex_);
    queue_.push_back(&request);
    queued_texts_ += static_cast<int64_t>(texts.size());
    arrived_.notify_all();
    answered_.wait(lock, [&] { return request.done; });
    if (timing != nullptr && request.started != Clock::time_point{}) {
      timing->queued = request.started - request.arrived;
      timing->computed = Clock::now() - request.started;
    }
    if (request.error) std::rethrow_exception(request.error);
    return std::move(request.answers);
  }

 private:
  Batcher(Run run, BatchingOptions options, Cost cost, ComputeLane& lane)
      : run_(std::move(run)), options_(options), cost_(std::move(cost)), lane_(lane) {
    check_batching(options_);
    // Long calls are not coalesced: one already fills the GEMMs, and a
    // batch of them would multiply the peak memory (ten 8K-token prompts
    // in one forward hold ten times the activations of one).
    if (cost_ != nullptr && options_.long_input_tokens > 0 && &lane_ == &compute_lane())
      long_.reset(new Batcher(run_, BatchingOptions{1, 0, 0}, nullptr, long_input_lane()));
    dispatcher_ = std::thread([this] { dispatch(lane_, kFirst); });
  }

  // Made from its texts, arrival and deadline; the rest starts empty.
  struct Request {
    const std::vector<Input>* texts;
    Clock::time_point arrived, deadline;
    Clock::time_point started{};  // when its batch began computing
    bool split_off = false;       // left of a due batch split between the dispatchers: due at once
    std::vector<Answer> answers{};
    std::exception_ptr error{};
    bool done = false;
  };

  // The dispatchers: the first computes on the batcher's lane; the second,
  // started the first time the cores are contended, on the sibling lane,
  // and takes batches only while they are.
  enum Dispatcher { kFirst, kBeside };

  // Takes batches off the queue and computes them on `lane`, one at a time.
  // While the cores are contended the two dispatchers compute side by side,
  // each batch on a lane whose team has one thread (core/free_cpus.h), and
  // each batch's callers are answered when their own batch ends.
  void dispatch(ComputeLane& lane, Dispatcher self) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      arrived_.wait(lock, [&] { return stopping_ || (!queue_.empty() && (self == kFirst || contended_)); });
      if (queue_.empty()) return;  // stopping, nothing left
      if (self == kFirst && &lane_ == &compute_lane()) follow_contention(lock);  // (unlocks while it samples)
      if (!wait_for_batch(lock)) continue;  // the other dispatcher took what waited
      bool expired = false;
      std::vector<Request*> batch = take_batch(expired, self);
      if (expired) answered_.notify_all();  // the callers take_batch answered DeadlinePassed
      if (batch.empty()) continue;
      if (!queue_.empty()) arrived_.notify_all();  // what is left, for the other dispatcher
      lock.unlock();
      lane.run([&] { answer(batch); });
      lock.lock();
      computing_texts_[self] = 0;
      for (Request* r : batch) r->done = true;
      answered_.notify_all();
    }
  }

  // Waits until the batch at the front is due: full, its first call has
  // waited max_wait_us, or that call is what the other dispatcher left of a
  // batch it split (take_batch). The front is read again after each wake:
  // the other dispatcher may have taken the batch this one waited for, and
  // a call queued since has its own wait. False when nothing is left.
  bool wait_for_batch(std::unique_lock<std::mutex>& lock) {
    for (;;) {
      if (queue_.empty()) return false;
      if (stopping_ || queued_texts_ >= options_.max_batch || queue_.front()->split_off) return true;
      const auto due = queue_.front()->arrived + std::chrono::microseconds(options_.max_wait_us);
      if (Clock::now() >= due) return true;
      arrived_.wait_until(lock, due);
    }
  }

  // Whether other processes keep some of the cores busy now (sampled outside
  // the lock); the first time they do, the second dispatcher starts.
  void follow_contention(std::unique_lock<std::mutex>& lock) {
    lock.unlock();
    const bool contended = cores_contended();
    if (contended && !beside_.joinable() && !beside_failed_) {
      try {
        ComputeLane* sibling = &sibling_lane();  // (the lane by address: this frame is gone when it runs)
        beside_ = std::thread([this, sibling] { dispatch(*sibling, kBeside); });
      } catch (const std::system_error&) {  // no thread to spare: one dispatcher, as on a quiet machine
        beside_failed_ = true;
      }
    }
    lock.lock();
    const bool shared = contended && beside_.joinable();
    if (shared && !contended_) arrived_.notify_all();
    contended_ = shared;
  }

  // Whole requests from the front, up to max_batch texts; while the cores
  // are contended, up to half of the texts in the batcher (those waiting and
  // those the other dispatcher computes), so that the two batches stay the
  // same size: taking all that waits whenever the other computes lets one
  // batch grow as the other shrinks, and its callers wait the longest. The
  // calls left of a due batch are due too: the other dispatcher takes them
  // at once, not after another max_wait_us. At least one request, unless
  // every one left had passed its deadline: those are answered
  // DeadlinePassed here, with mutex_ held. The batch's texts count as
  // `self`'s until its dispatcher has answered them.
  std::vector<Request*> take_batch(bool& expired, Dispatcher self) {
    std::vector<Request*> batch;
    int64_t texts = 0;
    const Dispatcher other = self == kFirst ? kBeside : kFirst;
    const int64_t most =
        contended_
            ? std::max<int64_t>(1, std::min(options_.max_batch, (queued_texts_ + computing_texts_[other] + 1) / 2))
            : options_.max_batch;
    const auto now = Clock::now();
    while (!queue_.empty()) {
      Request* r = queue_.front();
      const auto n = static_cast<int64_t>(r->texts->size());
      if (r->deadline < now) {
        queue_.pop_front();
        queued_texts_ -= n;
        r->error = std::make_exception_ptr(DeadlinePassed());
        r->done = true;
        expired = true;
        continue;
      }
      if (!batch.empty() && texts + n > most) {
        r->split_off = contended_;
        break;
      }
      batch.push_back(r);
      queue_.pop_front();
      texts += n;
    }
    queued_texts_ -= texts;
    computing_texts_[self] = texts;
    return batch;
  }

  // One forward for the batch; if it fails, each request alone, so that a
  // bad text fails only its own call.
  void answer(const std::vector<Request*>& batch) {
    const auto started = Clock::now();
    for (Request* r : batch) r->started = started;
    if (batch.size() > 1) {
      try {
        std::vector<Input> texts;
        for (const Request* r : batch) texts.insert(texts.end(), r->texts->begin(), r->texts->end());
        std::vector<Answer> answers = run_(texts);
        size_t next = 0;
        for (Request* r : batch) {
          for (size_t i = 0; i < r->texts->size(); ++i) r->answers.push_back(std::move(answers[next++]));
        }
        return;
      } catch (...) {
        for (Request* r : batch) r->answers.clear();
      }
    }
    for (Request* r : batch) {
      try {
        r->answers = run_(*r->texts);
      } catch (...) {
        r->error = std::current_exception();
      }
    }
  }

  Run run_;
  BatchingOptions options_;
  Cost cost_;
  ComputeLane& lane_;
  std::unique_ptr<const Batcher> long_;  // the calls with a long input, on long_input_lane()
  // Calling is const (a handle shared by threads); the queue is what changes.
  mutable std::mutex mutex_;
  mutable std::condition_variable arrived_, answered_;
  mutable std::deque<Request*> queue_;
  mutable int64_t queued_texts_ = 0;
  bool stopping_ = false;
  bool contended_ = false;                     // as the first dispatcher last sampled it, the second running
  int64_t computing_texts_[2] = {0, 0};        // per dispatcher: its batch's texts
  bool beside_failed_ = false;                 // (the first dispatcher's own)
  std::thread dispatcher_, beside_;
};

// Batchers per kind of request (the tasks a call asks for): a call is
// coalesced only with calls asking the same. Made on first use, at most
// kMaxKinds kinds per handle; calls of further kinds run unbatched. Long
// texts (by estimated_tokens) batch apart on the long-input lane, as Batcher's.
template <class Key, class Answer>
class KeyedBatcher {
 public:
  using Run = std::function<std::vector<Answer>(const Key&, const std::vector<std::string_view>&)>;
  static constexpr size_t kMaxKinds = 16;

  KeyedBatcher(Run run, BatchingOptions options) : run_(std::move(run)), options_(options) { check_batching(options_); }

  std::vector<Answer> operator()(const Key& key, const std::vector<std::string_view>& texts) const {
    const Batcher<Answer>* batcher = nullptr;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      auto it = batchers_.find(key);
      if (it == batchers_.end() && batchers_.size() < kMaxKinds) {
        const Run run = run_;
        auto made = std::make_unique<Batcher<Answer>>(
            [run, key](const std::vector<std::string_view>& batch) { return run(key, batch); }, options_,
            estimated_tokens);
        it = batchers_.emplace(key, std::move(made)).first;
      }
      if (it != batchers_.end()) batcher = it->second.get();
    }
    return batcher != nullptr ? (*batcher)(texts) : run_(key, texts);
  }

 private:
  Run run_;
  BatchingOptions options_;
  mutable std::mutex mutex_;
  mutable std::map<Key, std::unique_ptr<Batcher<Answer>>> batchers_;
};

}  // namespace semroute
