// Caffe's LSTM (lstm.hpp), forward and backward through time.
// Forward: one GEMM projects all T steps' inputs (x W_xc^T + b_c) into the gate
// workspace; per step one GEMM adds (cont * h_{t-1}) W_hc^T for all four gates, then the
// LSTM unit (activations, cell, hidden) runs over [N][H] in parallel.
// Backward: per step the unit's backward and one GEMM for dh_{t-1}; afterwards one GEMM
// each for dW_xc, dW_hc (over all steps at once) and dx, and column sums for db_c.
#include "taihu/dnn/lstm.hpp"

#include <algorithm>
#include <vector>

#include "ops/check.hpp"
#include "ops/gemm_t.hpp"
#include "core/parallel.hpp"
#include "ops/vec_math.hpp"

namespace taihu::dnn {
namespace {

template <class T>
T sigmoid(T v) {
  return ops::sigmoid_approx(v);
}

// hc[n][:] = cont[n] * h_prev[n][:] (zeros when h_prev is null).
template <class T>
void gated_previous(index_t batch, index_t hidden, const T* cont, const T* h_prev, T* hc) {
  for (index_t n = 0; n < batch; ++n)
    for (index_t j = 0; j < hidden; ++j)
      hc[n * hidden + j] = h_prev ? cont[n] * h_prev[n * hidden + j] : T(0);
}

}  // namespace

void LstmShape::validate(const char* what) const {
  ops::check_positive(what, "steps", steps);
  ops::check_positive(what, "batch", batch);
  ops::check_positive(what, "input", input);
  ops::check_positive(what, "hidden", hidden);
}

template <class T>
void lstm_forward(const LstmShape& s, const LstmWeights<T>& w, const T* x, const T* cont,
                  const T* h0, const T* c0, T* h, T* workspace, T* h_last, T* c_last) {
  constexpr const char* what = "lstm_forward";
  s.validate(what);
  ops::check_pointers(what, 1,
                      {{"w.w_xc", w.w_xc},
                       {"w.b_c", w.b_c},
                       {"w.w_hc", w.w_hc},
                       {"x", x},
                       {"cont", cont},
                       {"h", h},
                       {"workspace", workspace}});
  const index_t T_ = s.steps, N = s.batch, I = s.input, H = s.hidden, G = 4 * H;
  T* gates = workspace;               // [T][N][4H]
  T* cells = workspace + T_ * N * G;  // [T][N][H]
  // Input projection for every step: gates = x W_xc^T + b_c.
  ops::parallel_tasks(T_ * N, std::max<index_t>(1, 16384 / G),
                      [&](index_t r) { std::copy(w.b_c, w.b_c + G, gates + r * G); });
  ops::gemm_rm<T>(false, true, T_ * N, G, I, T(1), x, I, w.w_xc, I, T(1), gates, G);
  std::vector<T> hc(static_cast<std::size_t>(N * H)), zeros(static_cast<std::size_t>(H), T(0));
  for (index_t t = 0; t < T_; ++t) {
    const T* h_prev = t > 0 ? h + (t - 1) * N * H : h0;
    const T* c_prev = t > 0 ? cells + (t - 1) * N * H : c0;
    const T* ct = cont + t * N;
    T* gt = gates + t * N * G;
    if (h_prev != nullptr) {
      gated_previous(N, H, ct, h_prev, hc.data());
      ops::gemm_rm<T>(false, true, N, G, H, T(1), hc.data(), H, w.w_hc, H, T(1), gt, G);
    }
    T* cell_t = cells + t * N * H;
    T* h_t = h + t * N * H;
    ops::parallel_tasks(N, std::max<index_t>(1, 4096 / H), [&](index_t n) {
      // Straight-line vector loop over the H units of stream n (c_prev null: zeros).
      T* gi = gt + n * G;
      T* gf = gi + H;
      T* go = gi + 2 * H;
      T* gg = gi + 3 * H;
      const T* cp = c_prev ? c_prev + n * H : zeros.data();
      T* cn = cell_t + n * H;
      T* hn = h_t + n * H;
      const T keep = ct[n];
#pragma omp simd
      for (index_t j = 0; j < H; ++j) {
        const T i_ = sigmoid(gi[j]), f = sigmoid(gf[j]), o = sigmoid(go[j]);
        const T g = ops::tanh_approx(gg[j]);
        gi[j] = i_;
        gf[j] = f;
        go[j] = o;
        gg[j] = g;
        const T c = keep * f * cp[j] + i_ * g;
        cn[j] = c;
        hn[j] = o * ops::tanh_approx(c);
      }
    });
  }
  if (h_last) std::copy(h + (T_ - 1) * N * H, h + T_ * N * H, h_last);
  if (c_last) std::copy(cells + (T_ - 1) * N * H, cells + T_ * N * H, c_last);
}

template <class T>
void lstm_backward(const LstmShape& s, const LstmWeights<T>& w, const T* x, const T* cont,
                   const T* h0, const T* c0, const T* h, const T* workspace, const T* dh,
                   const T* dh_last, const T* dc_last, T* dx, const LstmWeightGrads<T>& dw, T* dh0,
                   T* dc0, bool accumulate) {
  constexpr const char* what = "lstm_backward";
  s.validate(what);
  ops::check_pointers(what, 1,
                      {{"w.w_xc", w.w_xc},
                       {"w.w_hc", w.w_hc},
                       {"x", x},
                       {"cont", cont},
                       {"h", h},
                       {"workspace", workspace},
                       {"dh", dh}});
  const index_t T_ = s.steps, N = s.batch, I = s.input, H = s.hidden, G = 4 * H;
  const T* gates = workspace;
  const T* cells = workspace + T_ * N * G;
  std::vector<T> dgates(static_cast<std::size_t>(T_ * N * G));
  std::vector<T> dh_next(static_cast<std::size_t>(N * H), T(0));
  std::vector<T> dc_next(dh_next.size(), T(0));
  std::vector<T> dhc(dh_next.size()), zeros(static_cast<std::size_t>(H), T(0));
  if (dh_last) std::copy(dh_last, dh_last + N * H, dh_next.begin());
  if (dc_last) std::copy(dc_last, dc_last + N * H, dc_next.begin());
  for (index_t t = T_ - 1; t >= 0; --t) {
    const T* c_prev = t > 0 ? cells + (t - 1) * N * H : c0;
    const T* ct = cont + t * N;
    const T* gt = gates + t * N * G;
    const T* cell_t = cells + t * N * H;
    const T* dh_t = dh + t * N * H;
    T* dg = dgates.data() + t * N * G;
    ops::parallel_tasks(N, std::max<index_t>(1, 4096 / H), [&](index_t n) {
      const T* gi = gt + n * G;
      const T* gf = gi + H;
      const T* go = gi + 2 * H;
      const T* gg = gi + 3 * H;
      T* di = dg + n * G;
      T* df = di + H;
      T* dout = di + 2 * H;
      T* dgg = di + 3 * H;
      const T* cp = c_prev ? c_prev + n * H : zeros.data();
      const T* cn = cell_t + n * H;
      const T* dhn = dh_t + n * H;
      const T* dh_carry = dh_next.data() + n * H;
      T* dc_carry = dc_next.data() + n * H;
      const T keep = ct[n];
#pragma omp simd
      for (index_t j = 0; j < H; ++j) {
        const T i_ = gi[j], f = gf[j], o = go[j], g = gg[j];
        const T tanh_c = ops::tanh_approx(cn[j]);
        const T dh_total = dhn[j] + dh_carry[j];
        const T dc_total = dc_carry[j] + dh_total * o * (T(1) - tanh_c * tanh_c);
        dc_carry[j] = keep * dc_total * f;
        di[j] = dc_total * g * i_ * (T(1) - i_);
        df[j] = keep * dc_total * cp[j] * f * (T(1) - f);
        dout[j] = dh_total * tanh_c * o * (T(1) - o);
        dgg[j] = dc_total * i_ * (T(1) - g * g);
      }
    });
    // dh_{t-1} = cont_t * (dgates_t W_hc)
    ops::gemm_rm<T>(false, false, N, H, G, T(1), dg, G, w.w_hc, H, T(0), dhc.data(), H);
    for (index_t n = 0; n < N; ++n)
      for (index_t j = 0; j < H; ++j) dh_next[n * H + j] = ct[n] * dhc[n * H + j];
  }
  if (dh0) std::copy(dh_next.begin(), dh_next.end(), dh0);
  if (dc0) std::copy(dc_next.begin(), dc_next.end(), dc0);
  const T beta = accumulate ? T(1) : T(0);
  if (dw.w_xc)  // [4H][I] (+)= dgates^T x over all T*N rows
    ops::gemm_rm<T>(true, false, G, I, T_ * N, T(1), dgates.data(), G, x, I, beta, dw.w_xc, I);
  if (dw.b_c) ops::column_sums<T>(T_ * N, G, dgates.data(), dw.b_c, accumulate);
  if (dw.w_hc) {  // [4H][H] (+)= dgates^T (cont * h_prev) over all steps
    std::vector<T> hc_all(static_cast<std::size_t>(T_ * N * H));
    for (index_t t = 0; t < T_; ++t)
      gated_previous(N, H, cont + t * N, t > 0 ? h + (t - 1) * N * H : h0,
                     hc_all.data() + t * N * H);
    ops::gemm_rm<T>(true, false, G, H, T_ * N, T(1), dgates.data(), G, hc_all.data(), H, beta,
                    dw.w_hc, H);
  }
  if (dx)  // [T*N][I] = dgates W_xc
    ops::gemm_rm<T>(false, false, T_ * N, I, G, T(1), dgates.data(), G, w.w_xc, I, T(0), dx, I);
}

template void lstm_forward<float>(const LstmShape&, const LstmWeights<float>&, const float*,
                                  const float*, const float*, const float*, float*, float*, float*,
                                  float*);
template void lstm_forward<double>(const LstmShape&, const LstmWeights<double>&, const double*,
                                   const double*, const double*, const double*, double*, double*,
                                   double*, double*);
template void lstm_backward<float>(const LstmShape&, const LstmWeights<float>&, const float*,
                                   const float*, const float*, const float*, const float*,
                                   const float*, const float*, const float*, const float*, float*,
                                   const LstmWeightGrads<float>&, float*, float*, bool);
template void lstm_backward<double>(const LstmShape&, const LstmWeights<double>&, const double*,
                                    const double*, const double*, const double*, const double*,
                                    const double*, const double*, const double*, const double*,
                                    double*, const LstmWeightGrads<double>&, double*, double*,
                                    bool);

}  // namespace taihu::dnn
