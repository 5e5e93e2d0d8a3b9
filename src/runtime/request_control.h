// What may end a request's work before it is done: its deadline (504), its
// client leaving or the server stopping (RequestCancelled). Every endpoint
// that computes checks it before each unit of work (a forward over a chunk of
// texts, a signal, a sentence of an answer), so no request holds the compute
// lane past any of them, and none computes for a client that is gone.
#pragma once

#include <algorithm>
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

// Where a request's time went, by phase (the Server-Timing header's), in
// milliseconds. Written by the request's own thread only.
struct WorkTimes {
  double tokenize = 0, queue = 0, forward = 0, post = 0;
};

class RequestControl {
 public:
  using Clock = std::chrono::steady_clock;
  RequestControl() = default;
  // `cancelled` (may be empty) is asked at each check: true once the client
  // left or the server stops. `times`, when given, receives the time spent
  // waiting for and on the compute lane.
  RequestControl(Clock::time_point deadline, std::function<bool()> cancelled, WorkTimes* times = nullptr)
      : deadline_(deadline), cancelled_(std::move(cancelled)), times_(times) {}

  Clock::time_point deadline() const { return deadline_; }
  // The same control with its deadline brought forward to `deadline` (a
  // request's own deadline_ms), or unchanged when it is already earlier.
  RequestControl until(Clock::time_point deadline) const {
    return RequestControl(std::min(deadline_, deadline), cancelled_, times_);
  }
  // The same control, recording into `times`.
  RequestControl recording(WorkTimes* times) const { return RequestControl(deadline_, cancelled_, times); }
  // Adds `since`..now to one phase (nothing without WorkTimes).
  void add_time(double WorkTimes::*phase, Clock::time_point since) const {
    if (times_ != nullptr) times_->*phase += std::chrono::duration<double, std::milli>(Clock::now() - since).count();
  }
  void add_time(double WorkTimes::*phase, Clock::duration d) const {
    if (times_ != nullptr) times_->*phase += std::chrono::duration<double, std::milli>(d).count();
  }

  // Throws RequestCancelled or DeadlinePassed.
  void check() const {
    if (cancelled_ && cancelled_()) throw RequestCancelled();
    if (Clock::now() > deadline_) throw DeadlinePassed("the request's deadline passed before its work was done");
  }

  // fn on the compute lane, checked when it gets there (it may have queued).
  template <class Fn>
  auto on_lane(Fn&& fn) const {
    check();
    const auto queued = Clock::now();
    return compute_lane().run([&] {
      add_time(&WorkTimes::queue, queued);
      check();
      const auto started = Clock::now();
      struct Finish {  // counts the forward's time also when it throws
        const RequestControl& control;
        Clock::time_point started;
        ~Finish() { control.add_time(&WorkTimes::forward, started); }
      } finish{*this, started};
      return fn();
    });
  }

 private:
  Clock::time_point deadline_ = Clock::time_point::max();
  std::function<bool()> cancelled_;
  WorkTimes* times_ = nullptr;
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
