// How many of this process's CPUs other processes leave free. A forward's
// OpenMP team waits at every parallel region's barrier for its slowest
// thread; when another process keeps one of two cores busy, the thread that
// shares that core runs a scheduler slice late at each of the ~14 regions of
// a layer, and a 24 ms forward took over a second. A team no larger than the
// free cores does not wait on the scheduler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace semroute {

// CPU time in clock ticks: busy (user, nice, system, irq, softirq, steal)
// and all (busy plus idle and iowait), summed over a set of CPUs.
struct CpuTicks {
  uint64_t busy = 0, all = 0;
};

// The ticks of the CPUs in `cpus` from /proc/stat's text (its "cpuN" lines).
CpuTicks cpu_ticks(const std::string& proc_stat, const std::vector<int>& cpus);

// This process's own CPU time (utime + stime) from /proc/self/stat's text.
uint64_t process_ticks(const std::string& self_stat);

// Free CPUs over an interval: `cpus` less the cores the busy ticks of others
// (the CPUs' busy ticks less this process's) kept busy, rounded; at least 1.
// The `busy_before` cores the last interval counted busy stay counted until
// others' load falls kReleasedBelow under them.
constexpr double kReleasedBelow = 0.75;
int free_cpus_between(const CpuTicks& before, const CpuTicks& after, uint64_t self_before, uint64_t self_after,
                      int cpus, int busy_before = 0);

// This process's CPUs left free by others over the last ~100 ms (sampled
// by whichever thread asks once that long has passed; between samples, the
// last answer). Every usable CPU when /proc cannot be read, and when
// SEMROUTE_FOLLOW_FREE_CPUS=0.
int free_cpus();

// Sets the calling thread's team size to the process's compute thread count
// (or the thread's own limit, below) or, when fewer, the free CPUs: called
// before each forward by the threads that run them (the compute lane, a
// caller's own thread).
void follow_free_cpus();

// Caps the calling thread's team at n (<= 0: no cap of its own), e.g. 1 for
// threads whose own tensor work must stay serial.
void limit_this_thread_team(int n);

// The calling thread's team is n (>= 1) for the scope, as it was after:
// what runs inside (oneDNN's sgemm, libtorch's ops) takes at most n threads.
class ScopedTeam {
 public:
  explicit ScopedTeam(int n);
  ~ScopedTeam();
  ScopedTeam(const ScopedTeam&) = delete;
  ScopedTeam& operator=(const ScopedTeam&) = delete;

 private:
  int before_;
};

}  // namespace semroute
