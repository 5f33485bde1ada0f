#!/usr/bin/env bash
# tests/cluster/link_down_check.sh <scripts/cluster> <cluster_allreduce_loop> [bound_s]: a host
# whose link goes down mid-run ends the job with a message within bound_s (default 60),
# never a hang. Runs a long allreduce loop on hosts 0-3, takes host 3's link down
# (`ip link set taihu-v3 down`) once the ranks are communicating, and times mpirun's
# exit. The link comes back up afterwards, and no process may be left in the hosts.
# Then the cluster must be whole again: every host answers (`scripts/cluster check`) and
# a job on all hosts runs (after this bounce host 3 used to start no daemon in the next
# job, which hung: its resolution of the launcher's address, begun while the link was
# down, failed the daemon's first connection).
set -uo pipefail
cluster=$1 loop=$2 bound=${3:-60}
log=$(mktemp /tmp/taihu-link-down.XXXXXX)
trap 'rm -f "$log"; ip link set taihu-v3 up 2>/dev/null' EXIT
"$cluster" mpirun -np 4 -x TAIHU_COMM_PROBE=never "$loop" --bytes 1048576 --seconds 600 >"$log" 2>&1 &
job=$!
for _ in $(seq 1 600); do
  grep -q "^running" "$log" && break
  kill -0 $job 2>/dev/null || { echo "FAIL: the job ended before the link went down"; cat "$log"; exit 1; }
  sleep 0.1
done
sleep 2  # inside the measuring loop: every rank is sending and receiving
kill -0 $job 2>/dev/null || { echo "FAIL: the job ended before the link went down"; cat "$log"; exit 1; }
ip link set taihu-v3 down
t0=$(date +%s.%N)
ended=0
for _ in $(seq 1 $((bound * 10))); do
  if ! kill -0 $job 2>/dev/null; then ended=1; break; fi
  sleep 0.1
done
elapsed=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
if [ $ended = 0 ]; then
  kill -TERM $job 2>/dev/null; sleep 2; kill -KILL $job 2>/dev/null
  echo "FAIL: the job still ran ${elapsed} s after host 3's link went down (bound ${bound} s)"
  tail -20 "$log"
  exit 1
fi
wait $job
rc=$?
ip link set taihu-v3 up
echo "--- job output (tail) ---"; tail -15 "$log"; echo "---"
if [ $rc = 0 ]; then echo "FAIL: the job exited 0 although host 3 was cut off"; exit 1; fi
if ! grep -qiE "lost|unreachable|error|abort|connection|terminated|timed out" "$log"; then
  echo "FAIL: the job ended (rc $rc) without a message"; exit 1
fi
# Nothing may be left running in the hosts (host 3's daemon notices its lost
# launcher by the same keepalive).
left=""
for _ in $(seq 1 $((bound * 10))); do
  left=""
  for h in 0 1 2 3; do left+=$(ip netns pids "taihu-h$h" 2>/dev/null | tr '\n' ' '); done
  [ -z "${left// /}" ] && break
  sleep 0.1
done
if [ -n "${left// /}" ]; then
  echo "FAIL: processes left in the hosts after the job ended: $left"
  for p in $left; do kill -9 "$p" 2>/dev/null; done
  exit 1
fi
"$cluster" check || { echo "FAIL: not every host answers after host 3's link came back"; exit 1; }
hosts=$(awk -F= '$1 == "hosts" {print $2}' "${TAIHU_CLUSTER_DIR:-/run/taihu-cluster}/config")
t1=$(date +%s.%N)
names=$(timeout 60 "$cluster" mpirun -np "$hosts" hostname 2>&1)
rc2=$?
again=$(awk -v a="$t1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
count=$(grep -c '^taihu-h[0-9]*$' <<<"$names" | tr -d ' ')
if [ $rc2 != 0 ] || [ "$count" != "$hosts" ] || [ "$(grep '^taihu-h' <<<"$names" | sort -u | wc -l)" != "$hosts" ]; then
  echo "FAIL: a job on all $hosts hosts after the bounce: exit $rc2 after ${again} s (124: hung, ended at 60 s), $count of $hosts hostnames:"
  echo "$names" | tail -20
  exit 1
fi
echo "OK: host 3 cut off -> mpirun exited $rc with a message after ${elapsed} s (bound ${bound} s); afterwards all $hosts hosts answer and a job on all of them ran in ${again} s"
