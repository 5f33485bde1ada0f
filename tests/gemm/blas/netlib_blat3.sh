#!/bin/sh
# netlib's level-3 BLAS test programs (Debian's libblas-test) with libtaihu_blas.so
# preloaded: xblat3s/xblat3d (Fortran: SGEMM/DGEMM error exits through the program's
# own XERBLA, and the computational checks), and, where the reference BLAS is installed
# (its libblas.so.3 defines the CBLAS globals the programs need), xscblat3/xdcblat3
# (cblas_sgemm/cblas_dgemm error exits through cblas_xerbla, both layouts). Only the
# GEMM routines are switched on in the input files: the others are the system BLAS's.
# Usage: netlib_blat3.sh LIBTAIHU_BLAS. Exit 0: all GEMM lines passed; 77: libblas-test
# is not installed (ctest SKIP_RETURN_CODE); 1: a failure (the summary is printed).
set -u
lib=$1
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
dir=/usr/lib/$multiarch/blas
if [ ! -x "$dir/xblat3s" ] || [ ! -x "$dir/xblat3d" ]; then
  echo "SKIPPED: libblas-test is not installed ($dir/xblat3s); apt-get install libblas-test"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
status=0
# Keeps only the GEMM routine's line switched on ("SGEMM  T ..."); others get F.
only_gemm() { sed -E "/^(cblas_)?[SDsd][a-zA-Z0-9]+ +T /{/(GEMM|gemm)/!s/ T / F /}" "$1"; }
check() {  # check OUTPUT PATTERN...
  out=$1
  shift
  for pattern in "$@"; do
    if ! grep -q "$pattern" "$out"; then
      echo "FAILED: '$pattern' not in $out"
      status=1
    fi
  done
  grep -i "gemm" "$out"
  if grep -q "\*\*\*\*\*" "$out"; then
    grep "\*\*\*\*\*" "$out" | head -20
    status=1
  fi
}
for p in s d; do
  P=$(echo $p | tr sd SD)
  only_gemm "$dir/${p}blat3.in" > ${p}blat3.in
  LD_PRELOAD=$lib "$dir/xblat3$p" < ${p}blat3.in > xblat3$p.log 2>&1
  echo "xblat3$p (exit $?):"
  check ${p}blat3.out "${P}GEMM  PASSED THE TESTS OF ERROR-EXITS" "${P}GEMM  PASSED THE COMPUTATIONAL TESTS"
done
if [ -e "$dir/libblas.so.3" ] && [ -x "$dir/xscblat3" ]; then
  for p in s d; do
    only_gemm "$dir/${p}in3" > ${p}in3
    LD_LIBRARY_PATH=$dir LD_PRELOAD=$lib "$dir/x${p}cblat3" < ${p}in3 > x${p}cblat3.out 2>&1
    echo "x${p}cblat3 (exit $?):"
    check x${p}cblat3.out "cblas_${p}gemm  PASSED THE TESTS OF ERROR-EXITS" \
      "cblas_${p}gemm  PASSED THE COLUMN-MAJOR COMPUTATIONAL TESTS" \
      "cblas_${p}gemm  PASSED THE ROW-MAJOR    COMPUTATIONAL TESTS"
  done
else
  echo "note: reference BLAS ($dir/libblas.so.3, package libblas3) not installed: CBLAS tests not run"
fi
[ $status -eq 0 ] && echo "netlib GEMM tests passed with $lib preloaded"
exit $status
