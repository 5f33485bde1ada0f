// GradientBucketer: DDP-style gradient bucketing for data-parallel training.
//
//   GradientBucketer b(async, {.bucket_bytes = 25 << 20, .op = Op::average});
//   for (param in reverse(layers' params)) b.add(param.grad_ptr, param.count);  // once
//   each iteration:
//     for (layer in backward order) { layer.backward(); for (p : layer) b.mark_ready(id); }
//     b.wait_all();                              // before the solver update
//
// Parameters are registered in backward order (the order their gradients become ready)
// and packed into buckets of about bucket_bytes. When the last parameter of a bucket
// is marked ready, the bucket is copied into its flat buffer and its nonblocking
// allreduce starts at once; buckets always start in index order on every rank (a
// bucket that fills early waits for the ones before it), so the collectives match.
// wait_all() completes every bucket and copies the results back into the gradients.
// Contract: every rank registers the same sizes in the same order (checked once, at the
// first iteration, with an error naming the ranks); each parameter is marked ready
// exactly once per iteration (a second mark or a missing one is an error).
// With compression enabled, float buckets go through ResidualCompressor (sparse
// allgather) instead of the dense allreduce.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "taihu/comm/compression.hpp"
#include "taihu/comm/nonblocking.hpp"

namespace taihu::comm {

struct BucketOptions {
  std::size_t bucket_bytes = 25u << 20;
  Op op = Op::average;
  Algorithm algorithm = Algorithm::automatic;
  CompressionOptions compression;  // mode none = dense allreduce (default)
};

class GradientBucketer {
 public:
  GradientBucketer(AsyncAllreducer& async, BucketOptions options = {});
  ~GradientBucketer();
  GradientBucketer(const GradientBucketer&) = delete;
  GradientBucketer& operator=(const GradientBucketer&) = delete;

  // Registers a gradient buffer (backward order); returns its id for mark_ready.
  int add(float* grad, std::size_t count);
  int add(double* grad, std::size_t count);
  void mark_ready(int id);
  void wait_all();

  int bucket_count() const;
  // Bucket index of parameter `id` (after the first mark_ready or wait_all).
  int bucket_of(int id) const;
  // Buckets started before wait_all() was called in the last iteration (overlap proof).
  int started_before_wait() const;

  struct Impl;
 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace taihu::comm
