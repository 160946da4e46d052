#!/usr/bin/env bash
# Boot the interop VM (Debian kernel + rdma_rxe, qemu TCG) and run one job script inside it.
#
#   interop/run-vm.sh JOB_SCRIPT [OUTDIR]
#
# The VM sees the host's / read-only (so every host tool, the JDK and this repository are there at
# their usual paths) and OUTDIR read-write at /run/interop ($INTEROP_OUT). The job runs as root with
# bash in a chroot of the host root, cwd = the directory run-vm.sh was started from. It should
# `. "$INTEROP_DIR/net-setup.sh"` first. Variables named RDMA4J_* and INTEROP_* are passed through
# to the job, and so is JAVA_HOME.
#
# Output: the job's output is streamed to stdout as it runs and kept in OUTDIR/job.log; the serial
# console (init messages, kernel log) is OUTDIR/console.log, the VM's dmesg OUTDIR/dmesg.log.
# Exit status: the job's own; 124 when the time limit hit; 125 when the VM failed before or
# outside the job (no exit code came back). On any failure the console tail is printed.
#
# Environment: RDMA4J_INTEROP_TIMEOUT  hard limit for the whole VM in seconds (default 900)
#              RDMA4J_INTEROP_MEM      guest memory in MiB (default 2048)
#              RDMA4J_INTEROP_SMP      guest CPUs (default 2)
#              RDMA4J_INTEROP_TCG_THREAD  qemu's TCG threading, multi (default: a host thread per vCPU) or
#                                      single (one host thread for all vCPUs; no cross-vCPU code patching races)
#              RDMA4J_INTEROP_KERNEL_DIR  vmlinuz + initrd.gz (default: ask provision.sh)
#              RDMA4J_INTEROP_CACHE    cache directory (see provision.sh)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${RDMA4J_INTEROP_CACHE:-${HOME:-/root}/.cache/rdma4j-interop}"
TIMEOUT="${RDMA4J_INTEROP_TIMEOUT:-900}"
MEM="${RDMA4J_INTEROP_MEM:-2048}"
SMP="${RDMA4J_INTEROP_SMP:-2}"

say() { printf 'run-vm: %s\n' "$*"; }
die() { printf 'run-vm: ERROR: %s\n' "$*" >&2; exit 125; }

(($# >= 1 && $# <= 2)) || { echo "usage: $0 JOB_SCRIPT [OUTDIR]" >&2; exit 2; }
[[ -f $1 && -r $1 ]] || die "job script $1 not found"
JOB="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
JOB_NAME="$(basename "$JOB" .sh)"
[[ $TIMEOUT =~ ^[0-9]+$ ]] && ((TIMEOUT >= 30)) || die "RDMA4J_INTEROP_TIMEOUT must be >= 30 seconds"

if [[ -n ${2:-} ]]; then
  OUT="$2"
else
  OUT="${TMPDIR:-/tmp}/rdma4j-interop/$JOB_NAME.$(date +%Y%m%d-%H%M%S)"
fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
rm -f "$OUT"/{exit-code,job.log,console.log,dmesg.log,job.env,tmp-binds}

KDIR="${RDMA4J_INTEROP_KERNEL_DIR:-}"
if [[ -z $KDIR ]]; then
  prov="$(bash "$HERE/provision.sh" 2>"$OUT/provision.log")" || { cat "$OUT/provision.log" >&2; die "provisioning failed"; }
  KDIR="$(sed -n 's/^KERNEL_DIR=//p' <<<"$prov" | tail -n1)"
fi
[[ -f $KDIR/vmlinuz && -f $KDIR/initrd.gz ]] || die "no vmlinuz/initrd.gz in '$KDIR' (run interop/provision.sh)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (run interop/provision.sh)"

# The job's environment inside the VM (sourced with `set -a` by the VM's /init).
{
  printf 'INTEROP_JOB=%q\n' "$JOB"
  printf 'INTEROP_JOB_NAME=%q\n' "$JOB_NAME"
  printf 'INTEROP_DIR=%q\n' "$HERE"
  printf 'INTEROP_REPO=%q\n' "$(dirname "$HERE")"
  printf 'INTEROP_CWD=%q\n' "$PWD"
  # The job gets the VM's time limit less a margin for booting and powering off, so that a job
  # that runs too long is still stopped inside the VM with its logs written.
  printf 'INTEROP_JOB_TIMEOUT=%q\n' "$((TIMEOUT - 25))"
  [[ -n ${JAVA_HOME:-} ]] && printf 'JAVA_HOME=%q\n' "$JAVA_HOME"
  while IFS= read -r name; do
    case "$name" in INTEROP_JOB|INTEROP_JOB_NAME|INTEROP_DIR|INTEROP_REPO|INTEROP_CWD|INTEROP_JOB_TIMEOUT|INTEROP_OUT) continue ;; esac
    printf '%s=%q\n' "$name" "${!name}"
  done < <(compgen -e | grep -E '^(RDMA4J_|INTEROP_)' || true)
} > "$OUT/job.env"

# Host paths under /tmp are hidden by the VM's own /tmp (a tmpfs); name the top-level entries the
# job needs so that the VM's /init binds them back in.
for p in "$JOB" "$HERE" "$PWD" ${INTEROP_GROUP_JOBS:-}; do
  [[ $p == /tmp/?* ]] || continue
  p="${p#/tmp/}"; printf '%s\n' "${p%%/*}"
done | sort -u > "$OUT/tmp-binds"

# One VM at a time on this machine (they are CPU-heavy and share the cache).
exec 9>"$CACHE/.vm.lock"
if ! flock -n 9; then
  say "another interop VM is running; waiting up to ${TIMEOUT}s for it"
  flock -w "$TIMEOUT" 9 || die "timed out waiting for $CACHE/.vm.lock"
fi
# Other work on the host slows the emulated VM several times over: say how busy the host was.
echo "start $(uptime)" >"$OUT/host-uptime"
say "host at the start: $(uptime)"

qemu_cmd=(qemu-system-x86_64
  -accel "tcg,thread=${RDMA4J_INTEROP_TCG_THREAD:-multi}" -cpu max -m "$MEM" -smp "$SMP"
  -kernel "$KDIR/vmlinuz" -initrd "$KDIR/initrd.gz"
  -append "console=ttyS0 quiet panic=-1 ${RDMA4J_INTEROP_CLOCK_ARGS-tsc=reliable clocksource=tsc} ${RDMA4J_INTEROP_KERNEL_ARGS:-}"
  -nographic -no-reboot -nic none
  -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
  -virtfs "local,path=$OUT,mount_tag=job,security_model=none,multidevs=remap")
printf '%q ' "${qemu_cmd[@]}" > "$OUT/qemu-cmdline"; echo >> "$OUT/qemu-cmdline"

say "job $JOB"
say "output in $OUT (console: $OUT/console.log); limit ${TIMEOUT}s"
start=$SECONDS
# timeout kills qemu at the limit (KILL 10 s later if it lingers). The VM is the only child of
# timeout, started in its own process group by timeout; traps below stop it if we are stopped.
timeout -k 10 "$TIMEOUT" "${qemu_cmd[@]}" </dev/null >"$OUT/console.log" 2>&1 &
vm_pid=$!
tail_pid=
cleanup() {
  [[ -n $vm_pid ]] && kill -TERM "$vm_pid" 2>/dev/null || true
  [[ -n $tail_pid ]] && kill "$tail_pid" 2>/dev/null || true
}
trap 'cleanup; say "interrupted"; exit 130' INT
trap 'cleanup; say "terminated"; exit 143' TERM
trap cleanup EXIT

echo "---- $JOB_NAME: job output ----"
tail -n +1 -F --pid="$vm_pid" -s 0.5 "$OUT/job.log" 2>/dev/null &
tail_pid=$!
set +e
wait "$vm_pid"; vm_rc=$?
vm_pid=
wait "$tail_pid"
set -e
tail_pid=
echo "---- $JOB_NAME: end of job output ----"
elapsed=$((SECONDS - start))

if [[ $vm_rc -eq 124 || $vm_rc -eq 137 ]]; then
  rc=124
  say "TIMEOUT: the VM was killed after ${TIMEOUT}s (RDMA4J_INTEROP_TIMEOUT)"
elif [[ -s $OUT/exit-code ]]; then
  rc="$(tr -dc '0-9' <"$OUT/exit-code")"; rc="${rc:-125}"
  if ((vm_rc != 0)); then say "qemu exited with status $vm_rc after the job"; fi
  if ((rc == 124)); then say "TIMEOUT: the job ran out of its $((TIMEOUT - 25))s inside the VM (RDMA4J_INTEROP_TIMEOUT - 25)"; fi
else
  rc=125
  say "FAILED: the VM ended (qemu status $vm_rc) without reporting the job's exit code"
fi

echo "end $(uptime)" >>"$OUT/host-uptime"
say "host at the end: $(uptime)"
if ((rc == 0)); then
  say "job $JOB_NAME passed in ${elapsed}s"
else
  echo "---- console.log (last 60 lines) ----"
  tail -n 60 "$OUT/console.log" 2>/dev/null | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' | tr -d '\r' || true
  if [[ -s $OUT/dmesg.log ]]; then
    echo "---- dmesg.log (last 30 lines) ----"
    tail -n 30 "$OUT/dmesg.log"
  fi
  echo "----"
  say "job $JOB_NAME FAILED with status $rc after ${elapsed}s; logs in $OUT"
fi
exit "$rc"
