// Raw float32 and SEG-Y model readers (see raw_model.hpp).
#include "taihu/stencil/raw_model.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "taihu/arch/atomic_file.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/stencil/segy.hpp"

namespace taihu::stencil {
namespace {

// Axis index (0 = z, 1 = x, 2 = y) of each on-disk dimension, fastest first.
std::vector<int> parse_order(const RawFieldSpec& spec) {
  std::vector<int> axes;
  std::stringstream ss(spec.order);
  std::string name;
  while (std::getline(ss, name, ',')) {
    int a = name == "z" ? 0 : name == "x" ? 1 : name == "y" ? 2 : -1;
    if (a < 0)
      throw Error("taihu: model '" + spec.path + "': axis order '" + spec.order +
                  "' must list z, x (and y) from fastest to slowest, e.g. z,x");
    for (int b : axes)
      if (b == a) throw Error("taihu: model '" + spec.path + "': axis '" + name + "' appears twice in the order");
    axes.push_back(a);
  }
  if (axes.size() != spec.shape.size())
    throw Error("taihu: model '" + spec.path + "': the order '" + spec.order + "' names " +
                std::to_string(axes.size()) + " axes but the shape has " + std::to_string(spec.shape.size()));
  if (axes.size() == 2 && (axes[0] == 2 || axes[1] == 2))
    throw Error("taihu: model '" + spec.path + "': a 2D model has axes z and x");
  return axes;
}

}  // namespace

Grid grid_of(const RawFieldSpec& spec) {
  if (spec.shape.size() != 2 && spec.shape.size() != 3)
    throw Error("taihu: model '" + spec.path + "': shape needs 2 or 3 sizes, got " + std::to_string(spec.shape.size()));
  const auto axes = parse_order(spec);
  if (spec.spacing.size() != 1 && spec.spacing.size() != spec.shape.size())
    throw Error("taihu: model '" + spec.path + "': give one spacing or one per axis");
  (void)axes;
  Grid g;
  g.dim = static_cast<int>(spec.shape.size());
  // shape lists x, (y,) z.
  const int axis_of_entry[2][3] = {{1, 0, 0}, {1, 2, 0}};
  for (std::size_t d = 0; d < spec.shape.size(); ++d) {
    const int a = axis_of_entry[g.dim - 2][d];
    g.n[a] = spec.shape[d];
    g.h[a] = spec.spacing.size() == 1 ? spec.spacing[0] : spec.spacing[d];
  }
  validate(g);
  return g;
}

std::vector<float> read_raw_field(const RawFieldSpec& spec) {
  const Grid g = grid_of(spec);
  const auto axes = parse_order(spec);
  std::ifstream in(spec.path, std::ios::binary | std::ios::ate);
  if (!in) throw Error("taihu: cannot open model file '" + spec.path + "': " + std::strerror(errno));
  const auto bytes = static_cast<long long>(in.tellg());
  const long long need = static_cast<long long>(g.points()) * 4;
  if (bytes != need) {
    std::string shape;
    for (std::size_t d = 0; d < spec.shape.size(); ++d) {
      if (d) shape += 'x';
      shape += std::to_string(spec.shape[d]);
    }
    shape += g.dim == 3 ? " (nx x ny x nz)" : " (nx x nz)";
    throw Error("taihu: model file '" + spec.path + "' holds " + std::to_string(bytes) + " bytes, but shape " + shape +
                " of float32 needs " + std::to_string(need) + (bytes % 4 ? " (not a float32 file?)" : ""));
  }
  std::vector<float> disk(static_cast<std::size_t>(g.points()));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(disk.data()), need);
  if (!in) throw Error("taihu: error reading model file '" + spec.path + "'");
  if (spec.big_endian)
    for (auto& v : disk) {
      std::uint32_t w;
      std::memcpy(&w, &v, 4);
      w = __builtin_bswap32(w);
      std::memcpy(&v, &w, 4);
    }
  // Reorder: disk index runs over the spec's axes fastest first.
  std::vector<float> out(disk.size());
  long dn[3] = {1, 1, 1};
  for (std::size_t d = 0; d < axes.size(); ++d) dn[d] = g.n[axes[d]];
  long c[3];
  std::size_t i = 0;
  for (long k2 = 0; k2 < dn[2]; ++k2)
    for (long k1 = 0; k1 < dn[1]; ++k1)
      for (long k0 = 0; k0 < dn[0]; ++k0, ++i) {
        const long k[3] = {k0, k1, k2};
        c[0] = c[1] = c[2] = 0;
        for (std::size_t d = 0; d < axes.size(); ++d) c[axes[d]] = k[d];
        const float v = static_cast<float>(disk[i] * spec.scale);
        if (!std::isfinite(v))
          throw Error("taihu: model file '" + spec.path + "' has a non-finite value at float index " + std::to_string(i) +
                      (spec.big_endian ? "" : " (big-endian file read as little-endian?)"));
        out[static_cast<std::size_t>((c[2] * g.n[1] + c[1]) * g.n[0] + c[0])] = v;
      }
  return out;
}

void write_raw_field(const std::string& path, const std::vector<float>& values) {
  AtomicOutputFile out(path);
  out.write(values.data(), values.size() * sizeof(float));
  out.commit();
}

namespace {
// validate(), with the file named (a cell's value is only useful with its file).
void validate_from(const Model& m, const std::string& path) {
  try {
    validate(m);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " in '" + path + "'");
  }
}
}  // namespace

Model read_raw_model(const RawFieldSpec& spec) {
  Model m;
  m.grid = grid_of(spec);
  m.vp = read_raw_field(spec);
  validate_from(m, spec.path);
  return m;
}

Model read_segy_model(const std::string& path, double dx, double dz, double scale) {
  const SegyTraces t = read_segy(path);
  Model m;
  m.grid.dim = 2;
  m.grid.n = {t.samples, static_cast<long>(t.traces()), 1};
  m.grid.h = {dz, dx, 1};
  validate(m.grid);
  m.vp.resize(t.data.size());
  for (std::size_t i = 0; i < t.data.size(); ++i) m.vp[i] = static_cast<float>(t.data[i] * scale);
  validate_from(m, path);
  return m;
}

}  // namespace taihu::stencil
