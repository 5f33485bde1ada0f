// Caffe-style CPU training step (im2col + OpenBLAS). See caffe_style_anchor.hpp.
#include "caffe_style_anchor.hpp"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace taihu::bench {
namespace {

void im2col(const float* x, int c, int h, int w, int k, int pad, int stride, int oh, int ow, float* col) {
  for (int ci = 0; ci < c; ++ci)
    for (int r = 0; r < k; ++r)
      for (int s = 0; s < k; ++s) {
        float* dst = col + ((ci * k + r) * k + s) * oh * ow;
        for (int y = 0; y < oh; ++y) {
          const int iy = y * stride - pad + r;
          for (int xo = 0; xo < ow; ++xo) {
            const int ix = xo * stride - pad + s;
            dst[y * ow + xo] = (iy >= 0 && iy < h && ix >= 0 && ix < w) ? x[(ci * h + iy) * w + ix] : 0.f;
          }
        }
      }
}

void col2im(const float* col, int c, int h, int w, int k, int pad, int stride, int oh, int ow, float* x) {
  std::memset(x, 0, sizeof(float) * static_cast<std::size_t>(c * h * w));
  for (int ci = 0; ci < c; ++ci)
    for (int r = 0; r < k; ++r)
      for (int s = 0; s < k; ++s) {
        const float* src = col + ((ci * k + r) * k + s) * oh * ow;
        for (int y = 0; y < oh; ++y) {
          const int iy = y * stride - pad + r;
          if (iy < 0 || iy >= h) continue;
          for (int xo = 0; xo < ow; ++xo) {
            const int ix = xo * stride - pad + s;
            if (ix >= 0 && ix < w) x[(ci * h + iy) * w + ix] += src[y * ow + xo];
          }
        }
      }
}

int count(const std::vector<int>& s) {
  int n = 1;
  for (int d : s) n *= d;
  return n;
}

}  // namespace

int CaffeStyleNet::blob_id(const caffe::Blob* b) {
  auto it = ids_.find(b);
  if (it != ids_.end()) return it->second;
  const int id = static_cast<int>(blobs_.size());
  ids_[b] = id;
  blobs_.push_back({std::vector<float>(b->data(), b->data() + b->count()), std::vector<float>(static_cast<std::size_t>(b->count()))});
  return id;
}

CaffeStyleNet::CaffeStyleNet(const caffe::Net& net, const CblasAnchor& blas) : blas_(blas) {
  for (int i = 0; i < net.num_layers(); ++i) {
    const auto ui = static_cast<std::size_t>(i);
    LayerRef l;
    l.layer = net.layers()[ui].get();
    l.type = l.layer->type();
    for (caffe::Blob* b : net.bottom_vecs()[ui]) { l.bottoms.push_back(blob_id(b)); l.bshapes.push_back(b->shape()); }
    for (caffe::Blob* b : net.top_vecs()[ui]) { l.tops.push_back(blob_id(b)); l.tshapes.push_back(b->shape()); }
    for (const auto& p : l.layer->blobs()) {
      l.params.push_back(static_cast<int>(params_.size()));
      params_.push_back({std::vector<float>(p->data(), p->data() + p->count()), std::vector<float>(static_cast<std::size_t>(p->count()))});
      history_.push_back({std::vector<float>(static_cast<std::size_t>(p->count())), {}});
    }
    static const char* known[] = {"Input", "Split", "Convolution", "Pooling", "InnerProduct", "ReLU", "SoftmaxWithLoss"};
    if (std::none_of(std::begin(known), std::end(known), [&](const char* k) { return l.type == k; })) {
      throw std::runtime_error("CaffeStyleNet: layer type " + l.type + " not supported");
    }
    if (l.type == "Convolution" && l.layer->param().convolution_param().group() != 1) {
      throw std::runtime_error("CaffeStyleNet: grouped convolution not supported");
    }
    if (l.type == "Pooling") l.mask.resize(static_cast<std::size_t>(count(l.tshapes[0])));
    layers_.push_back(std::move(l));
  }
}

void CaffeStyleNet::gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                         float beta, float* c, int ldc) const {
  blas_.sgemm()(101, ta ? 112 : 111, tb ? 112 : 111, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void CaffeStyleNet::conv_forward(LayerRef& l) {
  const auto& cp = l.layer->param().convolution_param();
  const auto& xs = l.bshapes[0];
  const auto& ys = l.tshapes[0];
  const int k = static_cast<int>(cp.kernel_size(0)), pad = cp.pad_size() ? static_cast<int>(cp.pad(0)) : 0;
  const int stride = cp.stride_size() ? static_cast<int>(cp.stride(0)) : 1;
  const int c = xs[1], h = xs[2], w = xs[3], oc = ys[1], oh = ys[2], ow = ys[3];
  const int ckk = c * k * k, ohw = oh * ow;
  col_.resize(static_cast<std::size_t>(ckk * ohw));
  const float* W = params_[static_cast<std::size_t>(l.params[0])].data.data();
  const float* bias = l.params.size() > 1 ? params_[static_cast<std::size_t>(l.params[1])].data.data() : nullptr;
  std::vector<float> ones(static_cast<std::size_t>(ohw), 1.f);
  for (int n = 0; n < xs[0]; ++n) {
    const float* x = blobs_[static_cast<std::size_t>(l.bottoms[0])].data.data() + n * c * h * w;
    float* y = blobs_[static_cast<std::size_t>(l.tops[0])].data.data() + n * oc * ohw;
    im2col(x, c, h, w, k, pad, stride, oh, ow, col_.data());
    gemm(false, false, oc, ohw, ckk, 1.f, W, ckk, col_.data(), ohw, 0.f, y, ohw);
    if (bias) gemm(false, false, oc, ohw, 1, 1.f, bias, 1, ones.data(), ohw, 1.f, y, ohw);
  }
}

void CaffeStyleNet::conv_backward(LayerRef& l) {
  const auto& cp = l.layer->param().convolution_param();
  const auto& xs = l.bshapes[0];
  const auto& ys = l.tshapes[0];
  const int k = static_cast<int>(cp.kernel_size(0)), pad = cp.pad_size() ? static_cast<int>(cp.pad(0)) : 0;
  const int stride = cp.stride_size() ? static_cast<int>(cp.stride(0)) : 1;
  const int c = xs[1], h = xs[2], w = xs[3], oc = ys[1], oh = ys[2], ow = ys[3];
  const int ckk = c * k * k, ohw = oh * ow;
  Buf& W = params_[static_cast<std::size_t>(l.params[0])];
  float* dbias = l.params.size() > 1 ? params_[static_cast<std::size_t>(l.params[1])].diff.data() : nullptr;
  const bool need_dx = l.bottoms[0] != 0;  // blob 0 is the data input
  std::vector<float> ones(static_cast<std::size_t>(ohw), 1.f);
  for (int n = 0; n < xs[0]; ++n) {
    const float* x = blobs_[static_cast<std::size_t>(l.bottoms[0])].data.data() + n * c * h * w;
    const float* dy = blobs_[static_cast<std::size_t>(l.tops[0])].diff.data() + n * oc * ohw;
    if (dbias) gemm(false, false, oc, 1, ohw, 1.f, dy, ohw, ones.data(), 1, 1.f, dbias, 1);
    im2col(x, c, h, w, k, pad, stride, oh, ow, col_.data());
    gemm(false, true, oc, ckk, ohw, 1.f, dy, ohw, col_.data(), ohw, 1.f, W.diff.data(), ckk);
    if (need_dx) {
      gemm(true, false, ckk, ohw, oc, 1.f, W.data.data(), ckk, dy, ohw, 0.f, col_.data(), ohw);
      col2im(col_.data(), c, h, w, k, pad, stride, oh, ow, blobs_[static_cast<std::size_t>(l.bottoms[0])].diff.data() + n * c * h * w);
    }
  }
}

void CaffeStyleNet::pool_forward(LayerRef& l) {
  const auto& pp = l.layer->param().pooling_param();
  const auto& xs = l.bshapes[0];
  const auto& ys = l.tshapes[0];
  const int k = static_cast<int>(pp.kernel_size()), s = static_cast<int>(pp.stride()), pad = static_cast<int>(pp.pad());
  const int h = xs[2], w = xs[3], oh = ys[2], ow = ys[3];
  const float* x = blobs_[static_cast<std::size_t>(l.bottoms[0])].data.data();
  float* y = blobs_[static_cast<std::size_t>(l.tops[0])].data.data();
  const bool max = pp.pool() == caffe::proto::PoolingParameter::MAX;
  for (int p = 0; p < xs[0] * xs[1]; ++p) {
    for (int py = 0; py < oh; ++py)
      for (int px = 0; px < ow; ++px) {
        int hs = py * s - pad, ws = px * s - pad;
        int he = std::min(hs + k, h + pad), we = std::min(ws + k, w + pad);
        const int size = (he - hs) * (we - ws);
        hs = std::max(hs, 0); ws = std::max(ws, 0); he = std::min(he, h); we = std::min(we, w);
        const int o = (p * oh + py) * ow + px;
        if (max) {
          float best = -FLT_MAX;
          int arg = -1;
          for (int yy = hs; yy < he; ++yy)
            for (int xx = ws; xx < we; ++xx)
              if (x[(p * h + yy) * w + xx] > best) best = x[(p * h + yy) * w + xx], arg = yy * w + xx;
          y[o] = best;
          l.mask[static_cast<std::size_t>(o)] = arg;
        } else {
          float sum = 0;
          for (int yy = hs; yy < he; ++yy)
            for (int xx = ws; xx < we; ++xx) sum += x[(p * h + yy) * w + xx];
          y[o] = sum / static_cast<float>(size);
        }
      }
  }
}

void CaffeStyleNet::pool_backward(LayerRef& l) {
  const auto& pp = l.layer->param().pooling_param();
  const auto& xs = l.bshapes[0];
  const auto& ys = l.tshapes[0];
  const int k = static_cast<int>(pp.kernel_size()), s = static_cast<int>(pp.stride()), pad = static_cast<int>(pp.pad());
  const int h = xs[2], w = xs[3], oh = ys[2], ow = ys[3];
  float* dx = blobs_[static_cast<std::size_t>(l.bottoms[0])].diff.data();
  const float* dy = blobs_[static_cast<std::size_t>(l.tops[0])].diff.data();
  std::memset(dx, 0, sizeof(float) * static_cast<std::size_t>(count(xs)));
  const bool max = pp.pool() == caffe::proto::PoolingParameter::MAX;
  for (int p = 0; p < xs[0] * xs[1]; ++p)
    for (int py = 0; py < oh; ++py)
      for (int px = 0; px < ow; ++px) {
        const int o = (p * oh + py) * ow + px;
        if (max) {
          dx[p * h * w + l.mask[static_cast<std::size_t>(o)]] += dy[o];
          continue;
        }
        int hs = py * s - pad, ws = px * s - pad;
        int he = std::min(hs + k, h + pad), we = std::min(ws + k, w + pad);
        const int size = (he - hs) * (we - ws);
        hs = std::max(hs, 0); ws = std::max(ws, 0); he = std::min(he, h); we = std::min(we, w);
        for (int yy = hs; yy < he; ++yy)
          for (int xx = ws; xx < we; ++xx) dx[(p * h + yy) * w + xx] += dy[o] / static_cast<float>(size);
      }
}

void CaffeStyleNet::forward(LayerRef& l) {
  auto B = [&](int i) -> Buf& { return blobs_[static_cast<std::size_t>(l.bottoms[static_cast<std::size_t>(i)])]; };
  auto T = [&](int i) -> Buf& { return blobs_[static_cast<std::size_t>(l.tops[static_cast<std::size_t>(i)])]; };
  if (l.type == "Convolution") {
    conv_forward(l);
  } else if (l.type == "Pooling") {
    pool_forward(l);
  } else if (l.type == "InnerProduct") {
    const int m = l.bshapes[0][0], kk = count(l.bshapes[0]) / m, n = l.tshapes[0].back();
    gemm(false, true, m, n, kk, 1.f, B(0).data.data(), kk, params_[static_cast<std::size_t>(l.params[0])].data.data(), kk, 0.f,
         T(0).data.data(), n);
    const float* b = params_[static_cast<std::size_t>(l.params[1])].data.data();
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) T(0).data[static_cast<std::size_t>(i * n + j)] += b[j];
  } else if (l.type == "ReLU") {
    for (std::size_t i = 0; i < B(0).data.size(); ++i) T(0).data[i] = std::max(B(0).data[i], 0.f);
  } else if (l.type == "Split") {
    for (std::size_t t = 0; t < l.tops.size(); ++t) T(static_cast<int>(t)).data = B(0).data;
  } else if (l.type == "SoftmaxWithLoss") {
    const int m = l.bshapes[0][0], c = count(l.bshapes[0]) / m;
    double loss = 0;
    for (int i = 0; i < m; ++i) {
      float* x = B(0).data.data() + i * c;
      float* prob = B(0).diff.data() + i * c;  // Caffe keeps prob_; the bottom diff doubles as it here
      const float mx = *std::max_element(x, x + c);
      float sum = 0;
      for (int j = 0; j < c; ++j) sum += prob[j] = std::exp(x[j] - mx);
      for (int j = 0; j < c; ++j) prob[j] /= sum;
      loss -= std::log(std::max(prob[static_cast<int>(B(1).data[static_cast<std::size_t>(i)])], FLT_MIN));
    }
    loss_ = static_cast<float>(loss / m);
  }
}

void CaffeStyleNet::backward(LayerRef& l) {
  auto B = [&](int i) -> Buf& { return blobs_[static_cast<std::size_t>(l.bottoms[static_cast<std::size_t>(i)])]; };
  auto T = [&](int i) -> Buf& { return blobs_[static_cast<std::size_t>(l.tops[static_cast<std::size_t>(i)])]; };
  if (l.type == "Convolution") {
    conv_backward(l);
  } else if (l.type == "Pooling") {
    pool_backward(l);
  } else if (l.type == "InnerProduct") {
    const int m = l.bshapes[0][0], kk = count(l.bshapes[0]) / m, n = l.tshapes[0].back();
    Buf& W = params_[static_cast<std::size_t>(l.params[0])];
    gemm(true, false, n, kk, m, 1.f, T(0).diff.data(), n, B(0).data.data(), kk, 1.f, W.diff.data(), kk);
    float* db = params_[static_cast<std::size_t>(l.params[1])].diff.data();
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) db[j] += T(0).diff[static_cast<std::size_t>(i * n + j)];
    gemm(false, false, m, kk, n, 1.f, T(0).diff.data(), n, W.data.data(), kk, 0.f, B(0).diff.data(), kk);
  } else if (l.type == "ReLU") {
    for (std::size_t i = 0; i < B(0).data.size(); ++i) B(0).diff[i] = B(0).data[i] > 0 ? T(0).diff[i] : 0.f;
  } else if (l.type == "Split") {
    std::fill(B(0).diff.begin(), B(0).diff.end(), 0.f);
    for (std::size_t t = 0; t < l.tops.size(); ++t)
      for (std::size_t i = 0; i < B(0).diff.size(); ++i) B(0).diff[i] += T(static_cast<int>(t)).diff[i];
  } else if (l.type == "SoftmaxWithLoss") {
    const int m = l.bshapes[0][0], c = count(l.bshapes[0]) / m;
    for (int i = 0; i < m; ++i) {
      float* d = B(0).diff.data() + i * c;  // holds prob from forward
      d[static_cast<int>(B(1).data[static_cast<std::size_t>(i)])] -= 1.f;
      for (int j = 0; j < c; ++j) d[j] /= static_cast<float>(m);
    }
  }
}

std::vector<CaffeStyleNet::LayerTime> CaffeStyleNet::time_layers(int reps) {
  std::vector<LayerTime> t(layers_.size());
  using clock = std::chrono::steady_clock;
  for (int r = 0; r < reps; ++r) {
    for (auto& p : params_) std::fill(p.diff.begin(), p.diff.end(), 0.f);
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      const auto t0 = clock::now();
      forward(layers_[i]);
      t[i].forward += std::chrono::duration<double>(clock::now() - t0).count() / reps;
    }
    for (std::size_t i = layers_.size(); i-- > 0;) {
      const auto t0 = clock::now();
      backward(layers_[i]);
      t[i].backward += std::chrono::duration<double>(clock::now() - t0).count() / reps;
    }
  }
  return t;
}

float CaffeStyleNet::train_step(float lr, float momentum) {
  for (auto& p : params_) std::fill(p.diff.begin(), p.diff.end(), 0.f);
  for (auto& l : layers_) forward(l);
  for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) backward(*it);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    float* w = params_[i].data.data();
    float* g = params_[i].diff.data();
    float* h = history_[i].data.data();
    for (std::size_t k = 0; k < params_[i].data.size(); ++k) {
      h[k] = momentum * h[k] + lr * g[k];
      w[k] -= h[k];
    }
  }
  return loss_;
}

}  // namespace taihu::bench
