#!/bin/sh
# ctest bench_autotune.dnn_suite_smoke: a CI-size run of `bench_autotune --suite dnn`
# (two small layers of bench_conv's set, 3 s each, no TVM), then the check that a dnn
# tuning record the suite wrote is the one dnn's Convolution picks: its automatic choice,
# with TAIHU_VERBOSE, must name the record's entry for that layer "(tuning record ...)".
# And a bad --layers name must fail, naming it.
#   dnn_suite_smoke.sh BENCH_AUTOTUNE
set -eu
bench=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Two threads: dnn runs a convolution below 1 MFLOP (LeNet conv1 at batch 1) on one thread
# and looks its record up for 1 thread (dnn::conv_call_threads), so the suite tunes, times
# and keys that layer at 1 thread (a 2-thread record of it would never be read); LeNet
# conv2 (3.2 MFLOP) runs, and is keyed, at 2.
"$bench" --suite dnn --budget-per-layer 3 --layers lenet_conv1,lenet_conv2 --batch 1 --threads 2 --anchors none \
  --log "$dir/tune.jsonl" --csv "$dir/suite.csv" --dnn-records "$dir/records.jsonl" >"$dir/out.txt"
cat "$dir/out.txt"
grep -q '^tuned >= dnn best on [0-9]*/2 layers' "$dir/out.txt" || fail "no summary line over 2 layers"
[ "$(wc -l <"$dir/suite.csv")" -eq 3 ] || fail "the CSV should have a header and 2 rows"
[ "$(wc -l <"$dir/records.jsonl")" -eq 2 ] || fail "expected one dnn record per layer in records.jsonl"

record_field() {  # record_field KEY FIELD: a field of the record for KEY, as dnn's reader sees it
  grep "\"key\":\"$1\"" "$dir/records.jsonl" | sed "s/.*\"$2\":\"\{0,1\}\([a-z0-9_]*\).*/\1/"
}
[ "$(record_field mb1ic20ih12oc50oh8kh5 threads)" = 2 ] ||
  fail "LeNet conv2's record is keyed for $(record_field mb1ic20ih12oc50oh8kh5 threads) threads; dnn runs it on 2"
algo=$(record_field mb1ic1ih28oc20oh24kh5 algo)
threads=$(record_field mb1ic1ih28oc20oh24kh5 threads)
[ -n "$algo" ] || fail "no record for mb1ic1ih28oc20oh24kh5"
[ "$threads" = 1 ] || fail "LeNet conv1's record is keyed for $threads threads; dnn runs it, and looks it up, on 1"
# dnn at the suite's 2 threads must find it.
TAIHU_TUNING_RECORDS="$dir/records.jsonl" TAIHU_VERBOSE=1 \
  "$bench" --suite-compare mb1ic1ih28oc20oh24kh5 --threads 2 --rounds 1 >"$dir/child.txt" 2>"$dir/child.err"
grep -q "conv: mb1ic1ih28oc20oh24kh5 forward -> $algo (tuning record" "$dir/child.err" ||
  fail "dnn did not report picking $algo from the suite's tuning record: $(grep 'conv: mb1ic1ih28' "$dir/child.err" | head -3)"
grep -q "^auto $algo\$" "$dir/child.txt" || fail "dnn's automatic choice is not the record's $algo"

if "$bench" --suite dnn --layers no_such_layer --anchors none >"$dir/bad.txt" 2>&1; then fail "an unknown layer was accepted"; fi
grep -q "no_such_layer" "$dir/bad.txt" || fail "the error does not name the unknown layer"
echo "dnn suite smoke: OK (record $algo picked up by dnn)"
