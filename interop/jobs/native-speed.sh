#!/usr/bin/env bash
# interop: opt-in (measures; superseded by perf-speed.sh: bash interop/run.sh native-speed)
# Interop job, runs inside the rxe VM: time per iteration of `rdma4j pingpong rc -d rxe0` (both ends
# rdma4j on the native provider) against `ibv_rc_pingpong -d rxe0` (both ends rdma-core), in the same
# VM, for -s 1 and -s 4096. Each pair runs INTEROP_SPEED_REPS times (default 3), C and rdma4j
# alternating; the job prints each run's usec/iter (the client's), the medians and the ratio
# rdma4j / C. The issue asks for <= 1.10; the job fails only on functional errors (a run that does
# not finish), never on speed. docs/PERFORMANCE.md records the numbers.
#
#   INTEROP_SPEED_ITERS   timed iterations per run (default 3000)
#   INTEROP_SPEED_WARMUP  rdma4j's untimed iterations before them (default 3000, --warmup): the JIT
#                         compiles the loop first; until then the interpreter's FFM calls cost about a
#                         millisecond per iteration under TCG. The C tools have no warm-up to wait for.
#   INTEROP_SPEED_JAVA_OPTS  JVM options of the rdma4j runs (default -XX:-TieredCompilation: C2 only.
#                         Under TCG a thread spinning through C1 code that tiered compilation replaces
#                         with C2 code has died in JIT code (SIGSEGV, SIGILL) several times; with C1 only
#                         (the other jobs) or C2 only it has not. An emulation artifact as far as we can
#                         tell: see docs/decisions/0028-the-interop-vm.md)
set -uo pipefail

. "$INTEROP_DIR/tools-env.sh" native-speed || exit 1
ITERS="${INTEROP_SPEED_ITERS:-3000}"
WARMUP="${INTEROP_SPEED_WARMUP:-3000}"
REPS="${INTEROP_SPEED_REPS:-3}"
fail=0 port=18800

. "$INTEROP_DIR/net-setup.sh" || { echo "FAIL net-setup"; exit 1; }

ACCESS=--enable-native-access=ALL-UNNAMED,org.rdma4j.verbs,org.rdma4j.soft,org.rdma4j.nativeverbs
rdma4j() {
  # shellcheck disable=SC2086 # option lists
  timeout 300 "$JAVA" $TOOL_AOT_OPTS ${RDMA4J_INTEROP_JAVA_OPTS:-} ${INTEROP_SPEED_JAVA_OPTS--XX:-TieredCompilation} "$ACCESS" \
    -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}
cping() { timeout 300 ibv_rc_pingpong "$@"; }

wait_listen() { # PORT PID
  local i
  for ((i = 0; i < 300; i++)); do
    ss -Htln "sport = :$1" 2>/dev/null | grep -q . && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}

if ! rdma4j devinfo -d rxe0 >"$INTEROP_OUT/speed-devinfo.txt" 2>&1; then
  cat "$INTEROP_OUT/speed-devinfo.txt"
  echo "FAIL native-speed: native provider unavailable: $(grep -m1 -i -E 'native|unavailable|no device' "$INTEROP_OUT/speed-devinfo.txt" | sed 's/^[[:space:]]*//')"
  exit 1
fi

# run IMPL SIZE PORT: one server+client pair on rxe0; prints the client's usec/iter, or nothing on failure.
run() {
  local impl=$1 size=$2 port=$3 cmd spid src crc
  local log="$INTEROP_OUT/speed-$impl-$size-$port"
  local args=(-d rxe0 -g "$RXE_GID_V4" -p "$port" -s "$size")
  if [[ $impl == c ]]; then
    cmd=(cping); args+=(-n "$ITERS")
  else
    cmd=(rdma4j pingpong rc); args+=(-n "$((ITERS + WARMUP))" --warmup "$WARMUP")
  fi
  "${cmd[@]}" "${args[@]}" >"$log.server.log" 2>&1 &
  spid=$!
  wait_listen "$port" "$spid" || { kill "$spid" 2>/dev/null; wait "$spid"; return 1; }
  "${cmd[@]}" "${args[@]}" 10.77.0.1 >"$log.client.log" 2>&1
  crc=$?
  ((crc == 0)) || { sleep 2; kill "$spid" 2>/dev/null; }
  wait "$spid"; src=$?
  if ((crc != 0 || src != 0)); then
    echo "--- $impl -s $size: server exit $src, client exit $crc" >&2
    tail -n 10 "$log.server.log" "$log.client.log" >&2
    return 1
  fi
  sed -n 's/.*iters in .* seconds = \([0-9.]*\) usec\/iter.*/\1/p' "$log.client.log" | head -n 1
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for size in 1 4096; do
  cs=() js=()
  for ((r = 1; r <= REPS; r++)); do
    for impl in c j; do
      port=$((port + 1)) # here: run is called in a subshell
      u="$(run "$impl" "$size" "$port")"
      if [[ -z $u ]]; then
        echo "FAIL speed $impl -s $size run $r (see $INTEROP_OUT/speed-$impl-$size-*)"; fail=1; continue
      fi
      echo "    run $r -s $size $([[ $impl == c ]] && echo "ibv_rc_pingpong" || echo "rdma4j pingpong"): $u usec/iter"
      if [[ $impl == c ]]; then cs+=("$u"); else js+=("$u"); fi
    done
  done
  if ((${#cs[@]} > 0 && ${#js[@]} > 0)); then
    mc="$(median "${cs[@]}")" mj="$(median "${js[@]}")"
    ratio="$(awk -v j="$mj" -v c="$mc" 'BEGIN { printf "%.3f", j / c }')"
    verdict="$(awk -v x="$ratio" 'BEGIN { print (x <= 1.10) ? "within" : "ABOVE" }')"
    echo "SPEED rc -s $size -n $ITERS: rdma4j $mj usec/iter, ibv_rc_pingpong $mc usec/iter (medians of ${#js[@]} and ${#cs[@]}): ratio $ratio, $verdict the 1.10 limit"
    echo "PASS speed rc -s $size (every run finished)"
  fi
done

((fail == 0))
