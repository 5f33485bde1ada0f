// FileData (taihu extension): a data layer over a dataset file read into memory,
// MNIST IDX (gzip or plain) or CIFAR-10 binary (file_data_param: format, source,
// label_source, batch_size, first, count, shuffle; transform_param), prefetched.
#include "layers/prefetch_data_layer.hpp"
#include "taihu/caffe/data_sources.hpp"

namespace taihu::caffe {
namespace {

class FileDataLayer : public PrefetchDataLayer {
 public:
  using PrefetchDataLayer::PrefetchDataLayer;
  ~FileDataLayer() override { stop_prefetch(); }  // before the source goes away
  const char* type() const override { return "FileData"; }

 protected:
  void open_source() override {
    const auto& fp = param_.file_data_param();
    require(!fp.source().empty(), "file_data_param.source is required");
    try {
      set_ = fp.format() == proto::FileDataParameter::IDX ? read_idx(fp.source(), fp.label_source())
                                                          : read_cifar10(fp.source());
    } catch (const std::exception& e) {
      require(false, e.what());
    }
    first_ = fp.first();
    require(first_ < set_.count(), "first " + std::to_string(first_) + " is past the " + std::to_string(set_.count()) + " records");
    count_ = fp.count() > 0 ? fp.count() : set_.count() - first_;
    require(first_ + count_ <= set_.count(), "first + count = " + std::to_string(first_ + count_) + " exceeds the " +
                                                 std::to_string(set_.count()) + " records");
  }
  std::size_t num_records() const override { return count_; }
  unsigned batch_size() const override { return param_.file_data_param().batch_size(); }
  bool shuffle() const override { return param_.file_data_param().shuffle(); }
  void read_record(std::size_t index, Record* r) override {
    const std::size_t sz = set_.image_size();
    const std::size_t i = first_ + index;
    r->channels = set_.channels;
    r->height = set_.height;
    r->width = set_.width;
    r->label = set_.labels[i];
    r->bytes.assign(set_.pixels.begin() + static_cast<std::ptrdiff_t>(i * sz), set_.pixels.begin() + static_cast<std::ptrdiff_t>((i + 1) * sz));
    r->floats.clear();
  }

 private:
  ImageSet set_;
  std::size_t first_ = 0, count_ = 0;
};

}  // namespace

void register_file_data_layer(LayerRegistry& r) { add_layer<FileDataLayer>(r, "FileData"); }

}  // namespace taihu::caffe
