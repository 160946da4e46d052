#!/usr/bin/env bash
# interop: opt-in (measures, 6-16 minutes under TCG: bash interop/run.sh study)
# Interop job, runs inside the rxe VM: the seeds' studies on the kernel's rxe0 through the native
# provider. `rdma4j study pingpong -d rxe0` (both QPs on rxe0, client and server threads in one JVM)
# and `rdma4j study regcost` (every device the VM has: rxe0 and soft0). Tables and plots go to
# $INTEROP_OUT (study-pingpong-rxe0.txt/.png, study-regcost.txt/.png); docs/PERFORMANCE.md records
# them. Fails only when a study does not finish, never on its figures.
#
#   INTEROP_STUDY_ITERS    timed round trips per variant (default 2000)
#   INTEROP_STUDY_WARMUP   untimed ones first (default 1000)
#   INTEROP_STUDY_MAX      regcost's largest size (default 1G; 256M is tried when 1G cannot be had)
#   INTEROP_STUDY_JAVA_OPTS  JVM options (default -XX:-TieredCompilation, as native-speed: C2 only)
set -uo pipefail

. "$INTEROP_DIR/tools-env.sh" study || exit 1
. "$INTEROP_DIR/net-setup.sh" || { echo "FAIL net-setup"; exit 1; }
ITERS="${INTEROP_STUDY_ITERS:-2000}"
WARMUP="${INTEROP_STUDY_WARMUP:-1000}"
MAX="${INTEROP_STUDY_MAX:-1G}"
fail=0

ACCESS=--enable-native-access=ALL-UNNAMED,org.rdma4j.verbs,org.rdma4j.soft,org.rdma4j.nativeverbs
rdma4j() {
  # shellcheck disable=SC2086 # option lists
  timeout 600 "$JAVA" $TOOL_AOT_OPTS ${INTEROP_STUDY_JAVA_OPTS--XX:-TieredCompilation} -XX:MaxDirectMemorySize=1100m "$ACCESS" \
    -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}

echo "load: $(cat /proc/loadavg), $(nproc) CPUs, $(awk '/MemTotal/ { print $2 / 1024 " MiB" }' /proc/meminfo)"
out="$INTEROP_OUT/study-pingpong-rxe0"
if rdma4j study pingpong -d rxe0 -x "$RXE_GID_V4" -n "$ITERS" --warmup "$WARMUP" --plot "$out.png" >"$out.txt" 2>&1; then
  cat "$out.txt"
  echo "PASS study pingpong -d rxe0"
else
  cat "$out.txt"
  echo "FAIL study pingpong -d rxe0"
  fail=1
fi

out="$INTEROP_OUT/study-regcost"
# --warmup 20000: the C2-only JIT compiles after 10 000 calls; fewer leave soft0's registration interpreted
if rdma4j study regcost --max "$MAX" --warmup 20000 --plot "$out.png" >"$out.txt" 2>&1; then
  cat "$out.txt"
  echo "PASS study regcost --max $MAX"
elif grep -q "cannot allocate" "$out.txt" && [[ $MAX != 256M ]]; then
  cat "$out.txt"
  echo "(retrying with --max 256M)"
  if rdma4j study regcost --max 256M --warmup 20000 --plot "$out.png" >"$out.txt" 2>&1; then
    cat "$out.txt"
    echo "PASS study regcost --max 256M"
  else
    cat "$out.txt"; echo "FAIL study regcost --max 256M"; fail=1
  fi
else
  cat "$out.txt"
  echo "FAIL study regcost --max $MAX"
  fail=1
fi
((fail == 0))
