// Source time functions sampled at the simulation's dt.
#pragma once
#include <string>
#include <vector>

namespace taihu::stencil {

// Ricker wavelet (1 - 2 (pi f0 tau)^2) exp(-(pi f0 tau)^2), tau = t - t0, at t = i dt.
// t0 < 0 means the default delay 1.2 / f0. Throws taihu::Error for f0 <= 0.
std::vector<float> ricker(double f0, double dt, int nt, double t0 = -1.0);
double ricker_value(double f0, double t0, double t);

// A user wavelet given at interval `dt_in`, linearly resampled to `dt` (zero past its
// end). Throws taihu::Error for empty input or non-positive intervals.
std::vector<float> resample_wavelet(const std::vector<float>& samples, double dt_in, double dt,
                                    int nt);

// Reads a wavelet file: one amplitude per line ('#' comments allowed), sampled at
// dt_in. Errors name file:line.
std::vector<float> read_wavelet_text(const std::string& path);

}  // namespace taihu::stencil
