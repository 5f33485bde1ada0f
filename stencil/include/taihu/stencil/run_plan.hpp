// From a run configuration (config.hpp) to what a run needs: the model, the
// propagation options and the shots. The taihu-seismic CLI is a thin loop around this.
// Every key is documented in examples/seismic/README.md; unknown keys are errors.
#pragma once
#include <string>
#include <vector>

#include "taihu/stencil/config.hpp"
#include "taihu/stencil/propagator.hpp"

namespace taihu::stencil {

struct OutputPlan {
  std::string dir = "seismic_out";
  std::string segy = "shots.segy";  // relative to dir
  bool png = true;                  // model, one gather per shot, snapshots
  int snapshot_every = 0;           // steps between wavefield snapshots (0: none): .npy, and .png with png
  std::vector<int> snapshot_shots{1};  // 1-based shot numbers that write snapshots
};

// How mpirun's ranks share a survey: whole shots dealt round-robin (each rank runs its
// shots alone; resumable, bit-identical for any rank count), or every shot decomposed
// over all ranks along the slow axis (for shots too big for one process).
enum class MpiMode { shots, domain };

struct RunPlan {
  Model model;
  Options options;
  std::vector<Shot> shots;
  OutputPlan output;
  MpiMode mpi = MpiMode::shots;
  // acquisition.geometry: the SEG-Y file whose trace headers gave the shots, the
  // sampling and the output's headers ("" when the geometry came from the keys).
  std::string geometry;
  std::string model_description;
};

// Throws taihu::Error naming file:line and key for anything missing or malformed.
RunPlan plan_from_config(const Config& config);

// The keys plan_from_config understands (for Config::check_known and --help).
const std::vector<std::string>& known_config_keys();

}  // namespace taihu::stencil
