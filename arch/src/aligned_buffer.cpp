// Aligned allocation; throws std::bad_alloc like operator new.
#include "taihu/arch/aligned_buffer.hpp"

namespace taihu::arch {

void* aligned_malloc(std::size_t bytes, std::size_t alignment) {
  if (bytes == 0) bytes = alignment;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, bytes) != 0) throw std::bad_alloc();
  return p;
}

void aligned_free(void* p) noexcept { std::free(p); }

}  // namespace taihu::arch
