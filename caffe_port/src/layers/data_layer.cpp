// Data: Caffe's DataLayer over an LMDB of Datum records (data_param: source,
// batch_size, backend LMDB, rand_skip, prefetch; transform_param), prefetched.
#include "layers/prefetch_data_layer.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/caffe/data_sources.hpp"

namespace taihu::caffe {
namespace {

class DataLayer : public PrefetchDataLayer {
 public:
  using PrefetchDataLayer::PrefetchDataLayer;
  ~DataLayer() override { stop_prefetch(); }  // before the source goes away
  const char* type() const override { return "Data"; }

 protected:
  void open_source() override {
    const auto& dp = param_.data_param();
    require(!(dp.has_backend() && dp.backend() == proto::DataParameter::LEVELDB),
            "backend LEVELDB is not supported; convert the data to LMDB (taihu-caffe convert_mnist)");
    require(!dp.source().empty(), "data_param.source is required");
    try {
      reader_ = std::make_unique<LmdbReader>(dp.source());
    } catch (const std::exception& e) {
      require(false, e.what());
    }
    if (dp.rand_skip() > 0) skip_ = process_rng()() % dp.rand_skip();
  }
  std::size_t num_records() const override { return reader_->entries(); }
  unsigned batch_size() const override { return param_.data_param().batch_size(); }
  unsigned prefetch_depth() const override { return param_.data_param().prefetch(); }
  void read_record(std::size_t index, Record* r) override {
    const proto::Datum d = reader_->read(index);
    r->channels = d.channels();
    r->height = d.height();
    r->width = d.width();
    r->label = d.label();
    const auto n = static_cast<std::size_t>(d.channels()) * static_cast<std::size_t>(d.height()) * static_cast<std::size_t>(d.width());
    if (!d.data().empty()) {
      if (d.data().size() != n) throw Error(where() + "record " + std::to_string(index) + " has " + std::to_string(d.data().size()) + " bytes for " + std::to_string(n) + " pixels");
      r->bytes.assign(d.data().begin(), d.data().end());
      r->floats.clear();
    } else {
      if (static_cast<std::size_t>(d.float_data_size()) != n) throw Error(where() + "record " + std::to_string(index) + " has no pixel data");
      r->floats.assign(d.float_data().begin(), d.float_data().end());
      r->bytes.clear();
    }
  }

 private:
  std::unique_ptr<LmdbReader> reader_;
};

}  // namespace

void register_data_layer(LayerRegistry& r) { add_layer<DataLayer>(r, "Data"); }

}  // namespace taihu::caffe
