// Synthetic 28x28 digits: seven-segment strokes with random size, position, slant,
// thickness, intensity and noise. Learnable like MNIST, varied enough that a net has
// to generalise (the demo's and the tests' stand-in for the real data).
#include <algorithm>
#include <cmath>
#include <random>

#include "taihu/caffe/data_sources.hpp"

namespace taihu::caffe {
namespace {

// Segments a..g as (x0, y0, x1, y1) in a unit box (y down).
constexpr float kSeg[7][4] = {
    {0, 0, 1, 0},      // a top
    {1, 0, 1, 0.5f},   // b top right
    {1, 0.5f, 1, 1},   // c bottom right
    {0, 1, 1, 1},      // d bottom
    {0, 0.5f, 0, 1},   // e bottom left
    {0, 0, 0, 0.5f},   // f top left
    {0, 0.5f, 1, 0.5f} // g middle
};
constexpr const char* kDigits[10] = {"abcdef", "bc", "abged", "abgcd", "fgbc",
                                     "afgcd",  "afgedc", "abc", "abcdefg", "abcdfg"};

float segment_distance(float px, float py, float x0, float y0, float x1, float y1) {
  const float dx = x1 - x0, dy = y1 - y0;
  const float len2 = dx * dx + dy * dy;
  float t = len2 > 0 ? ((px - x0) * dx + (py - y0) * dy) / len2 : 0.f;
  t = std::clamp(t, 0.f, 1.f);
  const float ex = px - (x0 + t * dx), ey = py - (y0 + t * dy);
  return std::sqrt(ex * ex + ey * ey);
}

}  // namespace

ImageSet synthetic_digits(std::size_t count, std::uint64_t seed) {
  ImageSet set;
  set.channels = 1;
  set.height = set.width = 28;
  set.pixels.assign(count * 28 * 28, 0);
  set.labels.resize(count);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::normal_distribution<float> noise(0.f, 18.f);
  for (std::size_t n = 0; n < count; ++n) {
    const int digit = static_cast<int>(rng() % 10);
    set.labels[n] = digit;
    const float w = 8.f + 6.f * u(rng), h = 14.f + 6.f * u(rng);
    const float x0 = 4.f + (20.f - w) * u(rng), y0 = 3.f + (22.f - h) * u(rng);
    const float slant = (u(rng) - 0.5f) * 0.5f;
    const float thick = 1.0f + 1.4f * u(rng);
    const float ink = 170.f + 85.f * u(rng);
    unsigned char* img = set.pixels.data() + n * 28 * 28;
    for (int y = 0; y < 28; ++y) {
      for (int x = 0; x < 28; ++x) {
        float best = 1e9f;
        for (const char* s = kDigits[digit]; *s; ++s) {
          const float* g = kSeg[*s - 'a'];
          auto X = [&](float sx, float sy) { return x0 + sx * w + slant * (1.f - sy) * h; };
          auto Y = [&](float sy) { return y0 + sy * h; };
          best = std::min(best, segment_distance(static_cast<float>(x), static_cast<float>(y), X(g[0], g[1]), Y(g[1]),
                                                 X(g[2], g[3]), Y(g[3])));
        }
        float v = ink * std::clamp(thick + 0.5f - best, 0.f, 1.f) + noise(rng);
        img[y * 28 + x] = static_cast<unsigned char>(std::clamp(v, 0.f, 255.f));
      }
    }
  }
  return set;
}

}  // namespace taihu::caffe
