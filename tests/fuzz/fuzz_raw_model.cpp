// libFuzzer harness: a raw float32 velocity file and its description (shape, axis
// order, spacing, endianness, scale: the `[model] file/shape/order/...` keys of a
// seismic ini) through taihu::stencil::read_raw_model. The first 16 bytes choose the
// description, the rest is the file:
//   byte 0     bits 0-2: axis order (a table with valid and invalid orders),
//              bit 3: big-endian, bits 4-6: scale (a table incl. 0, -1, 1e30, nan)
//   bytes 1-6  three int16 shape entries (2 or 3 used, per the order's axis count;
//              zero and negative sizes included)
//   bytes 7-14 spacing (a raw double: nan, inf, 0 and negatives included)
//   byte 15    number of spacing values given (0-3)
// A taihu::Error is a clean rejection; a crash or a model that validate() rejects
// after a successful read is a bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "fuzz_util.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/stencil/model.hpp"
#include "taihu/stencil/raw_model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t kHeader = 16;
  if (size < kHeader) return 0;
  static const char* const kOrders[8] = {"z,x", "x,z", "z,x,y", "y,x,z", "x,y,z", "z,z", "z,q", ""};
  static const double kScales[8] = {1.0, 1000.0, 0.001, 0.0, -1.0, 1e30,
                                    std::numeric_limits<double>::quiet_NaN(), 1e-30};
  taihu::stencil::RawFieldSpec spec;
  spec.order = kOrders[data[0] & 7];
  spec.big_endian = (data[0] & 8) != 0;
  spec.scale = kScales[(data[0] >> 4) & 7];
  const std::size_t axes = spec.order.size() == 5 ? 3 : 2;
  for (std::size_t d = 0; d < axes; ++d) {
    std::int16_t s;
    std::memcpy(&s, data + 1 + 2 * d, 2);
    spec.shape.push_back(s);
  }
  double h;
  std::memcpy(&h, data + 7, 8);
  spec.spacing.assign(data[15] & 3, h);
  spec.path = taihu::fuzz::scratch_file(data + kHeader, size - kHeader, "raw_model", ".bin");
  try {
    const taihu::stencil::Model m = taihu::stencil::read_raw_model(spec);
    if (m.vp.size() != static_cast<std::size_t>(m.grid.points())) std::abort();
    taihu::stencil::validate(m);  // what the reader returned must be a valid model
  } catch (const taihu::Error&) {
  }
  return 0;
}
