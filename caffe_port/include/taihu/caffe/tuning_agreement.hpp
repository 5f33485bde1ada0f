// How layers that time candidate algorithms (Convolution) agree on one choice across
// data-parallel ranks: each rank measures, the agreement combines the measurements so
// that every rank sees the same numbers, and so picks the same candidate (the averaged
// gradients then match bit for bit). The data-parallel runtime installs it for the
// lifetime of a DataParallel; a single process has none and picks on its own numbers.
#pragma once

#include <functional>
#include <span>

namespace taihu::caffe {

// Replaces seconds[i] (this rank's time for candidate i) with a value common to all
// ranks (DataParallel takes the slowest rank's). Collective: every rank calls it with
// the same number of candidates, in the same order: TRAIN-phase layers only, since
// only rank 0 runs the TEST nets.
using TuningAgreement = std::function<void(std::span<double> seconds)>;

void set_tuning_agreement(TuningAgreement agree);  // an empty function removes it
const TuningAgreement& tuning_agreement();

}  // namespace taihu::caffe
