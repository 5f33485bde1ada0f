#!/usr/bin/env bash
# run: the GPU kit's driver, copied into the kit by scripts/gpu-bundle as DIR/run.
#
#   DIR/run OUT
#
# Runs every CUDA test (bin/test_*) and benchmark (bin/bench_*) of the kit and writes
# under OUT, per binary, NAME.log and NAME.json (gtest --gtest_output=json, benchmark
# --benchmark_out), plus ldd.txt (where each library came from), gpu.txt (nvidia-smi -L)
# and summary.txt (passed/failed/skipped per binary, and a total line). Exit status 0
# when nothing failed; a machine without a GPU passes with the GPU tests "skipped".
# Needs only bash, coreutils and the CUDA driver, runtime 13, cuBLAS and cuDNN 9: the
# kit's lib/ holds every other library and goes first on LD_LIBRARY_PATH. CUDA libraries
# the dynamic loader cannot find on its own are looked for in TAIHU_CUDA_LIB_DIRS
# (colon-separated), /usr/local/cuda*, /usr/local/nvidia and pip's nvidia-* wheels.
# Sized for one H100-class GPU in well under 8 minutes: benchmarks run 3 repetitions
# of at least 0.25 s each; TAIHU_KIT_TIMEOUT (seconds, default 240) caps each binary.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
if [ $# -ne 1 ]; then
  echo "usage: $0 OUT   (OUT: folder for logs, JSON and summary.txt)" >&2
  exit 2
fi
mkdir -p "$1" || exit 2
out="$(cd "$1" && pwd)"
timeout_s="${TAIHU_KIT_TIMEOUT:-240}"

# --- libraries: the kit's own first, then whatever CUDA library ldd cannot resolve ---
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
candidates=()
IFS=: read -r -a candidates <<<"${TAIHU_CUDA_LIB_DIRS:-}"
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
         /usr/local/cuda-13*/lib64 /usr/local/cuda-13*/lib /usr/local/nvidia/lib64 /usr/local/nvidia/lib \
         /opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib \
         /usr/local/lib/python3*/dist-packages/nvidia/*/lib /usr/local/lib/python3*/site-packages/nvidia/*/lib \
         /usr/lib/python3/dist-packages/nvidia/*/lib; do
  [ -d "$d" ] && candidates+=("$d")
done
unresolved() {  # the libraries ldd reports "not found" for any kit binary
  for b in "$here"/bin/*; do ldd "$b" 2>/dev/null; done | awk '$2 == "=>" && $3 == "not" {print $1}' | sort -u
}
add_dir_for() {  # soname: put the first candidate folder holding it on LD_LIBRARY_PATH
  local d
  for d in "${candidates[@]}"; do
    if [ -e "$d/$1" ]; then
      case ":$LD_LIBRARY_PATH:" in *":$d:"*) ;; *) LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d" ;; esac
      return 0
    fi
  done
  return 1
}
if command -v ldd >/dev/null; then
  for lib in $(unresolved); do add_dir_for "$lib" || true; done
  # The driver (libcuda.so.1) is dlopen'ed by the runtime, so ldd never names it.
  if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then add_dir_for libcuda.so.1 || true; fi
  # cuDNN 9 dlopens its engine libraries and NVRTC: when a library came from pip's
  # nvidia-* wheels, put their sibling folders on the path too.
  IFS=: read -r -a used <<<"$LD_LIBRARY_PATH"
  for d in "${used[@]}"; do
    case "$d" in
      */site-packages/nvidia/*/lib | */dist-packages/nvidia/*/lib)
        for s in "${d%/nvidia/*}"/nvidia/*/lib; do
          case ":$LD_LIBRARY_PATH:" in *":$s:"*) ;; *) LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$s" ;; esac
        done ;;
    esac
  done
  export LD_LIBRARY_PATH
  missing_libs="$(unresolved | tr '\n' ' ')"
  { echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    for b in "$here"/bin/*; do echo "== ${b##*/}"; ldd "$b"; done; } >"$out/ldd.txt" 2>&1
else
  missing_libs=""
  echo "ldd not available" >"$out/ldd.txt"
fi
if command -v nvidia-smi >/dev/null; then
  nvidia-smi -L >"$out/gpu.txt" 2>&1
else
  echo "nvidia-smi not found" >"$out/gpu.txt"
fi

# --- run ---
summary="$out/summary.txt"
: >"$summary"
total_pass=0 total_fail=0 total_skip=0
line() { printf '%-22s %4s passed %4s failed %4s skipped   exit %3s  %4s s  %s\n' "$@" | tee -a "$summary"; }
count() {  # count PATTERN FILE: the number a gtest summary line carries, 0 if none
  local n
  n="$(sed -n "s/$1/\\1/p" "$2" | tail -1)"
  echo "${n:-0}"
}

echo "taihu GPU kit: $(sed -n 's/^commit: //p' "$here/BUILD_INFO" 2>/dev/null), GPU: $(head -1 "$out/gpu.txt")" | tee -a "$summary"
[ -z "$missing_libs" ] || echo "libraries not found: $missing_libs(see ldd.txt)" | tee -a "$summary"

for b in "$here"/bin/test_*; do
  [ -x "$b" ] || continue
  name="${b##*/}"
  start=$(date +%s)
  timeout -k 10 "$timeout_s" "$b" --gtest_output="json:$out/$name.json" >"$out/$name.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  p=$(count '^\[  PASSED  \] \([0-9]*\) test.*' "$out/$name.log")
  f=$(count '^\[  FAILED  \] \([0-9]*\) tests\{0,1\}, listed below.*' "$out/$name.log")
  s=$(count '^\[  SKIPPED \] \([0-9]*\) tests\{0,1\}, listed below.*' "$out/$name.log")
  note=""
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1
    note="did not finish (exit $rc$([ "$rc" -eq 124 ] && echo ", timed out after ${timeout_s} s"))"
  fi
  line "$name" "$p" "$f" "$s" "$rc" "$secs" "$note"
  total_pass=$((total_pass + p)) total_fail=$((total_fail + f)) total_skip=$((total_skip + s))
done

# Benchmarks: one row per benchmark run. A row that stopped on "no CUDA device" is
# skipped; any other error row, or a non-zero exit, failed. bench_stencil also holds the
# CPU rows: only its CUDA rows run here (they exist only when a GPU is present).
for b in "$here"/bin/bench_*; do
  [ -x "$b" ] || continue
  name="${b##*/}"
  args=(--benchmark_out="$out/$name.json" --benchmark_out_format=json
        --benchmark_repetitions=3 --benchmark_min_time=0.25)
  case "$name" in
    bench_stencil) args+=(--benchmark_filter=cuda) ;;
  esac
  start=$(date +%s)
  timeout -k 10 "$timeout_s" "$b" "${args[@]}" >"$out/$name.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  json="$out/$name.json"
  rows=0 errors=0 nodev=0
  if [ -s "$json" ]; then
    rows=$(grep -c '"run_type": "iteration"' "$json")
    errors=$(grep -c '"error_occurred": true' "$json")
    nodev=$(grep -c '"error_message": "no CUDA device"' "$json")
  fi
  p=$((rows - errors)) f=$((errors - nodev)) s=$nodev
  note=""
  if [ "$rows" -eq 0 ] && [ "$rc" -eq 0 ]; then
    s=1 note="no CUDA rows registered (no CUDA device)"
    # Google Benchmark writes no file when no benchmark matches: say so in one.
    [ -s "$json" ] || printf '{"benchmarks": [], "note": "%s"}\n' "$note" >"$json"
  fi
  if [ "$rc" -ne 0 ]; then
    f=$((f + 1))
    note="did not finish (exit $rc$([ "$rc" -eq 124 ] && echo ", timed out after ${timeout_s} s"))"
  fi
  line "$name" "$p" "$f" "$s" "$rc" "$secs" "$note"
  total_pass=$((total_pass + p)) total_fail=$((total_fail + f)) total_skip=$((total_skip + s))
done

echo "total: $total_pass passed, $total_fail failed, $total_skip skipped" | tee -a "$summary"
[ "$total_fail" -eq 0 ]
