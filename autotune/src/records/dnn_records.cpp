// conv2d tuning results in dnn's record format (taihu/dnn/tuning_records.hpp): the
// problem becomes a dnn::ConvDesc (so the key is ConvDesc::str()), the schedule's
// algorithm a dnn entry, and dnn's format_tuning_record() writes the line.
#include <map>

#include "taihu/autotune/problem.hpp"
#include "taihu/autotune/records.hpp"
#include "taihu/dnn/conv.hpp"
#include "taihu/dnn/tuning_records.hpp"

namespace taihu::autotune {

std::string dnn_conv_line(const Record& r) {
  if (r.op != "conv2d" || !r.ok) return "";
  auto algo_it = r.schedule.find("algorithm");
  if (algo_it == r.schedule.end()) return "";
  std::map<std::string, std::int64_t> s;
  try {
    s = parse_shape(r.shape);
  } catch (const std::exception&) {
    return "";
  }
  for (const char* k : {"N", "C", "H", "W", "KO", "R", "S", "P"})
    if (!s.count(k)) return "";
  // conv2d.tdsl: stride 1, dilation 1, one group, the same padding on both axes.
  dnn::ConvDesc d;
  d.n = s["N"];
  d.c = s["C"];
  d.h = s["H"];
  d.w = s["W"];
  d.k = s["KO"];
  d.kh = s["R"];
  d.kw = s["S"];
  d.pad_h = d.pad_w = s["P"];
  try {
    d.validate();
  } catch (const std::exception&) {
    return "";
  }
  dnn::ConvAlgo algo;
  if (algo_it->second == "winograd") {  // conv2d.tdsl's derived winograd(direct): dnn's winograd_MxM
    auto m = r.schedule.find("winograd m");
    algo = m != r.schedule.end() && m->second == "2" ? dnn::ConvAlgo::winograd_2x2 : dnn::ConvAlgo::winograd_4x4;
  } else if (algo_it->second == "ocvec") {  // conv2d.tdsl's ocvec(direct): output channels in lanes, packed weights
    algo = d.kh == 1 && d.kw == 1 ? dnn::ConvAlgo::pointwise : dnn::conv_direct_family_entry(d, dnn::ConvDirection::forward);
  } else if (algo_it->second == "im2col") {
    algo = dnn::ConvAlgo::explicit_gemm;
  } else {  // a direct loop nest: dnn's direct kernel for this shape
    algo = dnn::conv_direct_family_entry(d, dnn::ConvDirection::forward);
  }
  if (!dnn::conv_supports(algo, d, dnn::ConvDirection::forward)) return "";
  return dnn::format_tuning_record(
      dnn::conv_tuning_record(d, dnn::ConvDirection::forward, r.isa, r.threads, algo, r.median_s));
}

}  // namespace taihu::autotune
