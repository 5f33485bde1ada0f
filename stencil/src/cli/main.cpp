// taihu-seismic: seismic forward modelling from the command line.
//
//   taihu-seismic run config.ini [--key value ...]    a run configuration (INI)
//   taihu-seismic run --vp marmousi.bin --shape 1601x401 --order z,x --spacing 7.5
//       --scale 1000 --f0 10 --tmax 3 --shots 0:12000:500 --out shots.segy --png
//   taihu-seismic run                                  the built-in layered model
//
//   taihu-seismic migrate config.ini [--data observed.segy] [--smooth 100]
//       [--checkpoint-memory MiB]                      reverse-time migration
//
// Writes <dir>/shots.segy (all shots), <dir>/model.png, <dir>/shot_NNN.png and optional
// wavefield snapshots; prints progress. Exit status 1 with a one-line error on bad input.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "cli/migrate_command.hpp"
#include "cli/run_command.hpp"
#include "taihu/arch/build_config.hpp"
#if TAIHU_HAVE_MPI
#include <mpi.h>
#endif
#include "taihu/arch/environment.hpp"
#include "taihu/arch/error.hpp"
#include "taihu/stencil/config.hpp"
#include "taihu/stencil/run_plan.hpp"

namespace {

const std::map<std::string, std::string>& flag_keys() {
  static const std::map<std::string, std::string> m = {
      {"vp", "model.vp"}, {"shape", "model.shape"}, {"order", "model.order"}, {"spacing", "model.spacing"},
      {"endian", "model.endian"}, {"scale", "model.scale"}, {"physics", "model.physics"}, {"rho", "model.rho"},
      {"epsilon", "model.epsilon"}, {"delta", "model.delta"}, {"space-order", "simulation.space_order"},
      {"dt", "simulation.dt"}, {"tmax", "simulation.tmax"}, {"f0", "simulation.f0"}, {"kernel", "simulation.kernel"},
      {"coefficients", "simulation.coefficients"},
      {"boundary", "simulation.boundary"}, {"width", "simulation.width"}, {"wavelet", "simulation.wavelet"},
      {"wavelet-dt", "simulation.wavelet_dt"}, {"shots", "acquisition.shots"},
      {"source-depth", "acquisition.source_depth"}, {"receivers", "acquisition.receivers"},
      {"receiver-depth", "acquisition.receiver_depth"}, {"dir", "output.dir"}, {"out", "output.segy"},
      {"snapshot-every", "output.snapshot_every"}, {"snapshot-shots", "output.snapshot_shots"},
      {"mpi", "simulation.mpi"}, {"geometry", "acquisition.geometry"},
      {"data", "migration.data"}, {"smooth", "migration.smooth"},
      {"checkpoint-memory", "migration.checkpoint_memory"}, {"mute", "migration.mute"}};
  return m;
}

void usage(FILE* f) {
  std::fprintf(f,
               "usage: taihu-seismic run [config.ini] [--flag value ...]\n"
               "       taihu-seismic migrate [config.ini] [--flag value ...]\n"
               "  run: seismic forward modelling (acoustic, variable density, VTI; CPML/sponge; SEG-Y + PNG + .npy).\n"
               "  migrate: reverse-time migration in the model smoothed by --smooth metres (default 100) of\n"
               "  --data observed.segy, or of data modelled in the true minus the smoothed model; the source\n"
               "  wavefield within --checkpoint-memory MiB (default: all snapshots kept).\n"
               "  Without a config or --vp they use the built-in layered model.\n"
               "flags (each sets the config key shown; a config file's values are overridden):\n");
  for (const auto& [flag, key] : flag_keys()) std::fprintf(f, "  --%-15s %s\n", flag.c_str(), key.c_str());
  std::fprintf(f,
               "  --png / --no-png     output.png\n"
               "  --free-surface       simulation.free_surface = true\n"
               "  --set section.key=value   any config key\n"
               "Keys and defaults: examples/seismic/README.md\n");
}

}  // namespace

namespace {
int run_cli(int argc, char** argv);

// MPI starts only under a launcher (mpirun/srun set these), so a plain run never pays
// for (or depends on) a singleton MPI initialisation.
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}
}  // namespace

int main(int argc, char** argv) {
#if TAIHU_HAVE_MPI
  if (!launched_by_mpi()) return run_cli(argc, argv);
  MPI_Init(&argc, &argv);
  const int rc = run_cli(argc, argv);
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (rc != 0 && ranks > 1) MPI_Abort(MPI_COMM_WORLD, rc);  // one rank's bad input stops them all
  MPI_Finalize();
  return rc;
#else
  return run_cli(argc, argv);
#endif
}

namespace {
int run_cli(int argc, char** argv) {
  try {
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
      usage(argc < 2 ? stderr : stdout);
      return argc < 2 ? 1 : 0;
    }
    const bool migrate = !std::strcmp(argv[1], "migrate");
    if (std::strcmp(argv[1], "run") != 0 && !migrate) {
      std::fprintf(stderr, "taihu-seismic: unknown command '%s'\n", argv[1]);
      usage(stderr);
      return 1;
    }
    taihu::arch::check_environment();  // the library would warn and go on; a tool rejects
    int i = 2;
    taihu::stencil::Config config = taihu::stencil::Config::parse_text("", "<command line>");
    if (i < argc && argv[i][0] != '-') config = taihu::stencil::Config::parse_file(argv[i++]);
    for (; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--png") { config.set("output.png", "true", arg); continue; }
      if (arg == "--no-png") { config.set("output.png", "false", arg); continue; }
      if (arg == "--free-surface") { config.set("simulation.free_surface", "true", arg); continue; }
      if (arg == "--help" || arg == "-h") { usage(stdout); return 0; }
      if (arg.rfind("--", 0) != 0 || i + 1 >= argc)
        throw taihu::Error("taihu-seismic: expected '--flag value', got '" + arg + "'" + (i + 1 >= argc ? " without a value" : ""));
      const std::string value = argv[++i];
      if (arg == "--set") {
        const auto eq = value.find('=');
        if (eq == std::string::npos) throw taihu::Error("taihu-seismic: --set needs section.key=value, got '" + value + "'");
        config.set(value.substr(0, eq), value.substr(eq + 1), "--set " + value.substr(0, eq));
        continue;
      }
      const auto it = flag_keys().find(arg.substr(2));
      if (it == flag_keys().end()) throw taihu::Error("taihu-seismic: unknown flag '" + arg + "' (see --help)");
      config.set(it->second, value, arg);
    }
    taihu::stencil::RunPlan plan = taihu::stencil::plan_from_config(config);
    if (migrate) return taihu::stencil::cli::migrate(config, std::move(plan));
    return taihu::stencil::cli::run_plan(plan);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
}  // namespace
