// The base of the data layers: batches of batch_size records, transformed by
// Transformer, produced by a background thread `prefetch` batches ahead.
// Batch k always holds records (k * batch_size + j + skip) mod N (through a per-epoch
// permutation when shuffling) and draws its augmentation from derived_rng(seed,
// layer, k), so the data do not depend on thread timing and a resumed run (the
// consumed-batch count is the layer's saved state) reads exactly the same batches.
// TRAIN-phase layers read only this rank's shard (taihu/caffe/data_shard.hpp): stream
// position p of this rank is global position p * count + index.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "data/transformer.hpp"
#include "layers/builtin_layers.hpp"

namespace taihu::caffe {

class PrefetchDataLayer : public Layer {
 public:
  using Layer::Layer;
  ~PrefetchDataLayer() override;
  int exact_bottoms() const override { return 0; }
  int min_tops() const override { return 1; }
  int max_tops() const override { return 2; }

  void layer_setup(const BlobVec& bottom, const BlobVec& top) final;
  void reshape(const BlobVec&, const BlobVec&) final {}
  void forward(const BlobVec& bottom, const BlobVec& top) final;
  void backward(const BlobVec&, const std::vector<bool>&, const BlobVec&) final {}
  std::string save_state() const final;
  void load_state(const std::string& state) final;

 protected:
  // Subclasses: open the source (called once from layer_setup).
  virtual void open_source() = 0;
  virtual std::size_t num_records() const = 0;
  // Reads record `index` (< num_records()); called from the prefetch thread only.
  virtual void read_record(std::size_t index, Record* out) = 0;
  virtual unsigned batch_size() const = 0;
  virtual unsigned prefetch_depth() const { return 4; }
  virtual bool shuffle() const { return false; }
  std::size_t skip_ = 0;  // rand_skip
  // Every subclass destructor must call this first: the prefetch thread calls the
  // subclass's read_record, which must not run while the subclass is destroyed.
  void stop_prefetch() { stop(); }

 private:
  struct Batch {
    std::uint64_t index = 0;
    std::vector<float> data, label;
  };
  void start();
  void stop();
  void produce_loop();
  void fill_batch(std::uint64_t k, Batch* b);
  std::size_t record_for(std::uint64_t position);

  std::uint64_t shard_index_ = 0, shard_count_ = 1;  // data-parallel shard (TRAIN only)
  std::unique_ptr<Transformer> transformer_;
  std::vector<int> record_shape_;  // C H W of the output
  int in_c_ = 0, in_h_ = 0, in_w_ = 0;
  std::uint64_t consumed_ = 0;
  std::uint64_t seed_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Batch> queue_;
  std::uint64_t next_produce_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::vector<std::size_t> perm_;
  std::uint64_t perm_epoch_ = ~std::uint64_t{0};
};

}  // namespace taihu::caffe
