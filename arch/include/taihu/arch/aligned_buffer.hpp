// Aligned, owning, uninitialised storage for kernels: 64-byte (cache line / ZMM)
// alignment by default. Move-only.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

namespace taihu::arch {

inline constexpr std::size_t kCacheLine = 64;

void* aligned_malloc(std::size_t bytes, std::size_t alignment = kCacheLine);
void aligned_free(void* p) noexcept;

template <class T>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t count, std::size_t alignment = kCacheLine)
      : data_(static_cast<T*>(aligned_malloc(count * sizeof(T), alignment))), size_(count) {}
  ~AlignedBuffer() { aligned_free(data_); }
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    if (this != &o) {
      aligned_free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace taihu::arch
