// Coalesces concurrent single-text embedding calls into batches: a caller
// waits at most `max_wait` for others to join, a batch holds at most
// `max_batch` texts, and one worker thread runs the batches in arrival
// order. Answers equal unbatched calls (semroute's forward is unpadded); a
// text that fails is retried alone, so one bad input fails only its caller.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "semroute/semroute.hpp"

namespace candle {

class EmbeddingBatcher {
 public:
  EmbeddingBatcher(const semroute::Model& model, size_t max_batch, std::chrono::milliseconds max_wait);
  // The worker lives as long as the object; it is stopped and joined here.
  ~EmbeddingBatcher();
  EmbeddingBatcher(const EmbeddingBatcher&) = delete;
  EmbeddingBatcher& operator=(const EmbeddingBatcher&) = delete;

  // The embedding of `text` (blocks until its batch has run).
  std::vector<float> embed(std::string_view text);

 private:
  struct Request {
    std::string_view text;
    std::vector<float> row;
    std::exception_ptr error;
    bool done = false;
  };

  void run();
  void process(const std::vector<Request*>& batch) const;

  const semroute::Model& model_;
  const size_t max_batch_;
  const std::chrono::milliseconds max_wait_;
  std::mutex mutex_;
  std::condition_variable queued_, finished_;
  std::deque<Request*> queue_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace candle
