// The process random generator and derived per-stream generators. See taihu/caffe/rng.hpp.
#include "taihu/caffe/rng.hpp"

#include <chrono>
#include <sstream>

#include "taihu/arch/error.hpp"

namespace taihu::caffe {
namespace {
std::uint64_t g_seed = static_cast<std::uint64_t>(
    std::chrono::steady_clock::now().time_since_epoch().count());

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

Rng& process_rng() {
  static Rng rng(g_seed);
  return rng;
}

void seed_rng(std::uint64_t seed) {
  g_seed = seed;
  process_rng().seed(seed);
}

std::uint64_t rng_seed_for_streams() { return g_seed; }

std::string save_rng_state() {
  std::ostringstream s;
  s << process_rng();
  return s.str();
}

void load_rng_state(const std::string& state) {
  std::istringstream s(state);
  Rng r;
  s >> r;
  if (s.fail()) throw Error("random generator state: malformed (corrupt .solverstate?)");
  process_rng() = r;
}

Rng derived_rng(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return Rng(splitmix(splitmix(seed ^ splitmix(stream)) + index));
}

}  // namespace taihu::caffe
