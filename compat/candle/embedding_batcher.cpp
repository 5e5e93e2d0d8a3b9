#include "embedding_batcher.h"

namespace candle {

EmbeddingBatcher::EmbeddingBatcher(const semroute::Model& model, size_t max_batch, std::chrono::milliseconds max_wait)
    : model_(model), max_batch_(max_batch), max_wait_(max_wait), worker_([this] { run(); }) {}

EmbeddingBatcher::~EmbeddingBatcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  worker_.join();
}

std::vector<float> EmbeddingBatcher::embed(std::string_view text) {
  Request request;
  request.text = text;
  std::unique_lock<std::mutex> lock(mutex_);
  queue_.push_back(&request);
  queued_.notify_all();
  finished_.wait(lock, [&] { return request.done; });
  if (request.error) std::rethrow_exception(request.error);
  return std::move(request.row);
}

void EmbeddingBatcher::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping with nothing left
    // The first caller waits at most max_wait for the batch to fill.
    queued_.wait_for(lock, max_wait_, [&] { return stopping_ || queue_.size() >= max_batch_; });
    const size_t n = std::min(queue_.size(), max_batch_);
    std::vector<Request*> batch(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    lock.unlock();
    process(batch);
    lock.lock();
    for (Request* r : batch) r->done = true;
    finished_.notify_all();
  }
}

void EmbeddingBatcher::process(const std::vector<Request*>& batch) const {
  std::vector<std::string_view> texts;
  for (const Request* r : batch) texts.push_back(r->text);
  try {
    const std::vector<float> rows = model_.embed(texts);
    const size_t width = rows.size() / batch.size();
    for (size_t i = 0; i < batch.size(); ++i)
      batch[i]->row.assign(rows.begin() + static_cast<std::ptrdiff_t>(i * width),
                           rows.begin() + static_cast<std::ptrdiff_t>((i + 1) * width));
    return;
  } catch (...) {
    if (batch.size() == 1) {
      batch[0]->error = std::current_exception();
      return;
    }
  }
  for (Request* r : batch) {  // find which texts failed
    try {
      r->row = model_.embed(r->text);
    } catch (...) {
      r->error = std::current_exception();
    }
  }
}

}  // namespace candle
