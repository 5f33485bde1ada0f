// oneDNN convolution anchor: one primitive per (problem, direction, algorithm) with
// format_tag::any (oneDNN picks its blocked layouts; inputs are reordered into them
// once, outside the timed call), as benchdnn measures it. Compiled to a stub that
// reports "not available" when oneDNN is absent.
#pragma once
#include <memory>
#include <string>

#include "taihu/dnn/conv.hpp"

namespace taihu::bench {

class OnednnConv {
 public:
  // algo: "auto" | "direct" | "winograd". available() is false when oneDNN lacks the
  // combination (e.g. Winograd without AVX-512) or is not linked.
  OnednnConv(const dnn::ConvDesc& d, dnn::ConvDirection dir, const std::string& algo);
  ~OnednnConv();
  bool available() const;
  std::string implementation() const;  // oneDNN's impl_info_str, e.g. "jit:avx2"
  // The activation layouts the primitive picked (x or dx -> y or dy), in taihu's
  // spelling: "nchw", "nChw8c", "nchw->nChw8c", or oneDNN's blocking when other.
  std::string layout() const;
  void run();                         // one execution + wait

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace taihu::bench
