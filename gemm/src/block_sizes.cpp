// The Low et al. analytical block-size model (see block_sizes.hpp).
#include "block_sizes.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "taihu/arch/environment.hpp"
#include "taihu/arch/log.hpp"

namespace taihu::gemm {
namespace {

long round_down(long v, long multiple) { return std::max(multiple, v / multiple * multiple); }

constexpr long kMinKc = 256;  // depth-block floor (derive_block_sizes)

CacheGeometry geometry(const arch::Topology& topo, int level, std::size_t fallback_bytes,
                       int fallback_ways) {
  CacheGeometry g{fallback_bytes, fallback_ways, 64, 1};
  if (const auto* c = topo.cache(level)) {
    g.bytes = c->size_bytes;
    g.ways = c->associativity > 0 ? c->associativity : fallback_ways;
    g.line = c->line_bytes;
    g.sharers = c->instances > 0 ? std::max(1, topo.cores / c->instances) : 1;
  }
  return g;
}

// TAIHU_GEMM_BLOCKS="mc,kc,nc" overrides the model (0 keeps the model's value), for
// experiments on machines the model reads wrongly; mc and nc are rounded to the tile.
struct BlocksOverride {
  bool valid = true;  // false: the value is malformed
  long v[3] = {0, 0, 0};
};

BlocksOverride parse_blocks(const char* env) {
  BlocksOverride o;
  if (env == nullptr || *env == '\0') return o;
  const char* p = env;
  for (int i = 0; i < 3; ++i) {
    char* end = nullptr;
    o.v[i] = std::strtol(p, &end, 10);
    if (end == p || o.v[i] < 0 || (i < 2 && *end != ',') || (i == 2 && *end != '\0')) {
      o.valid = false;
      return o;
    }
    p = end + 1;
  }
  return o;
}

std::string blocks_problem() {
  const char* env = std::getenv("TAIHU_GEMM_BLOCKS");
  if (parse_blocks(env).valid) return {};
  return std::string("TAIHU_GEMM_BLOCKS='") + env +
         "': expected three non-negative integers mc,kc,nc (0 keeps the model's value)";
}

[[maybe_unused]] const bool g_check_registered = arch::register_environment_check(&blocks_problem);

// Read once: a malformed value is reported once and the model's sizes are used.
const BlocksOverride& blocks_override() {
  static const BlocksOverride o = [] {
    BlocksOverride r = parse_blocks(std::getenv("TAIHU_GEMM_BLOCKS"));
    if (!r.valid) {
      arch::warn_environment(blocks_problem(), "the block-size model's values");
      r = BlocksOverride{};
    }
    return r;
  }();
  return o;
}

void apply_override(BlockSizes& b, int mr, int nr) {
  const long* v = blocks_override().v;
  if (v[0] > 0) b.mc = round_down(v[0], mr);
  if (v[1] > 0) b.kc = v[1];
  if (v[2] > 0) b.nc = round_down(v[2], nr);
}

}  // namespace

BlockSizes derive_block_sizes(int mr, int nr, int elem, const CacheGeometry& l1,
                              const CacheGeometry& l2, const CacheGeometry& l3) {
  BlockSizes b;
  const long l1_way = static_cast<long>(l1.bytes) / std::max(1, l1.ways);
  b.kc = round_down(std::max(1, l1.ways / 2) * l1_way / (mr * elem), 8);
  // At least kMinKc steps: C's tile is read and written once per depth block, and an
  // AVX-512 tile's 128-byte k step in half of a 32 KiB L1 leaves kc = 128, which doubles
  // that traffic. The micro-panel then spills into L2, where the kernel's prefetches
  // reach it (Zen 4, 1 thread: 2048^3 DGEMM 0.95-0.98 -> 0.98-1.00x the best anchor,
  // SGEMM 0.97-0.98 -> 1.00-1.02; bench/results/2026-11-28-zen4-gemm-kernel3.md).
  b.kc = std::max(b.kc, kMinKc);
  const long l2_way = static_cast<long>(l2.bytes) / std::max(1, l2.ways);
  b.nc = round_down(std::max(1, l2.ways / 2) * l2_way / (b.kc * elem), nr);
  const long l3_per_core = static_cast<long>(l3.bytes) / std::max(1, l3.sharers);
  const long a_bytes = std::min(l3_per_core / 2, 4L << 20);
  b.mc = round_down(a_bytes / (b.kc * elem), mr);
  return b;
}

BlockSizes derive_b_resident_block_sizes(int mr, int nr, int elem, const CacheGeometry& l1,
                                         const CacheGeometry& l2, const CacheGeometry& l3) {
  // The A-resident model with the operands' roles swapped: B's micro-panel (nr wide)
  // sizes kc for L1, A's block (mc) fills half of L2, B's block (nc) the L3 share.
  BlockSizes b = derive_block_sizes(nr, mr, elem, l1, l2, l3);
  std::swap(b.mc, b.nc);
  return b;
}

CacheGeometry cache_geometry(int level) {
  const auto& topo = arch::topology();
  if (level == 1) return geometry(topo, 1, 32 << 10, 8);
  if (level == 2) return geometry(topo, 2, 512 << 10, 8);
  return geometry(topo, 3, 8 << 20, 16);
}

namespace {

using DeriveFn = BlockSizes (*)(int, int, int, const CacheGeometry&, const CacheGeometry&,
                                const CacheGeometry&);

BlockSizes cached_block_sizes(DeriveFn derive, const char* order, int mr, int nr, int elem) {
  static std::mutex mutex;
  static std::map<std::tuple<DeriveFn, int, int, int>, BlockSizes> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(derive, mr, nr, elem);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  BlockSizes b = derive(mr, nr, elem, cache_geometry(1), cache_geometry(2), cache_geometry(3));
  apply_override(b, mr, nr);
  arch::log_verbose("gemm: %s block sizes for %dx%d tile, %d-byte elements: mc=%ld kc=%ld nc=%ld",
                    order, mr, nr, elem, b.mc, b.kc, b.nc);
  cache.emplace(key, b);
  return b;
}

}  // namespace

BlockSizes block_sizes_for(int mr, int nr, int elem) {
  return cached_block_sizes(&derive_block_sizes, "A-resident", mr, nr, elem);
}

BlockSizes b_resident_block_sizes_for(int mr, int nr, int elem) {
  return cached_block_sizes(&derive_b_resident_block_sizes, "B-resident", mr, nr, elem);
}

}  // namespace taihu::gemm
