#include "harness/machine_load.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace ikbench::harness {
namespace {

std::string readText(const std::string& path) {
  std::ifstream f(path);
  if (!f) return {};
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Mean over CPUs of /sys/devices/system/cpu/cpu*/cpufreq/scaling_cur_freq [kHz -> MHz].
std::optional<double> sysfsMhz() {
  namespace fs = std::filesystem;
  std::error_code ec;
  double sum = 0.0;
  long n = 0;
  for (const auto& e : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0 || !std::isdigit(static_cast<unsigned char>(name[3])))
      continue;
    std::ifstream f(e.path() / "cpufreq" / "scaling_cur_freq");
    double khz = 0.0;
    if (f >> khz && khz > 0.0) {
      sum += khz / 1000.0;
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

}  // namespace

LoadReading parseLoadavg(const std::string& text) {
  LoadReading r;
  double l1 = 0, l5 = 0, l15 = 0;
  long running = 0, total = 0;
  const int n = std::sscanf(text.c_str(), "%lf %lf %lf %ld/%ld", &l1, &l5, &l15, &running, &total);
  if (n >= 1 && std::isfinite(l1) && l1 >= 0.0) r.load_1min = l1;
  if (n >= 4 && running >= 0) r.runnable = running;
  return r;
}

std::optional<double> parseCpuinfoMhz(const std::string& text) {
  std::istringstream in(text);
  double sum = 0.0;
  long n = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, 7, "cpu MHz") != 0) continue;
    const size_t c = line.find(':');
    double mhz = 0.0;
    if (c != std::string::npos && std::sscanf(line.c_str() + c + 1, "%lf", &mhz) == 1 && std::isfinite(mhz) &&
        mhz > 0.0) {
      sum += mhz;
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

LoadReading readLoad() {
  LoadReading r = parseLoadavg(readText("/proc/loadavg"));
  r.cpu_mhz = sysfsMhz();
  if (!r.cpu_mhz) r.cpu_mhz = parseCpuinfoMhz(readText("/proc/cpuinfo"));
  return r;
}

int usableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

LoadRecorder::LoadRecorder(std::chrono::milliseconds interval) : interval_(interval) {}

void LoadRecorder::take(const LoadReading& r) {
  last_ = std::chrono::steady_clock::now();
  if (r.cpu_mhz) {
    mhz_sum_ += *r.cpu_mhz;
    ++mhz_count_;
  }
  if (r.runnable) runnable_max_ = std::max(runnable_max_.value_or(0), *r.runnable);
  if (!r.load_1min) return;
  const double l = *r.load_1min;
  if (!start_) start_ = l;
  end_ = l;
  min_ = count_ == 0 ? l : std::min(min_, l);
  max_ = count_ == 0 ? l : std::max(max_, l);
  sum_ += l;
  ++count_;
}

void LoadRecorder::begin() {
  *this = LoadRecorder(interval_);
  cores_ = usableCores();
  take(readLoad());
}

void LoadRecorder::sample() {
  if (std::chrono::steady_clock::now() - last_ >= interval_) take(readLoad());
}

void LoadRecorder::sampleNow() { take(readLoad()); }

void LoadRecorder::end() { take(readLoad()); }

bool LoadRecorder::noisy() const { return count_ > 0 && max_ > static_cast<double>(cores_); }

nlohmann::json LoadRecorder::json() const {
  if (count_ == 0) return nullptr;
  nlohmann::json j;
  j["start"] = *start_;
  j["end"] = *end_;
  j["samples"] = {{"count", count_}, {"min", min_}, {"mean", sum_ / static_cast<double>(count_)}, {"max", max_}};
  if (runnable_max_) j["runnable_max"] = *runnable_max_;
  if (mhz_count_ > 0) j["cpu_mhz"] = std::round(10.0 * mhz_sum_ / static_cast<double>(mhz_count_)) / 10.0;
  j["cores"] = cores_;
  j["noisy"] = noisy();
  return j;
}

BackgroundLoadSampler::BackgroundLoadSampler(LoadRecorder& recorder, std::chrono::milliseconds interval)
    : recorder_(recorder), interval_(interval) {
  recorder_.begin();
  try {
    thread_ = std::thread([this] {
      std::unique_lock lock(m_);
      while (!cv_.wait_for(lock, interval_, [this] { return stopping_; })) recorder_.sampleNow();
    });
  } catch (const std::system_error&) {
    // No thread to spare (a process limit): the start and end readings remain.
  }
}

void BackgroundLoadSampler::stop() {
  if (ended_) return;
  ended_ = true;
  if (thread_.joinable()) {
    {
      std::lock_guard lock(m_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  recorder_.end();
}

BackgroundLoadSampler::~BackgroundLoadSampler() { stop(); }

}  // namespace ikbench::harness
