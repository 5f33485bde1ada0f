#!/bin/sh
# Shots over MPI ranks (issue 22): a 16-shot survey on 1, 2 and 4 ranks writes the same
# SEG-Y bytes; a run killed after some shots resumes (on another rank count), skips the
# shots on disk and ends with the same bytes again.
#   survey_ranks.sh <taihu-seismic> <mpiexec> <work dir>
set -eu
exe=$1 mpiexec=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cd "$work"
args="run --shape 80x40 --spacing 10 --tmax 0.2 --width 10 --shots 100:700:40 --no-png"
"$exe" $args --dir p1 2>p1.log
"$mpiexec" -n 2 --oversubscribe "$exe" $args --dir p2 2>p2.log
"$mpiexec" -n 4 --oversubscribe "$exe" $args --dir p4 2>p4.log
test "$(ls p1/shots.segy.shots | wc -l)" -eq 16
cmp p1/shots.segy p2/shots.segy
cmp p1/shots.segy p4/shots.segy
grep -q "16/16 shots on disk" p4.log || { echo "no progress line 16/16"; cat p4.log; exit 1; }

# Resume: a bigger grid so a shot takes a while; kill the run once 2 gathers exist.
big="run --shape 240x120 --spacing 10 --tmax 0.6 --width 10 --shots 100:2300:146 --no-png"
"$exe" $big --dir ref 2>ref.log
test "$(ls ref/shots.segy.shots | wc -l)" -eq 16
"$mpiexec" -n 2 --oversubscribe "$exe" $big --dir r 2>r1.log &
pid=$!
n=0
for i in $(seq 1 600); do
  n=$(ls r/shots.segy.shots 2>/dev/null | grep -c '\.segy$' || true)
  [ "$n" -ge 2 ] && break
  sleep 0.05
done
kill -TERM $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
n=$(ls r/shots.segy.shots | grep -c '\.segy$' || true)
echo "killed with $n of 16 gathers on disk"
[ "$n" -ge 2 ] && [ "$n" -lt 16 ] || { echo "the kill did not land mid-survey ($n gathers)"; exit 1; }
test ! -e r/shots.segy
"$mpiexec" -n 4 --oversubscribe "$exe" $big --dir r 2>r2.log
skipped=$(grep -o '[0-9]* shot(s) already on disk' r2.log | awk '{s += $1} END {print s + 0}')
echo "resumed: $skipped shots skipped"
[ "$skipped" -ge "$n" ] || { cat r2.log; exit 1; }
cmp ref/shots.segy r/shots.segy
echo "survey_ranks: OK"
