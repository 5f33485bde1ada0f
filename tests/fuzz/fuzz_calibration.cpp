// libFuzzer harness: the allreduce calibration cache (TAIHU_COMM_CACHE) through
// taihu::comm::load_calibration. The first line of the input is the key looked up
// (keys are calibration_key() strings, without whitespace), the rest is the cache
// file. An accepted entry is formatted and parsed back: the parameters must agree to
// the 6 significant digits the cache stores. A taihu::Error is a clean rejection; a
// crash or a round-trip mismatch is a bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_util.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/comm/calibration.hpp"

namespace {
bool close(double a, double b) { return std::fabs(a - b) <= 1e-5 * std::fabs(a); }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const auto eol = input.find('\n');
  if (eol == std::string::npos) return 0;
  const std::string key = input.substr(0, eol);
  if (key.empty() || key.find_first_of(" \t\r\v\f") != std::string::npos) return 0;
  const std::string path = taihu::fuzz::scratch_file(data + eol + 1, size - eol - 1, "calibration", ".txt");
  try {
    const auto p = taihu::comm::load_calibration(path, key);
    if (!p) return 0;
    const auto q = taihu::comm::parse_calibration(taihu::comm::format_calibration(*p), "round-trip");
    if (!close(p->node_p2p.alpha, q.node_p2p.alpha) || !close(p->node_p2p.beta, q.node_p2p.beta) ||
        !close(p->shm_sync, q.shm_sync) || !close(p->shm_copy, q.shm_copy) || !close(p->gamma, q.gamma) ||
        p->tiers.size() != q.tiers.size())
      std::abort();
    for (std::size_t i = 0; i < p->tiers.size(); ++i)
      if (!close(p->tiers[i].alpha, q.tiers[i].alpha) || !close(p->tiers[i].beta, q.tiers[i].beta)) std::abort();
  } catch (const taihu::Error&) {
  }
  return 0;
}
