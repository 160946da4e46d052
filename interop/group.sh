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
#   - the hs_err_pid*.log files of the JVMs that died (the JVM writes them to /tmp here: the working
#     directory, the repository, is read-only) moved into its directory.
# A job that failed after one of its JVMs died at a JIT-compiled method's entry (jit_crash below) runs
# once more, at most INTEROP_GROUP_CRASH_RETRIES (default 2) times per VM: under qemu's multi-threaded
# TCG, JVMs have died there, where HotSpot patches code that other threads run, and never outside the
# VM (docs/decisions/0028-the-interop-vm.md). The first try's log and crash files stay in
# NAME/try1/, the file NAME/retried says why, and run.sh's summary shows it.
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

# collect_crashes OUT: moves the hs_err files JVMs wrote since the last call into OUT
collect_crashes() {
  local f
  for f in /tmp/hs_err_pid*.log "${INTEROP_CWD:-/}"/hs_err_pid*.log; do
    [[ -f $f ]] && mv -f "$f" "$1/" 2>/dev/null
  done
}

# jit_crash OUT: prints "SIGNAL in FRAME" and succeeds when a JVM of the job died the way JVMs die under
# qemu's multi-threaded TCG: in a JIT-compiled method's first instructions (its verified entry, which
# HotSpot patches while other threads may run it: problematic frame "J ... [START+OFFSET]" with OFFSET
# below 0x40), or at a pc in no code at all ("C  0x..."). Looks at the hs_err files and, where none
# was written, at the header the JVM printed into job.log. A crash elsewhere is not the emulator's.
jit_crash() {
  local f sig frame
  for f in "$1"/hs_err_pid*.log "$1/job.log"; do
    [[ -f $f ]] || continue
    frame="$(grep -A1 '^# Problematic frame:' "$f" 2>/dev/null | grep -m1 -E '^# (J|C) ' | cut -c3-)"
    [[ -n $frame ]] || continue
    if [[ $frame =~ ^J\ .*\[0x[0-9a-f]+\+0x([0-9a-f]+)\]$ ]]; then
      ((16#${BASH_REMATCH[1]} < 0x40)) || continue
    elif [[ ! $frame =~ ^C\ +0x[0-9a-f]+$ ]]; then
      continue
    fi
    sig="$(grep -m1 -o -E '^#  (SIGSEGV|SIGILL|SIGBUS)' "$f" | tr -d '# ')"
    [[ -n $sig ]] || continue
    echo "$sig in ${frame:0:260} ($(basename "$f"))"
    return 0
  done
  return 1
}

# run_once JOB NAME OUT: runs the job once; sets rc and dt
run_once() {
  local job=$1 name=$2 out=$3 mark tail_pid t0
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
  collect_crashes "$out"
  reset_network
  cd "${INTEROP_CWD:-/}" 2>/dev/null || cd /
}

retries_left="${INTEROP_GROUP_CRASH_RETRIES:-2}"
while IFS= read -r job; do
  [[ -n $job ]] || continue
  name="$(basename "$job" .sh)"
  out="$BASE/$name"
  mkdir -p "$out"
  rm -rf "$out"/{exit-code,job.log,seconds,retried,try1} "$out"/hs_err_pid*.log
  run_once "$job" "$name" "$out"
  if ((rc != 0 && rc != 124 && retries_left > 0)) && why="$(jit_crash "$out")"; then
    retries_left=$((retries_left - 1))
    mkdir -p "$out/try1"
    mv -f "$out/job.log" "$out"/hs_err_pid*.log "$out/try1/" 2>/dev/null
    echo "first try failed (exit $rc after ${dt}s) after a JVM died at a compiled method's entry: $why" >"$out/retried"
    echo "group: $name exit $rc after ${dt}s: a JVM died at a compiled method's entry: $why"
    echo "group: taken for the emulator's fault (docs/decisions/0028-the-interop-vm.md); $name runs once more (first try: $out/try1)"
    run_once "$job" "$name" "$out"
  fi
  echo "$rc" >"$out/exit-code"
  echo "$dt" >"$out/seconds"
  echo "group: $name exit $rc after ${dt}s (VM up $(uptime_s)s)"
  ((rc == 0)) || status=1
done <<<"$INTEROP_GROUP_JOBS"
exit "$status"
