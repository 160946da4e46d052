#!/usr/bin/env bash
# Interop harness entry point: provision the rxe VM (cached), then run jobs in it, one VM boot per
# job, and print a summary. Exits non-zero if provisioning or any job failed; never hangs (each VM
# has its own limit and the whole run has an overall one).
#
#   interop/run.sh [--smoke] [JOB...]
#     --smoke   run only the smoke job (rxe and the JDK work in the VM; no project code)
#     JOB       job names (interop/jobs/NAME.sh) or paths to job scripts;
#               default: every interop/jobs/*.sh, smoke first, except the opt-in ones (a job whose
#               leading comment lines contain "interop: opt-in" runs only when named)
#
# The jobs run one after the other in ONE VM (group.sh: each job has its own output directory and
# time limit, what it leaves running is killed and the network is reset between jobs), which saves a
# boot, a net-setup and a cold read of the JDK over 9p per job; RDMA4J_INTEROP_VM_PER_JOB=1 boots a
# VM per job instead (full isolation: a job that wedges the VM's kernel cannot take the next with it).
#
# Environment: RDMA4J_INTEROP_TOTAL_TIMEOUT  limit for the whole run in seconds (default 2400)
#              RDMA4J_INTEROP_TIMEOUT        limit for one job (default 900)
#              RDMA4J_INTEROP_VM_PER_JOB     1: a VM per job (default: one VM for all)
#              RDMA4J_INTEROP_OUT            where job outputs go (default /tmp/rdma4j-interop/run-TIME)
#              RDMA4J_INTEROP_CACHE          package/kernel cache (default ~/.cache/rdma4j-interop)
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOTAL="${RDMA4J_INTEROP_TOTAL_TIMEOUT:-2400}"

# Re-run under an overall time limit (timeout stops this script, and run-vm.sh's traps stop its VM).
if [[ -z ${RDMA4J_INTEROP_GUARDED:-} ]]; then
  RDMA4J_INTEROP_GUARDED=1 timeout -k 30 "$TOTAL" bash "${BASH_SOURCE[0]}" "$@" &
  guard=$!
  # timeout runs in its own process group: pass INT/TERM/HUP on (it signals its whole group).
  trap 'kill -TERM "$guard" 2>/dev/null' INT TERM HUP
  while :; do
    wait "$guard"; rc=$?
    kill -0 "$guard" 2>/dev/null || break
  done
  if ((rc == 124 || rc == 137)); then
    echo "interop: TIMEOUT: the whole run exceeded ${TOTAL}s (RDMA4J_INTEROP_TOTAL_TIMEOUT) and was stopped" >&2
    exit 124
  fi
  exit "$rc"
fi
unset RDMA4J_INTEROP_GUARDED

# True when the job's leading comment lines (after the #! line) contain "interop: opt-in".
opt_in() {
  awk 'NR == 1 && /^#!/ { next } !/^#/ { exit } /interop: opt-in/ { found = 1; exit } END { exit !found }' "$1"
}

jobs=()
opted_out=()
smoke_only=0
for a in "$@"; do
  case "$a" in
    --smoke) smoke_only=1 ;;
    -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "interop: unknown option $a" >&2; exit 2 ;;
    */*|*.sh) jobs+=("$a") ;;
    *) jobs+=("$HERE/jobs/$a.sh") ;;
  esac
done
if ((smoke_only)); then
  jobs=("$HERE/jobs/smoke.sh")
elif ((${#jobs[@]} == 0)); then
  jobs=("$HERE/jobs/smoke.sh")
  for j in "$HERE"/jobs/*.sh; do
    [[ $j == */smoke.sh ]] && continue
    if opt_in "$j"; then opted_out+=("$(basename "$j" .sh)"); else jobs+=("$j"); fi
  done
fi
for j in "${jobs[@]}"; do [[ -f $j ]] || { echo "interop: no such job: $j" >&2; exit 2; }; done

cd "$HERE/.." || exit 1
section() { printf '\n==> interop: %s\n' "$*"; }
OUT_BASE="${RDMA4J_INTEROP_OUT:-${TMPDIR:-/tmp}/rdma4j-interop/run-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT_BASE"
t_all=$SECONDS

section "provision (cache ${RDMA4J_INTEROP_CACHE:-${HOME:-/root}/.cache/rdma4j-interop})"
t0=$SECONDS
prov_out="$(bash "$HERE/provision.sh" 2> >(tee "$OUT_BASE/provision.log" >&2))"
prov_rc=$?
if ((prov_rc != 0)); then
  echo "interop: FAIL provisioning (status $prov_rc); log: $OUT_BASE/provision.log" >&2
  exit 1
fi
RDMA4J_INTEROP_KERNEL_DIR="$(sed -n 's/^KERNEL_DIR=//p' <<<"$prov_out" | tail -n1)"
export RDMA4J_INTEROP_KERNEL_DIR
echo "interop: provisioned in $((SECONDS - t0))s: $RDMA4J_INTEROP_KERNEL_DIR"
((${#opted_out[@]} == 0)) || echo "interop: opt-in jobs not run (name them to run them): ${opted_out[*]}"

# The JVMs in the VM start from an AOT cache made on the host when the project is built (aot-cache.sh).
if [[ -d tools/target/lib ]]; then
  t0=$SECONDS
  aot="$(bash "$HERE/aot-cache.sh")" && [[ -n $aot ]] && echo "interop: AOT cache for the jobs' JVMs in $((SECONDS - t0))s: $aot"
fi

summary=()
failed=0
# verdict RC: the summary's word for a job's status
verdict() {
  case $1 in
    0) echo PASS ;;
    124) echo TIMEOUT ;;
    125) echo "FAIL (VM error)" ;;
    *) echo "FAIL (status $1)" ;;
  esac
}
# add_summary NAME RC SECONDS LOAD: a summary line, with the FAIL lines of the job's log after it
add_summary() {
  local name=$1 rc=$2 dt=$3 load=$4
  ((rc == 0)) || failed=1
  summary+=("$(printf '%-24s %-18s %5ss  host load %s  %s' "$name" "$(verdict "$rc")" "$dt" "${load:-?}" "$OUT_BASE/$name")")
  if ((rc != 0)) && [[ -f $OUT_BASE/$name/job.log ]]; then
    while IFS= read -r line; do summary+=("    $line"); done < <(grep -E '^FAIL ' "$OUT_BASE/$name/job.log" | head -n 20)
  fi
  # group.sh: a job that ran twice after a JVM crash in JIT code, and the crash files of the last try
  [[ -s $OUT_BASE/$name/retried ]] && summary+=("    ran twice: $(head -c 400 "$OUT_BASE/$name/retried")")
  local f
  for f in "$OUT_BASE/$name"/hs_err_pid*.log; do
    [[ -f $f ]] && summary+=("    a JVM died: $f")
  done
}
# The VM is emulated: other work on the host slows it down a lot, so the summary says how busy the host
# was while the VM ran (run-vm.sh writes host-uptime; figures from a busy host mean little).
host_load() { sed -n 's/.*load average: \([0-9.]*\),.*/\1/p' "$1/host-uptime" 2>/dev/null | paste -sd'>' | sed 's/>/ -> /'; }

if [[ ${RDMA4J_INTEROP_VM_PER_JOB:-0} == 1 ]]; then
  for j in "${jobs[@]}"; do
    name="$(basename "$j" .sh)"
    section "job $name"
    t0=$SECONDS
    bash "$HERE/run-vm.sh" "$j" "$OUT_BASE/$name"
    add_summary "$name" $? $((SECONDS - t0)) "$(host_load "$OUT_BASE/$name")"
  done
else
  names=()
  for j in "${jobs[@]}"; do names+=("$(basename "$j" .sh)"); done
  section "jobs ${names[*]}, in one VM"
  per_job="${RDMA4J_INTEROP_TIMEOUT:-900}"
  # The VM's limit: every job's own limit, but never past the whole run's.
  vm_limit=$(( ${#jobs[@]} * per_job + 60 ))
  left=$((TOTAL - (SECONDS - t_all) - 30))
  ((vm_limit > left)) && vm_limit=$left
  ((vm_limit < 30)) && vm_limit=30
  group_jobs="$(for j in "${jobs[@]}"; do (cd "$(dirname "$j")" && printf '%s/%s\n' "$PWD" "$(basename "$j")"); done)"
  for name in "${names[@]}"; do rm -f "$OUT_BASE/$name"/{exit-code,seconds}; done
  INTEROP_GROUP_JOBS="$group_jobs" INTEROP_GROUP_JOB_TIMEOUT=$((per_job - 25)) RDMA4J_INTEROP_TIMEOUT="$vm_limit" \
    bash "$HERE/run-vm.sh" "$HERE/group.sh" "$OUT_BASE"
  vm_rc=$?
  load="$(host_load "$OUT_BASE")"
  for name in "${names[@]}"; do
    if [[ -s $OUT_BASE/$name/exit-code ]]; then
      rc="$(tr -dc '0-9' <"$OUT_BASE/$name/exit-code")"
      add_summary "$name" "${rc:-125}" "$(tr -dc '0-9' <"$OUT_BASE/$name/seconds" 2>/dev/null)" "$load"
    else
      # the VM ended (time limit, kernel panic) before this job said how it ended
      add_summary "$name" "$( ((vm_rc == 124)) && echo 124 || echo 125)" "-" "$load"
      summary[-1]+="  (no exit status: the VM ended first, status $vm_rc)"
    fi
  done
fi

section "summary ($((SECONDS - t_all))s)"
printf '%s\n' "${summary[@]}"
if ((failed)); then
  echo "interop: FAILED (the VM's console: $OUT_BASE/console.log, or $OUT_BASE/NAME/console.log with a VM per job)"
  exit 1
fi
echo "interop: ok"
