#!/usr/bin/env bash
# gpu_bundle.clean_env_run: scripts/gpu-bundle end to end on a machine without a GPU.
#   check_gpu_bundle.sh SOURCE_DIR BUILD_DIR WORK_DIR
# Configures the kit's own CUDA-only build tree (configure only), packs the CUDA binaries
# BUILD_DIR already holds (--reuse: CI must not compile the CUDA code twice), moves the kit to another folder, runs KIT/run under `env -i`
# (PATH only) and checks: exit 0, every CUDA test binary reported its GPU tests skipped
# (unless a GPU is present), the kit is at most 64 MiB, every binary left its JSON, and
# every library a binary loads comes from the kit's lib/ or is one the GPU machine
# provides (glibc's core, libcuda, libcudart, libcublas*, libcudnn*).
# Exit 77 (ctest: skipped) when nvcc is absent or BUILD_DIR was configured without CUDA.
set -euo pipefail
src="$1" build="$2" work="$3"

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "nvcc not found: no CUDA kit to check"; exit 77
fi
if [ ! -x "$build/bin/test_sgemm_cuda" ] || [ ! -x "$build/bin/bench_gemm_cuda" ]; then
  echo "$build has no CUDA binaries (configured with TAIHU_WITH_CUDA=OFF, or not built)"; exit 77
fi

fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
# The kit's own CUDA-only configure (no MPI, Halide, protobuf...) still configures and
# defines the CUDA targets; building them again here would double CI's CUDA compile.
"$src/scripts/gpu-bundle" --build-dir "$work/configure" --configure-only "$work/unused"
"$src/scripts/gpu-bundle" --reuse "$build" "$work/made"
# Somewhere else, with the original gone: nothing may point back at where it was made.
cp -a "$work/made" "$work/kit"
rm -rf "$work/made"

set +e
env -i PATH=/usr/bin:/bin "$work/kit/run" "$work/out"
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "KIT/run exited $rc"

bytes=$(du -sb "$work/kit" | cut -f1)
[ "$bytes" -le $((64 * 1024 * 1024)) ] || fail "kit is $bytes bytes, over 64 MiB"

gpu=no
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then gpu=yes; fi
for b in "$work"/kit/bin/*; do
  name="${b##*/}"
  [ -s "$work/out/$name.json" ] || fail "no $name.json"
  [ -s "$work/out/$name.log" ] || fail "no $name.log"
  row=$(grep "^$name " "$work/out/summary.txt") || fail "$name missing from summary.txt"
  skipped=$(echo "$row" | awk '{print $6}')
  if [ "$gpu" = no ] && [ "${name#test_}" != "$name" ] && [ "$skipped" -eq 0 ]; then
    fail "$name reported no skipped test without a GPU: $row"
  fi
done
grep -q '^total: [0-9]* passed, 0 failed' "$work/out/summary.txt" || fail "summary total: $(tail -1 "$work/out/summary.txt")"

# Where each library came from (the kit's run wrote ldd.txt under env -i).
provided='^(linux-vdso\.so|ld-linux|libc\.so|libm\.so|libmvec\.so|libdl\.so|libpthread\.so|librt\.so|libresolv\.so|libutil\.so|libcuda\.so|libcudart\.so|libcublas(Lt)?\.so|libcudnn[a-z_]*\.so)'
outside=$(awk '$2 == "=>" {print $1, $3}' "$work/out/ldd.txt" | grep -Ev "$provided" | grep -v " $work/kit/lib/" || true)
[ -z "$outside" ] || fail "libraries loaded from outside the kit: $outside"

echo "gpu_bundle: kit $((bytes / 1024)) KiB, $(ls "$work/kit/bin" | wc -l) binaries, $(ls "$work/kit/lib" | wc -l) libraries; run OK"
