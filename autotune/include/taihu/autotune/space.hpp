// The schedule space of a Problem: one Knob per line of the spec's `space` section
// (plus `algorithm` when the spec has several compute blocks). A Point picks one value
// index per knob; Space::schedule turns it into the Schedule the code generators read.
// Contract: knob targets and values are checked when the Space is built (taihu::Error
// with file:line:col); Space::why_invalid says why a Point cannot be generated.
// The machine's vector width joins the spec's values: a `vectorize v` knob and the
// `tile v` knob of the same loop also offer 1-4 vectors of vector_lanes() (16-lane
// multiples on AVX-512), where the loop is that long.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "taihu/autotune/problem.hpp"

namespace taihu::autotune {

using Point = std::vector<int>;

// f32 lanes of one vector register of the dispatch ISA (arch::active_isa): 16 on
// AVX-512, 8 on AVX2, 4 on generic (SSE2) -- the unit of the vectorize and tile knobs.
int vector_lanes();
// Vector registers of the dispatch ISA (32 on AVX-512, 16 otherwise): how many
// accumulators a register tile may hold.
int vector_registers();
// Vector registers an ocvec register tile of k_vectors x x_tile needs in its FMA loop:
// the accumulators, the k_vectors weight vectors live across the pixels, and one
// broadcast input value. A tile needing more than vector_registers() spills (measured in
// the generated AVX-512 code: k 4 x 7, 33 registers, loads and stores accumulators on
// the stack inside the loop; k 2 x 14 (31) and k 1 x 28 (30) do not).
int ocvec_registers_needed(int k_vectors, int x_tile);
// The vector width of a Winograd GEMM register tile of k_tile output channels:
// vector_lanes() where it divides k_tile (16-lane zmm on AVX-512), else 8 lanes.
int winograd_gemm_lanes(int k_tile);
// The vector width of an ocvec l 2 strip (output-row strips) on a row of ow output
// pixels: vector_lanes(), halved (down to 4) while it does not divide ow, so a row is a
// whole number of vectors where it can be (LeNet conv1's 24 = 3 x 8 on AVX-512; a 256-bit
// FMA has the 512-bit one's throughput per lane on Zen 4).
int ocvec_row_lanes(std::int64_t ow);
// Vector registers a Winograd GEMM register tile of k_tile x t_tile needs in its
// channel loop: the k_tile / winograd_gemm_lanes accumulators per image tile, the U
// vectors reused across the t_tile tiles, one broadcast of V (as ocvec's rule).
int winograd_registers_needed(int k_tile, int t_tile);

struct Knob {
  std::string kind;    // algorithm | tile | block | vectorize | unroll | parallel | order | layout | timeblock | compute_at | rfactor | winograd | ocvec
  std::string target;  // loop variable or tensor ("" for algorithm, parallel, order, timeblock)
  std::vector<std::string> labels;  // the values as written (dim names resolved to numbers)
  std::vector<std::int64_t> ints;   // numeric value per label (0 for names)
  bool numeric = false;
  std::string name() const { return target.empty() ? kind : kind + " " + target; }
};

// The schedule of a derived `winograd` algorithm (the knobs `winograd m|k|t|c`):
// F(m x m, 3 x 3) with alpha = m + 2; the alpha^2 independent GEMMs over channels
// (M[e][k][t] = sum_c U[e][k][c] V[e][c][t], t the image tiles) run as register tiles
// of k_tile output channels (vectorized, a multiple of 8; 16-lane vectors where 16
// divides it on AVX-512) x t_tile image tiles (at most winograd_registers_needed), the
// channel reduction in blocks of c_block (0: whole). rows = 0: the input transform in
// its own parallel loop (over channels), then either (k_block = 0) one GEMM per task and
// the output transform in a third loop, or (k_block >= 1) one task per block of k_block
// output channels of an image running its GEMMs over all the image's tiles and its
// output transform; rows >= 1: one parallel task per block of `rows` tile rows of an
// image (and of k_block output channels when k_block >= 1) running the input
// transform of its rows, its GEMMs and its output transform.
struct WinogradSchedule {
  int m = 0;  // 0: not Winograd; else 2 or 4
  int k_tile = 16;
  int t_tile = 4;
  std::int64_t c_block = 0;
  int rows = 0;
  int k_block = 0;  // a multiple of k_tile (rounded up)
};

// The schedule of a derived `ocvec` algorithm (knobs `ocvec x|k|c|o`): a direct
// convolution whose register tile is k_vectors vectors of output channels (the ISA's
// lanes each) x x_tile output pixels of a row; each input value is broadcast and
// FMA'd into the k_vectors accumulators of its pixel. The weights are repacked once per
// weight pointer (outside the timed calls, as dnn prepacks) to [K/V][C][R][S][V], zero
// padded to whole vectors. c_block (0: all) splits the input-channel reduction into
// blocks, each swept over a whole output row of the tile's channels before the next
// (the tile's weights of a block stay in L1). rows_outer: the loop over output rows
// runs outside the loop over output-channel tiles (each row's input read once, all the
// weights per row); else channel tiles outside (a tile's weights read once per image).
//
// pixel_lanes = 1 (knob `ocvec l`; an unpadded window only): dnn's pointwise register
// tile instead -- pixels of the flattened plane in the lanes, weights broadcast (a
// window wider than 1x1 over whole input rows, the columns past OW dropped). The tile is k_vectors vectors of pixels x x_tile output channels
// (each weight broadcast once and FMA'd into the k_vectors accumulators of its channel;
// the same register count as above with the roles swapped), weights packed
// [K/x_tile][C][R][S][x_tile]. rows_outer: strips of pixels outside the output-channel tiles
// (a strip's input is reused from L1 by every tile, as dnn's chunks); else channel
// tiles outside, over chunks of `chunk` strips (knob `ocvec s`; 0: the whole plane)
// whose input stays in L2 while every channel tile sweeps it, a tile's weights in L1
// (dnn's chunks; each chunk one parallel task). c_block > 0: per strip, the reduction in blocks of c_block input
// channels, each swept over all the output-channel tiles before the next (k-blocking:
// the strip's accumulators of every channel stay in L1).
struct OcvecSchedule {
  int x_tile = 0;  // 0: not ocvec
  int k_vectors = 1;
  std::int64_t c_block = 0;
  int rows_outer = 0;
  int pixel_lanes = 0;
  int chunk = 0;  // (pixel_lanes, channel tiles outside) strips per chunk; 0: all
};

// What a Point means, in the generators' terms.
struct Schedule {
  int algorithm = 0;
  std::map<std::string, std::int64_t> tile;       // loop var -> tile size (the accumulator's tile)
  std::map<std::string, std::int64_t> block;      // pure var -> cache block (a multiple of its tile)
  std::map<std::string, int> vectorize;           // pure var -> vector width (>1)
  std::map<std::string, int> unroll;              // loop var -> unroll factor (>1)
  std::string parallel;                           // pure var whose outer loop runs in parallel ("" none)
  std::vector<std::string> order;                 // loops inside a tile, outermost first ("" default)
  std::map<std::string, std::string> layout;      // input -> direct | staged
  std::map<std::string, std::string> compute_at;  // temp -> root | inline | tile
  std::map<std::string, int> rfactor;             // temp -> lanes of partial reductions (>1; Halide only)
  int timeblock = 1;                              // steps fused per pass (stencils)
  WinogradSchedule winograd;                      // set (m > 0) only for a winograd algorithm
  OcvecSchedule ocvec;                            // set (x_tile > 0) only for an ocvec algorithm
};

class SplitMix64 {  // small, portable, reproducible across platforms
 public:
  explicit SplitMix64(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next();
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t s_;
};

class Space {
 public:
  explicit Space(const Problem& p);

  const std::vector<Knob>& knobs() const { return knobs_; }
  double cardinality() const;
  Point decode(double index) const;   // mixed radix, knob 0 fastest
  Point random(SplitMix64& rng) const;
  Point default_point() const;        // every knob at its first value
  // Structured starting points derived from the operator (a register-tiled, cache-
  // blocked template for contractions, vectorized/parallel templates otherwise), each
  // snapped to the nearest values the space offers; only valid points, no duplicates.
  std::vector<Point> templates() const;
  // How many of templates() are measured before anything else, even before the
  // schedules a new shape carries over from other shapes in the log (transfer seeds)
  // or a cost model trained on them ranks: the leading templates of an ocvec algorithm
  // (a 1x1 layer, where no Winograd template precedes them). Carried-over seeds from
  // 3x3 layers and the model's picks otherwise crowded them out of a short budget.
  std::size_t leading_templates() const;
  std::string why_invalid(const Point& pt) const;  // "" when valid
  bool valid(const Point& pt) const { return why_invalid(pt).empty(); }
  Schedule schedule(const Point& pt) const;

  std::string describe(const Point& pt) const;  // "tile m=32 tile n=64 ..."
  std::map<std::string, std::string> to_map(const Point& pt) const;
  Point from_map(const std::map<std::string, std::string>& m) const;  // throws on unknown labels
  // A schedule of another shape of the same operator carried over: each knob at the
  // same label, a numeric knob at its nearest value (log scale) where the label is not
  // offered here (block m=192 of M=384 -> the value nearest 192 for this M), a missing
  // knob at its first value. May be invalid (check with valid()).
  Point nearest_point(const std::map<std::string, std::string>& m) const;
  // Numbers the cost model learns from: log2 of numeric knobs, one-hot of the others.
  std::vector<double> features(const Point& pt) const;
  std::size_t feature_count() const;

 private:
  const Problem& p_;
  std::vector<Knob> knobs_;
};

}  // namespace taihu::autotune
