// GradientBucketer: packs registered gradients into ~bucket_bytes buckets in backward
// order and starts each bucket's nonblocking allreduce as soon as it is complete.
#include "taihu/comm/bucketer.hpp"

#include <cstring>
#include <string>

#include "detail.hpp"
#include "taihu/arch/log.hpp"
#include "taihu/comm/parameters.hpp"

namespace taihu::comm {

namespace {
struct Param {
  void* data = nullptr;
  std::size_t count = 0;
  bool is_double = false;
  int bucket = -1;
  std::size_t offset = 0;  // in the bucket's flat buffer
  bool ready = false;
};
struct Bucket {
  std::vector<int> params;
  bool is_double = false;
  std::size_t count = 0;
  std::vector<float> f;
  std::vector<double> d;
  int pending = 0;
  Request request;
  std::unique_ptr<ResidualCompressor> compressor;
};
}  // namespace

struct GradientBucketer::Impl {
  AsyncAllreducer& async;
  BucketOptions options;
  std::vector<Param> params;
  std::vector<Bucket> buckets;
  bool built = false;
  int next_launch = 0;
  int started_before_wait = 0;

  Impl(AsyncAllreducer& a, BucketOptions o) : async(a), options(o) {
    if (options.bucket_bytes == 0) throw Error("GradientBucketer: bucket_bytes must be > 0");
  }

  int add(void* data, std::size_t count, bool is_double) {
    if (built) throw Error("GradientBucketer::add: parameters must all be registered before the first mark_ready/wait_all");
    if (data == nullptr && count > 0) throw Error("GradientBucketer::add: null gradient with count " + std::to_string(count));
    params.push_back(Param{data, count, is_double});
    return static_cast<int>(params.size()) - 1;
  }

  void build() {
    built = true;
    for (std::size_t i = 0; i < params.size(); ++i) {
      Param& p = params[i];
      const std::size_t elem = p.is_double ? sizeof(double) : sizeof(float);
      const bool fits = !buckets.empty() && buckets.back().is_double == p.is_double &&
                        (buckets.back().count + p.count) * elem <= options.bucket_bytes;
      if (!fits) {
        buckets.emplace_back();
        buckets.back().is_double = p.is_double;
      }
      Bucket& b = buckets.back();
      p.bucket = static_cast<int>(buckets.size()) - 1;
      p.offset = b.count;
      b.count += p.count;
      b.params.push_back(static_cast<int>(i));
    }
    for (Bucket& b : buckets) {
      if (b.is_double) b.d.resize(b.count);
      else b.f.resize(b.count);
      b.pending = static_cast<int>(b.params.size());
      if (options.compression.mode != CompressionOptions::Mode::none && !b.is_double)
        b.compressor = std::make_unique<ResidualCompressor>(b.count, options.compression);
    }
    // Same layout everywhere, checked once (collective, in order with the buckets).
    std::vector<double> sig;
    for (const Param& p : params) sig.push_back(static_cast<double>(p.count) * (p.is_double ? -1 : 1));
    const std::uint64_t h = checksum(std::span<const double>(sig));
    async.submit([h](Communicator& c) {
           try {
             verify_identical(c.comm(), h, "gradient bucket layout (sizes/order of registered parameters)");
           } catch (const Error& e) {
             throw Error(std::string("GradientBucketer: ") + e.what());
           }
         })
        .wait();
    if (async.uses_helper_thread() && !buckets.empty())
      arch::log_verbose("comm: %zu gradients in %zu buckets of <= %zu bytes\n", params.size(), buckets.size(),
                        options.bucket_bytes);
  }

  void launch(Bucket& b) {
    for (int id : b.params) {
      const Param& p = params[id];
      if (b.is_double) std::memcpy(b.d.data() + p.offset, p.data, p.count * sizeof(double));
      else std::memcpy(b.f.data() + p.offset, p.data, p.count * sizeof(float));
    }
    if (b.compressor) {
      ResidualCompressor* comp = b.compressor.get();
      float* buf = b.f.data();
      const Op op = options.op;
      b.request = async.submit([comp, buf, op](Communicator& c) { comp->allreduce(c, buf, op); });
    } else if (b.is_double) {
      b.request = async.iallreduce(b.d.data(), b.count, options.op, options.algorithm);
    } else {
      b.request = async.iallreduce(b.f.data(), b.count, options.op, options.algorithm);
    }
  }

  void mark_ready(int id) {
    if (id < 0 || id >= static_cast<int>(params.size()))
      throw Error("GradientBucketer::mark_ready: id " + std::to_string(id) + " is not a registered parameter (0.." +
                  std::to_string(static_cast<long long>(params.size()) - 1) + ")");
    if (!built) build();
    Param& p = params[id];
    if (p.ready) throw Error("GradientBucketer::mark_ready: parameter " + std::to_string(id) + " marked ready twice in one iteration");
    p.ready = true;
    --buckets[p.bucket].pending;
    while (next_launch < static_cast<int>(buckets.size()) && buckets[next_launch].pending == 0)
      launch(buckets[next_launch++]);
    async.progress();
  }

  void wait_all() {
    if (!built) build();
    std::string missing;
    for (std::size_t i = 0; i < params.size(); ++i)
      if (!params[i].ready) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
    if (!missing.empty())
      throw Error("GradientBucketer::wait_all: parameters not marked ready this iteration: " + missing);
    started_before_wait = next_launch;
    for (Bucket& b : buckets) {
      b.request.wait();
      for (int id : b.params) {
        Param& p = params[id];
        if (b.is_double) std::memcpy(p.data, b.d.data() + p.offset, p.count * sizeof(double));
        else std::memcpy(p.data, b.f.data() + p.offset, p.count * sizeof(float));
        p.ready = false;
      }
      b.pending = static_cast<int>(b.params.size());
      b.request = Request();
    }
    next_launch = 0;
  }
};

GradientBucketer::GradientBucketer(AsyncAllreducer& async, BucketOptions options)
    : impl_(std::make_unique<Impl>(async, options)) {}
GradientBucketer::~GradientBucketer() = default;
int GradientBucketer::add(float* grad, std::size_t count) { return impl_->add(grad, count, false); }
int GradientBucketer::add(double* grad, std::size_t count) { return impl_->add(grad, count, true); }
void GradientBucketer::mark_ready(int id) { impl_->mark_ready(id); }
void GradientBucketer::wait_all() { impl_->wait_all(); }
int GradientBucketer::bucket_count() const { return static_cast<int>(impl_->buckets.size()); }
int GradientBucketer::bucket_of(int id) const { return impl_->params.at(id).bucket; }
int GradientBucketer::started_before_wait() const { return impl_->started_before_wait; }

}  // namespace taihu::comm
