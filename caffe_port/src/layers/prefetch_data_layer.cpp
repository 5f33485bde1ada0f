// Background prefetching of deterministic batches. See prefetch_data_layer.hpp.
#include "layers/prefetch_data_layer.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>

#include "taihu/arch/error.hpp"
#include "taihu/caffe/data_shard.hpp"
#include "taihu/caffe/log.hpp"

namespace taihu::caffe {

PrefetchDataLayer::~PrefetchDataLayer() { stop(); }

void PrefetchDataLayer::layer_setup(const BlobVec&, const BlobVec& top) {
  open_source();
  if (phase() == proto::TRAIN) {
    const DataShard shard = train_data_shard();
    shard_index_ = static_cast<std::uint64_t>(shard.index);
    shard_count_ = static_cast<std::uint64_t>(shard.count);
  }
  require(batch_size() > 0, "batch_size must be > 0");
  require(num_records() > 0, "the source has no records");
  transformer_ = std::make_unique<Transformer>(param_.transform_param(), phase());
  Record first;
  read_record(0, &first);
  in_c_ = first.channels;
  in_h_ = first.height;
  in_w_ = first.width;
  try {
    record_shape_ = transformer_->output_shape(in_c_, in_h_, in_w_);
  } catch (const std::exception& e) {
    require(false, e.what());
  }
  std::vector<int> shape{static_cast<int>(batch_size())};
  shape.insert(shape.end(), record_shape_.begin(), record_shape_.end());
  top[0]->reshape(shape);
  if (top.size() > 1) top[1]->reshape({static_cast<int>(batch_size())});
  log_info("output data size: " + std::to_string(batch_size()) + "," + std::to_string(record_shape_[0]) + "," +
           std::to_string(record_shape_[1]) + "," + std::to_string(record_shape_[2]) +
           (shard_count_ > 1 ? " (shard " + std::to_string(shard_index_) + " of " + std::to_string(shard_count_) + ")" : ""));
  seed_ = rng_seed_for_streams() ^ std::hash<std::string>{}(name() + "/" + proto::Phase_Name(phase()));
  start();
}

void PrefetchDataLayer::start() {
  stop_ = false;
  queue_.clear();
  next_produce_ = consumed_;
  thread_ = std::thread([this] { produce_loop(); });
}

void PrefetchDataLayer::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::size_t PrefetchDataLayer::record_for(std::uint64_t position) {
  const std::size_t n = num_records();
  position = position * shard_count_ + shard_index_ + skip_;
  if (!shuffle()) return static_cast<std::size_t>(position % n);
  const std::uint64_t epoch = position / n;
  if (epoch != perm_epoch_) {
    perm_.resize(n);
    std::iota(perm_.begin(), perm_.end(), std::size_t{0});
    Rng rng = derived_rng(seed_, 0x5eed, epoch);
    std::shuffle(perm_.begin(), perm_.end(), rng);
    perm_epoch_ = epoch;
  }
  return perm_[static_cast<std::size_t>(position % n)];
}

void PrefetchDataLayer::fill_batch(std::uint64_t k, Batch* b) {
  const std::size_t per = static_cast<std::size_t>(record_shape_[0]) * static_cast<std::size_t>(record_shape_[1]) *
                          static_cast<std::size_t>(record_shape_[2]);
  b->index = k;
  b->data.resize(per * batch_size());
  b->label.resize(batch_size());
  Rng rng = derived_rng(seed_, 1, k);
  Record r;
  for (unsigned j = 0; j < batch_size(); ++j) {
    read_record(record_for(k * batch_size() + j), &r);
    if (r.channels != in_c_ || r.height != in_h_ || r.width != in_w_) {
      throw Error(where() + "record shapes differ: " + std::to_string(r.channels) + "x" + std::to_string(r.height) + "x" +
                  std::to_string(r.width) + " after " + std::to_string(in_c_) + "x" + std::to_string(in_h_) + "x" +
                  std::to_string(in_w_));
    }
    transformer_->apply(r, rng, b->data.data() + j * per);
    b->label[j] = static_cast<float>(r.label);
  }
}

void PrefetchDataLayer::produce_loop() {
  try {
    for (;;) {
      std::uint64_t k;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || queue_.size() < std::max(1u, prefetch_depth()); });
        if (stop_) return;
        k = next_produce_++;
      }
      Batch b;
      fill_batch(k, &b);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back(std::move(b));
      }
      cv_.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::current_exception();
    cv_.notify_all();
  }
}

void PrefetchDataLayer::forward(const BlobVec&, const BlobVec& top) {
  Batch b;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return !queue_.empty() || error_; });
    if (queue_.empty() && error_) std::rethrow_exception(error_);
    b = std::move(queue_.front());
    queue_.pop_front();
  }
  cv_.notify_all();
  if (b.index != consumed_) throw Error(where() + "internal: batch " + std::to_string(b.index) + " arrived, expected " + std::to_string(consumed_));
  ++consumed_;
  std::memcpy(top[0]->mutable_data(), b.data.data(), b.data.size() * sizeof(float));
  if (top.size() > 1) std::memcpy(top[1]->mutable_data(), b.label.data(), b.label.size() * sizeof(float));
}

std::string PrefetchDataLayer::save_state() const { return std::to_string(consumed_); }

void PrefetchDataLayer::load_state(const std::string& state) {
  std::uint64_t k = 0;
  try {
    k = std::stoull(state);
  } catch (const std::exception&) {
    require(false, "saved state \"" + state + "\" is not a batch count (corrupt .solverstate?)");
  }
  stop();
  consumed_ = k;
  start();
}

}  // namespace taihu::caffe
