// The machine's load while something is measured: the 1-min load average at
// the start, at the end and sampled in between, the most runnable processes
// seen, the CPU frequency where the system reports it, and whether the
// machine was busier than the cores the measurement could use ("noisy").
// Recorded as run.json's and each throughput.json point's `load` object
// (docs/results-format.md).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

namespace ikbench::harness {

// One reading of the machine's state.
struct LoadReading {
  std::optional<double> load_1min;  // /proc/loadavg's first field
  std::optional<long> runnable;     // /proc/loadavg's fourth field, the part before '/'
  std::optional<double> cpu_mhz;    // mean over CPUs of scaling_cur_freq, else of cpuinfo's "cpu MHz"
};

// Parses the text of /proc/loadavg ("0.80 0.55 0.40 3/102 8386"); fields it
// cannot read stay empty.
LoadReading parseLoadavg(const std::string& text);
// Mean of the "cpu MHz" lines of a /proc/cpuinfo text; empty when none.
std::optional<double> parseCpuinfoMhz(const std::string& text);

// Reads /proc/loadavg and the CPU frequency now.
LoadReading readLoad();

// CPUs this process may run on (its affinity mask; hardware_concurrency when
// that cannot be read): the cores a measurement's threads could use.
int usableCores();

// Collects readings: begin(), sample() as often as convenient (a reading is
// taken at most once per `interval`), end(); json() at any point after
// begin(). The start and end readings are samples too, so count >= 1.
class LoadRecorder {
 public:
  explicit LoadRecorder(std::chrono::milliseconds interval = std::chrono::milliseconds(1000));
  void begin();
  void sample();        // rate-limited to one reading per interval
  void sampleNow();     // a reading whatever the interval
  void end();
  // The max sampled 1-min load average exceeded usableCores().
  bool noisy() const;
  double maxLoad() const { return max_; }
  int cores() const { return cores_; }
  // {"start", "end", "samples": {"count", "min", "mean", "max"},
  //  "runnable_max", "cpu_mhz" (where reported), "cores", "noisy"};
  // null when /proc/loadavg could not be read at all.
  nlohmann::json json() const;

 private:
  void take(const LoadReading& r);
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_{};
  std::optional<double> start_, end_;
  long count_ = 0;
  double min_ = 0.0, sum_ = 0.0, max_ = 0.0;
  std::optional<long> runnable_max_;
  long mhz_count_ = 0;
  double mhz_sum_ = 0.0;
  int cores_ = 1;
};

// Samples a LoadRecorder on a thread of its own, every `interval`, from
// construction (begin) to destruction or stop() (end): for measurements
// whose calling thread is busy or blocked in joins.
class BackgroundLoadSampler {
 public:
  explicit BackgroundLoadSampler(LoadRecorder& recorder,
                                 std::chrono::milliseconds interval = std::chrono::milliseconds(1000));
  ~BackgroundLoadSampler();
  void stop();
  BackgroundLoadSampler(const BackgroundLoadSampler&) = delete;
  BackgroundLoadSampler& operator=(const BackgroundLoadSampler&) = delete;

 private:
  LoadRecorder& recorder_;
  std::chrono::milliseconds interval_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool ended_ = false;
  std::thread thread_;
};

}  // namespace ikbench::harness
