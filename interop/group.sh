#!/usr/bin/env bash
# Runs inside the interop VM as the job of a VM that runs several jobs one after the other (what
# run.sh does by default: one boot, one warm page cache of the JDK and the jars read over 9p, one
# net-setup, instead of a boot per job). INTEROP_GROUP_JOBS lists the job scripts, one per line.
#
# Each job gets what a VM of its own would give it, as far as one VM can:
#   - its own output directory $INTEROP_OUT/NAME (INTEROP_OUT, INTEROP_JOB and INTEROP_JOB_NAME set
#     for it), where its job.log, exit-code and seconds are written;
#   - its own time limit (INTEROP_GROUP_JOB_TIMEOUT seconds, run.sh passes RDMA4J_INTEROP_TIMEOUT - 25);
#   - no processes of the job before it: every process that carries the job's mark in its environment
#     is killed when the job ends (ip netns exec, timeout and the tools keep the environment);
#   - the network as net-setup.sh makes it: netem qdiscs are removed, devices, namespaces and veths
#     other than rxe0, peer, veth0 and veth1 are deleted, and if a job deleted rxe0 (siw does) the
#     rest is removed too, so that the next job's net-setup builds it again.
# Prints "group: NAME exit STATUS after Ss" per job and exits 0 when every job passed, 1 otherwise.
set -uo pipefail

BASE="$INTEROP_OUT"
LIMIT="${INTEROP_GROUP_JOB_TIMEOUT:-875}"
status=0

uptime_s() { local u; read -r u _ </proc/uptime; echo "${u%.*}"; }

kill_marked() { # MARK: every process whose environment holds INTEROP_JOB_MARK=MARK
  local mark=$1 pass pids p joined environ IFS=$'\n'
  for pass in TERM KILL; do
    pids=()
    for p in /proc/[0-9]*; do # bash builtins only: a fork per process is slow under TCG
      p=${p#/proc/}
      ((p == $$)) && continue
      mapfile -d "" environ 2>/dev/null <"/proc/$p/environ" || continue
      joined=$'\n'"${environ[*]}"$'\n'
      [[ $joined == *$'\n'"INTEROP_JOB_MARK=$mark"$'\n'* ]] && pids+=("$p")
    done
    ((${#pids[@]} == 0)) && return 0
    echo "group: stopping ${#pids[@]} process(es) the job left running ($pass)"
    kill -"$pass" "${pids[@]}" 2>/dev/null
    sleep 1
  done
}

reset_network() {
  local l ns
  tc qdisc del dev veth0 root 2>/dev/null
  ip netns exec peer tc qdisc del dev veth1 root 2>/dev/null
  for l in $(rdma link show 2>/dev/null | awk '$1 == "link" { split($2, a, "/"); print a[1] }'); do
    [[ $l == rxe0 ]] || rdma link delete "$l" 2>/dev/null || echo "group: cannot delete rdma link $l"
  done
  for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
    [[ $ns == peer ]] || ip netns delete "$ns" 2>/dev/null
  done
  for l in $(ip -o link show type veth 2>/dev/null | awk -F': ' '{ split($2, a, "@"); print a[1] }'); do
    [[ $l == veth0 ]] || ip link delete "$l" 2>/dev/null
  done
  if [[ ! -d /sys/class/infiniband/rxe0 ]]; then
    ip link delete veth0 2>/dev/null
    ip netns delete peer 2>/dev/null
  fi
}

while IFS= read -r job; do
  [[ -n $job ]] || continue
  name="$(basename "$job" .sh)"
  out="$BASE/$name"
  mkdir -p "$out"
  rm -f "$out"/{exit-code,job.log,seconds}
  mark="$name-$$-$RANDOM"
  echo "group: job $name (limit ${LIMIT}s; VM up $(uptime_s)s)"
  t0=$SECONDS
  # The job's output goes to its own job.log; a tail copies it to the group's for the live view on
  # the host (not a pipe: a process the job leaves running would hold a pipe open).
  : >"$out/job.log"
  tail -n +1 -F -s 0.5 "$out/job.log" 2>/dev/null &
  tail_pid=$!
  INTEROP_OUT="$out" INTEROP_JOB="$job" INTEROP_JOB_NAME="$name" INTEROP_JOB_MARK="$mark" \
    timeout -k 5 "$LIMIT" /bin/bash "$job" </dev/null >"$out/job.log" 2>&1
  rc=$?
  dt=$((SECONDS - t0))
  kill_marked "$mark"
  sleep 1; kill "$tail_pid" 2>/dev/null; wait "$tail_pid" 2>/dev/null
  echo "$rc" >"$out/exit-code"
  echo "$dt" >"$out/seconds"
  echo "group: $name exit $rc after ${dt}s (VM up $(uptime_s)s)"
  ((rc == 0)) || status=1
  reset_network
  cd "${INTEROP_CWD:-/}" 2>/dev/null || cd /
done <<<"$INTEROP_GROUP_JOBS"
exit "$status"
