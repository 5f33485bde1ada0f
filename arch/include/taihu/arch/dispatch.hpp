// Runtime dispatch for one kernel family: an ordered implementation list (best first,
// portable reference last), as oneDNN's implementation lists and BLIS's config
// registry do. The first entry whose ISA level the process may use wins; the choice
// is made once and logged under TAIHU_VERBOSE=1.
//
//   static const ImplementationList<SgemmKernel> kernels("sgemm micro-kernel", {
//       {"avx512_32x12", Isa::avx512, &sgemm_avx512_32x12},
//       {"avx2_6x16",    Isa::avx2,   &sgemm_avx2_6x16},
//       {"generic_4x4",  Isa::generic, &sgemm_generic_4x4}});
//   kernels.chosen().impl(...);
#pragma once
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include "taihu/arch/error.hpp"
#include "taihu/arch/isa.hpp"
#include "taihu/arch/log.hpp"

namespace taihu::arch {

template <class Impl>
struct Implementation {
  std::string name;  // carries ISA and shape, e.g. "avx2_6x16"
  Isa isa = Isa::generic;
  Impl impl{};
};

template <class Impl>
class ImplementationList {
 public:
  ImplementationList(std::string family, std::initializer_list<Implementation<Impl>> entries)
      : family_(std::move(family)), entries_(entries) {}

  const std::string& family() const { return family_; }
  const std::vector<Implementation<Impl>>& entries() const { return entries_; }

  // The first entry usable at `level` (entries above it are skipped).
  const Implementation<Impl>& best_for(Isa level) const {
    for (const auto& e : entries_)
      if (static_cast<int>(e.isa) <= static_cast<int>(level)) return e;
    throw Error("taihu: no implementation of '" + family_ + "' runs at ISA level " +
                isa_name(level) + " (the list has no generic reference)");
  }

  // The entry for this process's active ISA, chosen once.
  const Implementation<Impl>& chosen() const {
    std::call_once(once_, [this] {
      const Isa level = active_isa();
      chosen_ = &best_for(level);
      log_verbose("dispatch: %s -> %s (isa level %s)", family_.c_str(), chosen_->name.c_str(),
                  isa_name(level));
    });
    return *chosen_;
  }

 private:
  std::string family_;
  std::vector<Implementation<Impl>> entries_;
  mutable std::once_flag once_;
  mutable const Implementation<Impl>* chosen_ = nullptr;
};

}  // namespace taihu::arch
