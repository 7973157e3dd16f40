#include "ikbench/kinematics/rng.h"

#include <cmath>
#include <numbers>

namespace ikbench {
namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
}

std::uint64_t Rng::mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t x = a ^ (0x632BE59BD9B4E019ULL + (b << 6) + (b >> 2));
  splitmix64(x);
  return splitmix64(x) ^ b;
}

std::uint64_t Rng::hash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::uint64_t Rng::next() {
  // xoshiro256** 1.0
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

int Rng::uniformInt(int lo, int hi) {
  const std::uint64_t span = static_cast<std::uint64_t>(static_cast<std::int64_t>(hi) - lo) + 1;
  // Multiply-shift (Lemire) without rejection: bias < span / 2^64, negligible here.
  const unsigned __int128 m = static_cast<unsigned __int128>(next()) * span;
  return lo + static_cast<int>(static_cast<std::uint64_t>(m >> 64));
}

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_normal_;
  }
  double u1 = uniform();
  while (u1 <= 0.0) u1 = uniform();
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double a = 2.0 * std::numbers::pi * u2;
  spare_normal_ = r * std::sin(a);
  has_spare_ = true;
  return r * std::cos(a);
}

Eigen::Vector3d Rng::unitVector() {
  for (;;) {
    // The draws in an explicit order: the order in which a call's arguments
    // are evaluated is unspecified (GCC goes right to left, clang left to
    // right), so Vector3d(normal(), normal(), normal()) gave a seed different
    // axes under clang (the fuzz and WebAssembly builds). z first keeps the
    // GCC build's sequence.
    const double z = normal();
    const double y = normal();
    const double x = normal();
    const Eigen::Vector3d v(x, y, z);
    const double n = v.norm();
    if (n > 1e-9) return v / n;
  }
}

Eigen::Quaterniond Rng::rotation() {
  const double u1 = uniform(), u2 = uniform(), u3 = uniform();
  const double a = std::sqrt(1.0 - u1), b = std::sqrt(u1);
  const double t2 = 2.0 * std::numbers::pi * u2, t3 = 2.0 * std::numbers::pi * u3;
  return Eigen::Quaterniond(b * std::cos(t3), a * std::sin(t2), a * std::cos(t2), b * std::sin(t3));
}

}  // namespace ikbench
