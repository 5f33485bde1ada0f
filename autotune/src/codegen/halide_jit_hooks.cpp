// The JIT hooks and buffer helpers of the hand-structured Halide kernels (see
// halide_jit_hooks.hpp).
#include "codegen/halide_jit_hooks.hpp"

#include <cstdlib>
#include <map>
#include <mutex>

#include "codegen/task_pool.hpp"
#include "taihu/arch/threads.hpp"

namespace taihu::autotune::halide {

using namespace Halide;

namespace {

// Halide allocates V, M and Yt (0.2-2 MB) on every run; glibc serves such sizes by
// mmap (or trims them back), so each run page-faulted them in again: F(2x2) on a 28x28
// image spent 0.8 of its 1.2 ms there. Freed blocks are kept for reuse instead
// (at most kCacheBytes, 128-byte aligned as Halide's own allocator).
class BlockCache {
 public:
  void* get(std::size_t size) {
    size = static_cast<std::size_t>(round_up(static_cast<std::int64_t>(size), 128));
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(size);
      if (it != free_.end()) {
        void* p = it->second;
        free_.erase(it);
        cached_ -= size;
        size_[p] = size;
        return p;
      }
    }
    void* p = std::aligned_alloc(128, size);
    if (p) {
      std::lock_guard<std::mutex> lock(mu_);
      size_[p] = size;
    }
    return p;
  }
  void put(void* p) {
    if (!p) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = size_.find(p);
    const std::size_t size = it->second;
    size_.erase(it);
    if (cached_ + size > kCacheBytes) {
      std::free(p);
      return;
    }
    free_.emplace(size, p);
    cached_ += size;
  }

 private:
  static constexpr std::size_t kCacheBytes = 256u << 20;
  std::mutex mu_;
  std::multimap<std::size_t, void*> free_;
  std::map<void*, std::size_t> size_;
  std::size_t cached_ = 0;
};

BlockCache& block_cache() {
  static BlockCache* c = new BlockCache;  // never destroyed: kernels may outlive statics
  return *c;
}
}  // namespace

void* cached_malloc(JITUserContext*, std::size_t size) { return block_cache().get(size); }
void cached_free(JITUserContext*, void* p) { block_cache().put(p); }

// The kernel's parallel loops run on autotune's task pool (codegen/task_pool.hpp) with
// taihu::arch::threads_for_call() threads, not on Halide's own pool and not in OpenMP
// parallel regions. Halide's workers (a few sched_yield spins, then asleep) handed
// their core away between the stages, so each loop waited for a wake-up; an OpenMP
// `parallel for` joins at a barrier every thread must reach, so with other processes
// on the cores each of the three loops waited a time slice (40 ms per call instead of
// 0.3 ms at load 6). The pool's caller takes tasks itself and waits only for tasks a
// helper has started.
int pool_do_par_for(JITUserContext* ctx, int (*task)(JITUserContext*, int, std::uint8_t*), int min, int extent, std::uint8_t* closure) {
  return pool_run(taihu::arch::threads_for_call(), extent, [&](int i) { return task(ctx, min + i, closure); });
}

void set_dense(OutputImageParam p, const std::vector<int>& extents) {
  int stride = 1;
  for (std::size_t d = 0; d < extents.size(); ++d) {
    p.dim(static_cast<int>(d)).set_min(0).set_extent(extents[d]).set_stride(stride);
    stride *= extents[d];
  }
}

void install_jit_hooks(Pipeline& pipeline) {
  pipeline.jit_handlers().custom_malloc = cached_malloc;
  pipeline.jit_handlers().custom_free = cached_free;
  pipeline.jit_handlers().custom_do_par_for = pool_do_par_for;
}

}  // namespace taihu::autotune::halide
