#include "tasks/batcher.h"

#include <sys/resource.h>
#include <unistd.h>

#include <string>

#include "core/free_cpus.h"
#include "core/runtime.h"
#include "semroute/error.h"

namespace semroute {

void check_batching(const BatchingOptions& options) {
  if (options.max_batch < 0 || options.max_batch > 4096)
    throw InvalidInput("max_batch must be in [0, 4096], not " + std::to_string(options.max_batch));
  if (options.max_wait_us < 0 || options.max_wait_us > 1000000)
    throw InvalidInput("max_wait_us must be in [0, 1000000], not " + std::to_string(options.max_wait_us));
}

namespace {
thread_local bool on_lane_thread = false;
}  // namespace

// Returns once the lane's thread has set itself up: at::set_num_threads
// rebuilds libtorch's process-wide thread pool, so two lanes preparing at
// once, or a lane preparing while the process exits, corrupt the heap.
ComputeLane::ComputeLane(int nice) : nice_(nice), thread_([this] { loop(); }) {
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return ready_; });
}

bool ComputeLane::on_a_lane() { return on_lane_thread; }

void ComputeLane::execute(const std::function<void()>& run) {
  Job job{&run};
  std::unique_lock<std::mutex> lock(mutex_);
  jobs_.push_back(&job);
  queued_.notify_one();
  finished_.wait(lock, [&] { return job.done; });
}

void ComputeLane::loop() {
  on_lane_thread = true;
  // Linux applies a thread's niceness to that thread alone (the thread id as PRIO_PROCESS's who).
  if (nice_ != 0) setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), nice_);
  ensure_runtime_initialized();
  prepare_calling_thread();
  std::unique_lock<std::mutex> lock(mutex_);
  ready_ = true;
  finished_.notify_all();
  for (;;) {
    queued_.wait(lock, [&] { return !jobs_.empty(); });
    Job* job = jobs_.front();
    jobs_.pop_front();
    lock.unlock();
    follow_free_cpus();
    (*job->run)();  // run_via's jobs do not throw
    lock.lock();
    job->done = true;
    finished_.notify_all();
  }
}

ComputeLane& compute_lane() {
  static ComputeLane* const lane = new ComputeLane(0);  // never destroyed: no thread to join at exit
  return *lane;
}

ComputeLane& sibling_lane() {
  static ComputeLane* const lane = new ComputeLane(0);  // never destroyed: no thread to join at exit
  return *lane;
}

bool cores_contended() { return free_cpus() < compute_threads(); }

ComputeLane& long_input_lane() {
  static ComputeLane* const lane = new ComputeLane(19);  // never destroyed, as the compute lane
  return *lane;
}

}  // namespace semroute
