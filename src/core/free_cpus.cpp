#include "core/free_cpus.h"

#include <ATen/Parallel.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "core/runtime.h"

namespace semroute {

CpuTicks cpu_ticks(const std::string& proc_stat, const std::vector<int>& cpus) {
  CpuTicks ticks;
  std::istringstream lines(proc_stat);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream fields(line.substr(3));
    int cpu = -1;
    fields >> cpu;
    if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) continue;
    // user nice system idle iowait irq softirq steal (guest time is inside user)
    uint64_t value[8] = {};
    for (uint64_t& v : value) fields >> v;
    const uint64_t idle = value[3] + value[4];
    const uint64_t busy = value[0] + value[1] + value[2] + value[5] + value[6] + value[7];
    ticks.busy += busy;
    ticks.all += busy + idle;
  }
  return ticks;
}

uint64_t process_ticks(const std::string& self_stat) {
  // "pid (comm) state ppid …": comm may hold spaces and parentheses; the
  // fields after its last ')' are fixed: utime and stime are the 12th and 13th.
  const size_t close = self_stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(self_stat.substr(close + 1));
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int i = 1; i <= 13 && fields >> field; ++i) {
    if (i == 12) utime = std::strtoull(field.c_str(), nullptr, 10);
    if (i == 13) stime = std::strtoull(field.c_str(), nullptr, 10);
  }
  return utime + stime;
}

int free_cpus_between(const CpuTicks& before, const CpuTicks& after, uint64_t self_before, uint64_t self_after,
                      int cpus, int busy_before) {
  if (after.all <= before.all || cpus <= 0) return std::max(1, cpus);
  const double per_cpu = static_cast<double>(after.all - before.all) / cpus;  // ticks one CPU had
  const double busy = static_cast<double>(after.busy - before.busy);
  const double ours = static_cast<double>(self_after - self_before);
  const double others = std::max(0.0, busy - ours) / per_cpu;  // cores others kept busy
  // A neighbour sharing a core with one of our threads gets about half of
  // it: rounded at one half, its core counted busy and free by turns.
  long busy_cores = std::lround(others);
  if (busy_cores < busy_before && others > busy_before - kReleasedBelow) busy_cores = busy_before;
  return std::clamp(cpus - static_cast<int>(busy_cores), 1, cpus);
}

namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<int> affinity_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

bool following() {
  static const bool on = [] {
    const char* v = std::getenv("SEMROUTE_FOLLOW_FREE_CPUS");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return on;
}

// The last sample, renewed every kInterval by the first thread to see it old.
class Sampler {
 public:
  int free_cpus() {
    const auto now = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (lock.owns_lock() && now - taken_ >= kInterval) sample(now);
    return free_.load(std::memory_order_relaxed);
  }

 private:
  static constexpr std::chrono::milliseconds kInterval{100};

  void sample(std::chrono::steady_clock::time_point now) {
    if (cpus_.empty()) cpus_ = affinity_cpus();
    const CpuTicks ticks = cpu_ticks(read_file("/proc/stat"), cpus_);
    const uint64_t self = process_ticks(read_file("/proc/self/stat"));
    const int count = static_cast<int>(cpus_.size());
    const bool first = ticks_.all == 0;  // counters since boot say nothing about now
    free_.store(first || ticks.all == 0 ? std::max(1, count) : free_cpus_between(ticks_, ticks, self_, self, count,
                                                                   count - free_.load(std::memory_order_relaxed)),
                std::memory_order_relaxed);
    ticks_ = ticks;
    self_ = self;
    taken_ = now;
  }

  std::mutex mutex_;
  std::vector<int> cpus_;
  CpuTicks ticks_;
  uint64_t self_ = 0;
  std::chrono::steady_clock::time_point taken_{};
  std::atomic<int> free_{usable_cpus()};
};

}  // namespace

int free_cpus() {
  if (!following()) return usable_cpus();
  static Sampler* const sampler = new Sampler();  // never destroyed: threads may ask during exit
  return sampler->free_cpus();
}

namespace {
thread_local int thread_team_limit = 0;  // 0: the process's count
}  // namespace

void limit_this_thread_team(int n) {
  thread_team_limit = std::max(0, n);
  follow_free_cpus();
}

void follow_free_cpus() {
  prepare_calling_thread();  // else libtorch's first parallel op on this thread resets the team
  const int wanted = thread_team_limit > 0 ? std::min(thread_team_limit, compute_threads()) : compute_threads();
  const int threads = std::max(1, std::min(wanted, free_cpus()));
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

ScopedTeam::ScopedTeam(int n) : before_((prepare_calling_thread(), omp_get_max_threads())) {
  if (before_ != n) omp_set_num_threads(std::max(1, n));
}

ScopedTeam::~ScopedTeam() {
  if (omp_get_max_threads() != before_) omp_set_num_threads(before_);
}

}  // namespace semroute
