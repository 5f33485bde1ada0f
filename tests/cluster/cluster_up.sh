#!/usr/bin/env bash
# tests/cluster/cluster_up.sh <scripts/cluster> <up args...>: the fixture's set-up. Exit 77
# (skipped) where namespaces cannot be made here, recording why for the tests that
# follow; any other failure of `up` fails.
set -uo pipefail
cluster=$1; shift
skip=${TAIHU_CLUSTER_SKIP_FILE:-/tmp/taihu-cluster-skip}
rm -f "$skip"
out=$("$cluster" up "$@" 2>&1)
rc=$?
echo "$out"
if [ $rc = 3 ]; then
  echo "$out" | tail -1 >"$skip"
  echo "SKIP: $(cat "$skip")"
  exit 77
fi
exit $rc
