// What may end a request's work before it is done: its deadline (504), its
// client leaving or the server stopping (RequestCancelled). Every endpoint
// that computes checks it before each unit of work (a forward over a chunk of
// texts, a signal, a sentence of an answer), so no request holds the compute
// lane past any of them, and none computes for a client that is gone.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <utility>

#include "tasks/batcher.h"

namespace semroute {

struct RequestCancelled : std::runtime_error {
  RequestCancelled() : std::runtime_error("the request was cancelled: its client left or the server is stopping") {}
};

class RequestControl {
 public:
  using Clock = std::chrono::steady_clock;
  RequestControl() = default;
  // `cancelled` (may be empty) is asked at each check: true once the client
  // left or the server stops.
  RequestControl(Clock::time_point deadline, std::function<bool()> cancelled)
      : deadline_(deadline), cancelled_(std::move(cancelled)) {}

  Clock::time_point deadline() const { return deadline_; }

  // Throws RequestCancelled or DeadlinePassed.
  void check() const {
    if (cancelled_ && cancelled_()) throw RequestCancelled();
    if (Clock::now() > deadline_) throw DeadlinePassed("the request's deadline passed before its work was done");
  }

  // fn on the compute lane, checked when it gets there (it may have queued).
  template <class Fn>
  auto on_lane(Fn&& fn) const {
    check();
    return compute_lane().run([&] {
      check();
      return fn();
    });
  }

 private:
  Clock::time_point deadline_ = Clock::time_point::max();
  std::function<bool()> cancelled_;
};

// Holds one of a queue's slots (a model's, a router's, a detector's …) for a
// request; full() when `limit` requests already hold one (the server answers 429).
class QueueSlot {
 public:
  QueueSlot(std::atomic<int64_t>& in_flight, size_t limit) : in_flight_(in_flight) {
    if (in_flight_.fetch_add(1) >= static_cast<int64_t>(limit)) {
      in_flight_.fetch_sub(1);
      full_ = true;
    }
  }
  ~QueueSlot() {
    if (!full_) in_flight_.fetch_sub(1);
  }
  QueueSlot(const QueueSlot&) = delete;
  QueueSlot& operator=(const QueueSlot&) = delete;
  bool full() const { return full_; }

 private:
  std::atomic<int64_t>& in_flight_;
  bool full_ = false;
};

}  // namespace semroute
