// RedSync-style residual gradient compression (Fang et al., 2019): each rank adds its
// gradient to a local residual, sends only the largest entries (top-k by magnitude, or
// all above a threshold) as (index, value) pairs with a sparse allgather, clears what
// it sent from the residual, and every rank sums all ranks' pairs in rank order into a
// dense result (identical on every rank). What is not sent stays in the residual and is
// sent later, so no gradient is lost, only delayed. Off by default in the bucketer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "taihu/comm/communicator.hpp"

namespace taihu::comm {

struct CompressionOptions {
  enum class Mode { none, top_k, threshold };
  Mode mode = Mode::none;
  double density = 0.01;   // top_k: fraction of entries sent (at least 1)
  double threshold = 0;    // threshold: |residual| >= threshold is sent
};

// One compressor per gradient buffer (it owns that buffer's residual).
class ResidualCompressor {
 public:
  ResidualCompressor(std::size_t count, CompressionOptions options);
  // Collective: replaces `grad` with the (sum or average) of all ranks' sparse
  // contributions; the unsent remainder stays in this rank's residual.
  void allreduce(Communicator& comm, float* grad, Op op);
  const std::vector<float>& residual() const { return residual_; }
  std::size_t last_sent() const { return last_sent_; }

 private:
  std::vector<float> residual_;
  CompressionOptions options_;
  std::size_t last_sent_ = 0;
  std::vector<std::uint32_t> index_;
  std::vector<float> value_;
};

}  // namespace taihu::comm
