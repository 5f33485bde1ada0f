// Caffe's LSTM layer (the unrolled RecurrentLayer net with LSTMUnit), forward and
// backward through time. Sizes: T steps, N streams (batch), I inputs, H hidden units.
//   x [T][N][I], cont [T][N] (0 at the first step of a sequence: resets h and c),
//   w_xc [4H][I], b_c [4H], w_hc [4H][H]; gate order i, f, o, g (Caffe's).
//   pre_t  = x_t w_xc^T + b_c + (cont_t * h_{t-1}) w_hc^T        [N][4H]
//   i, f, o = sigmoid(pre[i, f, o]), g = tanh(pre[g])
//   c_t = cont_t * f * c_{t-1} + i * g,   h_t = o * tanh(c_t)
// The input projection for all T steps is one GEMM; the recurrent part one GEMM per
// step for all four gates; both through taihu::gemm.
// h0, c0 [N][H] may be null (zeros, Caffe without expose_hidden).
#pragma once
#include "taihu/dnn/ops_common.hpp"

namespace taihu::dnn {

struct LstmShape {
  index_t steps = 1, batch = 1, input = 1, hidden = 1;
  void validate(const char* what) const;
  // Elements of the workspace forward fills and backward reads: the activated gates
  // [T][N][4H] and the cell states [T][N][H].
  index_t workspace_elements() const { return steps * batch * 5 * hidden; }
};

template <class T>
struct LstmWeights {
  const T* w_xc = nullptr;  // [4H][I]
  const T* b_c = nullptr;   // [4H]
  const T* w_hc = nullptr;  // [4H][H]
};

template <class T>
struct LstmWeightGrads {
  T* w_xc = nullptr;  // each may be null to skip it
  T* b_c = nullptr;
  T* w_hc = nullptr;
};

// h [T][N][H] = the hidden states (Caffe's top). h_last, c_last [N][H] may be null.
template <class T>
void lstm_forward(const LstmShape& s, const LstmWeights<T>& w, const T* x, const T* cont,
                  const T* h0, const T* c0, T* h, T* workspace, T* h_last, T* c_last);

// dh [T][N][H] is the top diff; dh_last, dc_last [N][H] optional extra diffs on the final
// states (null = 0). dx [T][N][I], dh0, dc0 [N][H] may be null. Weight gradients
// accumulate when `accumulate`. x, cont, h0, c0, h and workspace are the forward's.
template <class T>
void lstm_backward(const LstmShape& s, const LstmWeights<T>& w, const T* x, const T* cont,
                   const T* h0, const T* c0, const T* h, const T* workspace, const T* dh,
                   const T* dh_last, const T* dc_last, T* dx, const LstmWeightGrads<T>& dw, T* dh0,
                   T* dc0, bool accumulate);

}  // namespace taihu::dnn
