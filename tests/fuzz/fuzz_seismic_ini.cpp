// libFuzzer harness: a taihu-seismic run file (.ini) through taihu::stencil::Config:
// parse_text, then every typed getter the tool uses on every key the examples use
// (numbers, shapes "301x151", ranges "0:3000:10", lists). A taihu::Error is a clean
// rejection; a crash, hang or huge allocation is a bug.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/stencil/config.hpp"

namespace {
const char* const kSections[] = {"model", "simulation", "acquisition", "migration", "output"};
const char* const kKeys[] = {"boundary", "checkpoint_memory", "delta", "dir", "endian", "epsilon",
                             "free_surface", "order", "physics", "png", "receiver_depth", "receivers",
                             "scale", "segy", "shape", "shots", "smooth", "snapshot_every",
                             "source_depth", "space_order", "spacing", "theta", "tmax", "vp", "width",
                             "dt", "f0", "dx", "dz"};

void quietly(const std::function<void()>& f) {
  try {
    f();
  } catch (const taihu::Error&) {
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const taihu::stencil::Config c = taihu::stencil::Config::parse_text(text, "fuzz.ini");
    for (const char* s : kSections) {
      for (const char* k : kKeys) {
        const std::string key = std::string(s) + "." + k;
        if (!c.has(key)) continue;
        quietly([&] { (void)c.get_string(key); });
        quietly([&] { (void)c.get_double(key); });
        quietly([&] { (void)c.get_long(key); });
        quietly([&] { (void)c.get_bool(key, false); });
        quietly([&] { (void)c.get_shape(key); });
        quietly([&] { (void)c.get_range(key); });
        quietly([&] { (void)c.get_doubles(key); });
        quietly([&] { (void)c.get_positive(key); });
        quietly([&] { (void)c.get_positive_doubles(key); });
        quietly([&] { (void)c.where(key); });
      }
    }
  } catch (const taihu::Error&) {
  }
  return 0;
}
