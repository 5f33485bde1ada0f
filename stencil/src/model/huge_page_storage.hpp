// Storage for the big per-point arrays (fields, packed coefficients): arrays of several
// MiB are 2 MiB aligned and advised onto transparent huge pages before the first touch
// where the kernel allows it; the stencil's y window and its prefetches span many pages,
// and 4 KiB pages cost TLB misses on every plane. Smaller arrays are cache-line aligned.
// The contents are uninitialised: the caller fills them (first touch decides placement).
#pragma once
#include <cstddef>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "taihu/arch/aligned_buffer.hpp"

namespace taihu::stencil {

template <class T>
arch::AlignedBuffer<T> huge_page_storage(long count) {
  constexpr std::size_t kHugePage = std::size_t(2) << 20;
  const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
  if (bytes < 2 * kHugePage) return arch::AlignedBuffer<T>(static_cast<std::size_t>(count));
  arch::AlignedBuffer<T> buf(static_cast<std::size_t>(count), kHugePage);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  madvise(buf.data(), bytes / kHugePage * kHugePage, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  return buf;
}

}  // namespace taihu::stencil
