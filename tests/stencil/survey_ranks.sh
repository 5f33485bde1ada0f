#!/bin/sh
# Shots over MPI ranks (issue 22): a 16-shot survey on 1, 2 and 4 ranks writes the same
# SEG-Y bytes; a run killed after some shots resumes (on another rank count), skips the
# shots on disk and ends with the same bytes again.
#   survey_ranks.sh <taihu-seismic> <mpiexec> <work dir>
set -eu
exe=$1 mpiexec=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cd "$work"
# On failure, show what the runs said (a flake under load is otherwise undiagnosable).
trap 'st=$?; [ $st -eq 0 ] || for f in *.log; do echo "== $f"; tail -n 20 "$f"; done' EXIT
args="run --shape 80x40 --spacing 10 --tmax 0.2 --width 10 --shots 100:700:40 --no-png"
"$exe" $args --dir p1 2>p1.log
"$mpiexec" -n 2 --oversubscribe "$exe" $args --dir p2 2>p2.log
"$mpiexec" -n 4 --oversubscribe "$exe" $args --dir p4 2>p4.log
test "$(ls p1/shots.segy.shots | wc -l)" -eq 16
cmp p1/shots.segy p2/shots.segy
cmp p1/shots.segy p4/shots.segy
grep -q "16/16 shots on disk" p4.log || { echo "no progress line 16/16"; cat p4.log; exit 1; }

# Resume: a bigger grid so a shot takes a while (about 0.5 s on one core); kill the run
# once 2 gathers exist (waiting up to 2 minutes: a loaded CI host starts mpiexec slowly).
big="run --shape 400x200 --spacing 10 --tmax 0.8 --width 10 --shots 100:3850:250 --no-png"
"$mpiexec" -n 2 --oversubscribe "$exe" $big --dir ref 2>ref.log
test "$(ls ref/shots.segy.shots | wc -l)" -eq 16
"$mpiexec" -n 2 --oversubscribe "$exe" $big --dir r 2>r1.log &
pid=$!
n=0
for i in $(seq 1 2400); do
  n=$(ls r/shots.segy.shots 2>/dev/null | grep -c '\.segy$' || true)
  [ "$n" -ge 2 ] && break
  sleep 0.05
done
kill -TERM $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
n=$(ls r/shots.segy.shots | grep -c '\.segy$' || true)
echo "killed with $n of 16 gathers on disk"
[ "$n" -ge 2 ] || { echo "no gather was written before the kill"; exit 1; }
if [ "$n" -eq 16 ]; then  # a fast host finished first: take 12 gathers away instead
  echo "the run finished before the kill landed; removing 12 gathers and shots.segy instead"
  rm r/shots.segy
  for i in $(seq 5 16); do rm "r/shots.segy.shots/$(printf shot_%05d.segy "$i")"; done
  n=$(ls r/shots.segy.shots | grep -c '\.segy$' || true)
  test "$n" -eq 4
fi
test ! -e r/shots.segy
"$mpiexec" -n 4 --oversubscribe "$exe" $big --dir r 2>r2.log
skipped=$(grep -o '[0-9]* shot(s) already on disk' r2.log | awk '{s += $1} END {print s + 0}')
echo "resumed: $skipped shots skipped"
[ "$skipped" -ge "$n" ] || { cat r2.log; exit 1; }
cmp ref/shots.segy r/shots.segy
echo "survey_ranks: OK"
