// ResidualCompressor: residual accumulation, top-k / threshold selection, sparse
// allgather (MPI_Allgather of counts + MPI_Allgatherv of indices and values) and a
// rank-ordered dense sum, so every rank ends with the same result.
#include "taihu/comm/compression.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "detail.hpp"

namespace taihu::comm {

ResidualCompressor::ResidualCompressor(std::size_t count, CompressionOptions options)
    : residual_(count, 0.0f), options_(options) {
  if (count > 0xffffffffu) throw Error("ResidualCompressor: count " + std::to_string(count) + " exceeds 2^32 - 1");
  if (options.mode == CompressionOptions::Mode::top_k && !(options.density > 0 && options.density <= 1))
    throw Error("ResidualCompressor: density " + std::to_string(options.density) + " must be in (0, 1]");
  if (options.mode == CompressionOptions::Mode::threshold && !(options.threshold >= 0))
    throw Error("ResidualCompressor: threshold must be >= 0");
}

void ResidualCompressor::allreduce(Communicator& comm, float* grad, Op op) {
  const std::size_t n = residual_.size();
  for (std::size_t i = 0; i < n; ++i) residual_[i] += grad[i];
  index_.clear();
  if (options_.mode == CompressionOptions::Mode::threshold) {
    const float t = static_cast<float>(options_.threshold);
    for (std::size_t i = 0; i < n; ++i)
      if (std::fabs(residual_[i]) >= t) index_.push_back(static_cast<std::uint32_t>(i));
  } else {
    const std::size_t k = std::min(n, std::max<std::size_t>(1, static_cast<std::size_t>(options_.density * static_cast<double>(n))));
    index_.resize(n);
    std::iota(index_.begin(), index_.end(), 0u);
    if (k < n) {
      std::nth_element(index_.begin(), index_.begin() + static_cast<std::ptrdiff_t>(k), index_.end(),
                       [&](std::uint32_t a, std::uint32_t b) {
                         const float fa = std::fabs(residual_[a]), fb = std::fabs(residual_[b]);
                         return fa > fb || (fa == fb && a < b);
                       });
      index_.resize(k);
    }
    if (n == 0) index_.clear();
  }
  value_.resize(index_.size());
  for (std::size_t j = 0; j < index_.size(); ++j) {
    value_[j] = residual_[index_[j]];
    residual_[index_[j]] = 0.0f;
  }
  last_sent_ = index_.size();

  const int p = comm.size();
  const int mine = static_cast<int>(index_.size());
  std::vector<int> counts(p), displs(p);
  MPI_Comm c = comm.comm();
  detail::check_mpi(MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, c), "MPI_Allgather");
  long long total = 0;
  for (int q = 0; q < p; ++q) {
    displs[q] = static_cast<int>(total);
    total += counts[q];
  }
  if (total > 0x7fffffff) throw Error("ResidualCompressor: sparse allgather of " + std::to_string(total) + " entries exceeds INT_MAX");
  std::vector<std::uint32_t> all_index(static_cast<std::size_t>(total));
  std::vector<float> all_value(static_cast<std::size_t>(total));
  detail::check_mpi(MPI_Allgatherv(index_.data(), mine, MPI_UINT32_T, all_index.data(), counts.data(), displs.data(),
                                   MPI_UINT32_T, c),
                    "MPI_Allgatherv");
  detail::check_mpi(MPI_Allgatherv(value_.data(), mine, MPI_FLOAT, all_value.data(), counts.data(), displs.data(),
                                   MPI_FLOAT, c),
                    "MPI_Allgatherv");
  std::fill(grad, grad + n, 0.0f);
  for (std::size_t j = 0; j < all_index.size(); ++j) {
    if (all_index[j] >= n) throw Error("ResidualCompressor: a rank sent index " + std::to_string(all_index[j]) + " beyond count " + std::to_string(n) + " (buffer sizes differ across ranks)");
    grad[all_index[j]] += all_value[j];
  }
  if (op == Op::average) detail::divide(grad, n, p);
}

}  // namespace taihu::comm
