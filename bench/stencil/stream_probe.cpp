// StreamProbe: the triad and the kernel-shaped streams, pinned and first-touched.
#include "stream_probe.hpp"

#include <omp.h>
#include <sys/mman.h>

#include <algorithm>

#include "taihu/arch/threads.hpp"
#include "taihu/arch/timer.hpp"
#include "taihu/arch/topology.hpp"

namespace taihu::stencil::bench {
namespace {

constexpr std::size_t kHugePage = std::size_t(2) << 20;

arch::AlignedBuffer<float> huge_buffer(long count) {
  arch::AlignedBuffer<float> buf(static_cast<std::size_t>(count), kHugePage);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  madvise(buf.data(), static_cast<std::size_t>(count) * sizeof(float) / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
  return buf;
}

// [begin, end) of thread t's contiguous part of n elements.
void part(long n, int threads, int t, long& begin, long& end) {
  begin = n * t / threads;
  end = n * (t + 1) / threads;
}

// Wall seconds of body(t, begin, end) on `threads` pinned threads, from a common start.
template <class Body>
double timed(int threads, long n, Body&& body) {
  double seconds = 0;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    arch::ThreadPin pin(t);
    long begin, end;
    part(n, threads, t, begin, end);
#pragma omp barrier
    const double start = arch::now_seconds();
    body(begin, end);
#pragma omp barrier
#pragma omp master
    seconds = arch::now_seconds() - start;
  }
  return seconds;
}

long triad_size() {
  const auto& caches = arch::topology().caches;
  const long llc = caches.empty() ? 32L << 20
                                  : static_cast<long>(caches.back().size_bytes) *
                                        std::max(1, static_cast<int>(caches.back().instances));
  return std::max(8L << 20, 4 * llc / long(sizeof(float)));
}

}  // namespace

StreamProbe::StreamProbe(int threads, long points, int reads, int updates)
    : threads_(std::max(1, threads)), triad_elements_(triad_size()), points_(points), reads_(reads), updates_(updates) {
  for (int i = 0; i < 3; ++i) triad_arrays_.push_back(huge_buffer(triad_elements_));
  for (int i = 0; i < reads + updates; ++i) stream_arrays_.push_back(huge_buffer(points_));
  // First touch by the thread that will stream each part.
  timed(threads_, triad_elements_, [&](long b, long e) {
    for (auto& a : triad_arrays_) std::fill(a.data() + b, a.data() + e, 1.f);
  });
  timed(threads_, points_, [&](long b, long e) {
    for (auto& a : stream_arrays_) std::fill(a.data() + b, a.data() + e, 1.f);
  });
}

double StreamProbe::triad() {
  float* __restrict a = triad_arrays_[0].data();
  const float* __restrict b = triad_arrays_[1].data();
  const float* __restrict c = triad_arrays_[2].data();
  return timed(threads_, triad_elements_, [&](long begin, long end) {
#pragma omp simd
    for (long i = begin; i < end; ++i) a[i] = b[i] + 3.f * c[i];
  });
}

double StreamProbe::streams() {
  return timed(threads_, points_, [&](long begin, long end) {
    constexpr long kBlock = 64;  // 4 cache lines of every stream in turn: all streams advance together, as in the kernel
    alignas(64) float sum[kBlock];
    for (long b = begin; b < end; b += kBlock) {
      const long len = std::min(kBlock, end - b);
      std::fill(sum, sum + len, 0.f);
      for (int r = 0; r < reads_; ++r) {
        const float* __restrict src = stream_arrays_[std::size_t(r)].data() + b;
#pragma omp simd
        for (long i = 0; i < len; ++i) sum[i] += src[i];
      }
      for (int w = 0; w < updates_; ++w) {
        float* __restrict dst = stream_arrays_[std::size_t(reads_ + w)].data() + b;
#pragma omp simd
        for (long i = 0; i < len; ++i) dst[i] = 0.5f * dst[i] + 1e-3f * sum[i];
      }
    }
  });
}

}  // namespace taihu::stencil::bench
