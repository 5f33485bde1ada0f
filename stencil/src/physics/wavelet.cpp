// Source time functions: Ricker and user wavelets.
#include <cmath>
#include <fstream>
#include <sstream>

#include "taihu/arch/error.hpp"
#include "taihu/stencil/wavelet.hpp"

namespace taihu::stencil {

double ricker_value(double f0, double t0, double t) {
  const double a = M_PI * f0 * (t - t0);
  return (1.0 - 2.0 * a * a) * std::exp(-a * a);
}

std::vector<float> ricker(double f0, double dt, int nt, double t0) {
  if (!(f0 > 0)) throw Error("taihu: Ricker peak frequency f0 must be > 0 Hz, got " + std::to_string(f0));
  if (!(dt > 0) || nt < 0) throw Error("taihu: ricker: dt must be > 0 and nt >= 0");
  if (t0 < 0) t0 = 1.2 / f0;
  std::vector<float> w(static_cast<std::size_t>(nt));
  for (int i = 0; i < nt; ++i) w[i] = static_cast<float>(ricker_value(f0, t0, i * dt));
  return w;
}

std::vector<float> resample_wavelet(const std::vector<float>& samples, double dt_in, double dt, int nt) {
  if (samples.empty()) throw Error("taihu: the user wavelet is empty");
  if (!(dt_in > 0) || !(dt > 0)) throw Error("taihu: wavelet sample intervals must be > 0");
  std::vector<float> w(static_cast<std::size_t>(nt), 0.f);
  for (int i = 0; i < nt; ++i) {
    const double pos = i * dt / dt_in;
    const auto k = static_cast<std::size_t>(pos);
    if (k + 1 < samples.size()) {
      const double f = pos - double(k);
      w[i] = static_cast<float>((1 - f) * samples[k] + f * samples[k + 1]);
    } else if (k + 1 == samples.size() && pos == double(k)) {
      w[i] = samples[k];
    }
  }
  return w;
}

std::vector<float> read_wavelet_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("taihu: cannot open wavelet file '" + path + "'");
  std::vector<float> w;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream ss(line);
    double v;
    if (!(ss >> v)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      throw Error("taihu: " + path + ":" + std::to_string(lineno) + ": expected one number, got '" + line + "'");
    }
    std::string rest;
    if (ss >> rest)
      throw Error("taihu: " + path + ":" + std::to_string(lineno) + ": unexpected text '" + rest + "'");
    w.push_back(static_cast<float>(v));
  }
  if (w.empty()) throw Error("taihu: wavelet file '" + path + "' holds no samples");
  return w;
}

}  // namespace taihu::stencil
