// ConvDesc: output sizes, validation, benchdnn-style problem strings; ConvAlgo names.
#include <cctype>
#include <map>
#include <string>

#include "taihu/arch/error.hpp"
#include "taihu/dnn/conv.hpp"

namespace taihu::dnn {

index_t ConvDesc::out_h() const { return (h + 2 * pad_h - dil_h * (kh - 1) - 1) / stride_h + 1; }
index_t ConvDesc::out_w() const { return (w + 2 * pad_w - dil_w * (kw - 1) - 1) / stride_w + 1; }

double ConvDesc::forward_flops() const {
  return 2.0 * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(out_h()) *
         static_cast<double>(out_w()) * static_cast<double>(c / groups) *
         static_cast<double>(kh * kw);
}

namespace {
[[noreturn]] void bad_field(const std::string& field, index_t value, const std::string& rule) {
  throw Error("taihu: conv: " + field + " = " + std::to_string(value) + " " + rule);
}
}  // namespace

void ConvDesc::validate() const {
  const std::pair<const char*, index_t> positive[] = {
      {"n (mb)", n},   {"c (ic)", c},      {"h (ih)", h},         {"w (iw)", w},
      {"k (oc)", k},   {"kh", kh},         {"kw", kw},            {"stride_h", stride_h},
      {"stride_w", stride_w}, {"dil_h", dil_h}, {"dil_w", dil_w}, {"groups", groups}};
  for (const auto& [name, v] : positive)
    if (v < 1) bad_field(name, v, "must be >= 1");
  if (pad_h < 0) bad_field("pad_h", pad_h, "must be >= 0");
  if (pad_w < 0) bad_field("pad_w", pad_w, "must be >= 0");
  if (c % groups != 0) bad_field("groups", groups, "does not divide c = " + std::to_string(c));
  if (k % groups != 0) bad_field("groups", groups, "does not divide k = " + std::to_string(k));
  if (h + 2 * pad_h < dil_h * (kh - 1) + 1)
    bad_field("kh", kh, "(dilated " + std::to_string(dil_h * (kh - 1) + 1) +
                            ") exceeds the padded input height " + std::to_string(h + 2 * pad_h));
  if (w + 2 * pad_w < dil_w * (kw - 1) + 1)
    bad_field("kw", kw, "(dilated " + std::to_string(dil_w * (kw - 1) + 1) +
                            ") exceeds the padded input width " + std::to_string(w + 2 * pad_w));
}

std::string ConvDesc::str() const {
  std::string s;
  auto put = [&s](const char* name, index_t v) { s += name + std::to_string(v); };
  if (groups != 1) put("g", groups);
  put("mb", n);
  put("ic", c);
  put("ih", h);
  if (w != h) put("iw", w);
  put("oc", k);
  put("oh", out_h());
  if (out_w() != out_h()) put("ow", out_w());
  put("kh", kh);
  if (kw != kh) put("kw", kw);
  if (stride_h != 1) put("sh", stride_h);
  if (stride_w != stride_h) put("sw", stride_w);
  if (pad_h != 0) put("ph", pad_h);
  if (pad_w != pad_h) put("pw", pad_w);
  if (dil_h != 1) put("dh", dil_h - 1);
  if (dil_w != dil_h) put("dw", dil_w - 1);
  return s;
}

ConvDesc ConvDesc::parse(const std::string& problem) {
  std::map<std::string, index_t> f;
  std::size_t i = 0;
  const std::string where = "taihu: conv problem '" + problem + "'";
  while (i < problem.size()) {
    if (problem[i] == '_') {
      ++i;
      continue;
    }
    const std::size_t name_at = i;
    while (i < problem.size() && std::isalpha(static_cast<unsigned char>(problem[i]))) ++i;
    const std::string name = problem.substr(name_at, i - name_at);
    if (name == "n") break;  // benchdnn's trailing problem name: n"..." or n<name>
    const std::size_t num_at = i;
    while (i < problem.size() && std::isdigit(static_cast<unsigned char>(problem[i]))) ++i;
    if (name.empty() || num_at == i)
      throw Error(where + ": expected <field><number> at position " + std::to_string(name_at));
    static const char* const known[] = {"g",  "mb", "ic", "ih", "iw", "oc", "oh", "ow",
                                        "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw"};
    bool ok = false;
    for (const char* k : known) ok = ok || name == k;
    if (!ok) throw Error(where + ": unknown field '" + name + "' at position " + std::to_string(name_at));
    if (f.count(name)) throw Error(where + ": field '" + name + "' given twice");
    f[name] = std::stoll(problem.substr(num_at, i - num_at));
  }
  auto get = [&f](const char* a, const char* b, index_t fallback) {
    if (f.count(a)) return f[a];
    if (b != nullptr && f.count(b)) return f[b];
    return fallback;
  };
  for (const char* req : {"ic", "oc"})
    if (!f.count(req)) throw Error(where + ": missing field '" + req + "'");
  if (!f.count("ih") && !f.count("iw")) throw Error(where + ": missing field 'ih'");
  if (!f.count("kh") && !f.count("kw")) throw Error(where + ": missing field 'kh'");
  ConvDesc d;
  d.groups = get("g", nullptr, 1);
  d.n = get("mb", nullptr, 1);
  d.c = f["ic"];
  d.k = f["oc"];
  d.h = get("ih", "iw", 0);
  d.w = get("iw", "ih", 0);
  d.kh = get("kh", "kw", 0);
  d.kw = get("kw", "kh", 0);
  d.stride_h = get("sh", nullptr, 1);
  d.stride_w = get("sw", nullptr, d.stride_h);
  d.pad_h = get("ph", nullptr, 0);
  d.pad_w = get("pw", nullptr, d.pad_h);
  d.dil_h = get("dh", nullptr, 0) + 1;
  d.dil_w = get("dw", nullptr, d.dil_h - 1) + 1;
  d.validate();
  if (f.count("oh") && f["oh"] != d.out_h())
    throw Error(where + ": oh" + std::to_string(f["oh"]) + " but the other fields give oh" +
                std::to_string(d.out_h()));
  if (f.count("ow") && f["ow"] != d.out_w())
    throw Error(where + ": ow" + std::to_string(f["ow"]) + " but the other fields give ow" +
                std::to_string(d.out_w()));
  return d;
}

const char* to_string(ConvAlgo algo) {
  switch (algo) {
    case ConvAlgo::automatic: return "auto";
    case ConvAlgo::explicit_gemm: return "explicit_gemm";
    case ConvAlgo::implicit_gemm: return "implicit_gemm";
    case ConvAlgo::winograd_2x2: return "winograd_2x2";
    case ConvAlgo::winograd_4x4: return "winograd_4x4";
    case ConvAlgo::direct: return "direct";
    case ConvAlgo::reference: return "reference";
    case ConvAlgo::pointwise: return "pointwise";
    case ConvAlgo::pointwise_blocked: return "pointwise_blocked";
    case ConvAlgo::pointwise_strided: return "pointwise_strided";
    case ConvAlgo::first_layer: return "first_layer";
    case ConvAlgo::minibatch: return "minibatch";
    case ConvAlgo::direct_input_lanes: return "direct_input_lanes";
    case ConvAlgo::direct_weight_lanes: return "direct_weight_lanes";
  }
  return "?";
}

const char* to_string(ConvDirection dir) {
  switch (dir) {
    case ConvDirection::forward: return "forward";
    case ConvDirection::backward_data: return "backward_data";
    case ConvDirection::backward_weights: return "backward_weights";
  }
  return "?";
}

ConvAlgo parse_conv_algo(const std::string& name) {
  if (name == "automatic") return ConvAlgo::automatic;
  if (name == "batch") return ConvAlgo::minibatch;  // caffe_port's snapshots before the move
  std::string known;
  for (ConvAlgo a : {ConvAlgo::automatic, ConvAlgo::explicit_gemm, ConvAlgo::implicit_gemm,
                     ConvAlgo::winograd_2x2, ConvAlgo::winograd_4x4, ConvAlgo::direct,
                     ConvAlgo::reference, ConvAlgo::pointwise, ConvAlgo::pointwise_blocked,
                     ConvAlgo::pointwise_strided, ConvAlgo::first_layer, ConvAlgo::minibatch,
                     ConvAlgo::direct_input_lanes, ConvAlgo::direct_weight_lanes}) {
    if (name == to_string(a)) return a;
    known += known.empty() ? "" : ", ";
    known += to_string(a);
  }
  throw Error("taihu: unknown convolution algorithm '" + name + "' (expected one of " + known + ")");
}

}  // namespace taihu::dnn
