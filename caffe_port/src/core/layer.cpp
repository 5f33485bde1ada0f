// Layer base: blob-count checks, loss weights, parameter serialisation.
#include "taihu/caffe/layer.hpp"

#include <new>
#include <stdexcept>
#include <string>

#include "taihu/arch/error.hpp"

namespace taihu::caffe {

Layer::Layer(const proto::LayerParameter& param) : param_(param) {}

std::string Layer::where() const { return "layer " + name() + " (" + type() + "): "; }

void Layer::require(bool condition, const std::string& message) const {
  if (!condition) throw Error(where() + message);
}

void Layer::check_blob_counts(const BlobVec& bottom, const BlobVec& top) const {
  const auto nb = static_cast<int>(bottom.size()), nt = static_cast<int>(top.size());
  auto check = [&](int limit, bool ok, const char* what, const char* rel, int have) {
    if (limit >= 0 && !ok) {
      throw Error(where() + "takes " + rel + std::to_string(limit) + " " + what + " blob(s), got " +
                  std::to_string(have));
    }
  };
  check(exact_bottoms(), nb == exact_bottoms(), "bottom", "", nb);
  check(min_bottoms(), nb >= min_bottoms(), "bottom", "at least ", nb);
  check(max_bottoms(), nb <= max_bottoms(), "bottom", "at most ", nb);
  check(exact_tops(), nt == exact_tops(), "top", "", nt);
  check(min_tops(), nt >= min_tops(), "top", "at least ", nt);
  check(max_tops(), nt <= max_tops(), "top", "at most ", nt);
}

void Layer::setup(const BlobVec& bottom, const BlobVec& top) {
  check_blob_counts(bottom, top);
  // Errors from blobs and allocation ("blob: ...") get the layer's name.
  try {
    layer_setup(bottom, top);
    reshape(bottom, top);
  } catch (const Error& e) {
    if (std::string(e.what()).rfind(where(), 0) == 0) throw;
    throw Error(where() + e.what());
  } catch (const std::bad_alloc&) {
    throw Error(where() + "out of memory while setting up its blobs");
  } catch (const std::length_error& e) {
    throw Error(where() + "a size is too large (" + e.what() + ")");
  }
  loss_weights_.assign(top.size(), 0.f);
  if (param_.loss_weight_size() > 0) {
    require(static_cast<std::size_t>(param_.loss_weight_size()) == top.size(),
            "loss_weight must be given once per top (" + std::to_string(top.size()) + "), got " +
                std::to_string(param_.loss_weight_size()));
    for (std::size_t i = 0; i < top.size(); ++i) loss_weights_[i] = param_.loss_weight(static_cast<int>(i));
  } else if (is_loss() && !top.empty()) {
    loss_weights_[0] = 1.f;
  }
  for (std::size_t i = 0; i < top.size(); ++i) {
    if (loss_weights_[i] != 0.f) top[i]->set_diff(loss_weights_[i]);
  }
}

float Layer::loss_weight(int top) const {
  return top >= 0 && static_cast<std::size_t>(top) < loss_weights_.size() ? loss_weights_[static_cast<std::size_t>(top)] : 0.f;
}

void Layer::to_proto(proto::LayerParameter* out, bool write_diff) const {
  out->Clear();
  out->CopyFrom(param_);
  out->clear_blobs();
  for (const auto& b : blobs_) b->to_proto(out->add_blobs(), write_diff);
}

}  // namespace taihu::caffe
