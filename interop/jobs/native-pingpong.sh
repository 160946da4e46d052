#!/usr/bin/env bash
# Interop job, runs inside the rxe VM: the rdma4j tool on the native provider (libibverbs through FFM)
# on the kernel's rxe0, against rdma-core's tools and against rdma4j's soft device over UDP:
#   devinfo   `rdma4j devinfo -d rxe0` against `ibv_devinfo -d rxe0`, diffed line for line (and -v)
#   n-c       `rdma4j pingpong rc -d rxe0` against `ibv_rc_pingpong -d rxe0`, both ways (both ends on rxe0)
#   n-s / s-n native on rxe0 (root namespace) against soft over UDP (namespace peer, fd77::2):
#             pingpong rc, uc, ud, srq, both ways (first named side is the server)
#   stress    the two-JVM `rdma4j stress` (no faults): native on rxe0 against soft over UDP, native as the server (soft as the server: INTEROP_STRESS_SOFT_SERVER=1, see below)
# Every pingpong uses -c (contents checked). Prints one PASS/FAIL line per run, exits non-zero if any
# failed. By default 7 pingpong pairs (every pairing and transport, each direction at least once);
# INTEROP_FULL=1 runs 13 (each pairing and transport both ways). When the native provider cannot run, says why once ("native provider unavailable: ...")
# and fails.
set -uo pipefail

. "$INTEROP_DIR/tools-env.sh" native-pingpong || exit 1
ITERS="${INTEROP_PINGPONG_ITERS:-50}"
pass=0 fail=0 port=18700 mark=$SECONDS

result() {
  local t=$((SECONDS - mark)); mark=$SECONDS
  if [[ $2 -eq 0 ]]; then echo "PASS $1 [${t}s]"; pass=$((pass + 1)); else echo "FAIL $1 [${t}s] ($3)"; fail=$((fail + 1)); fi
}

. "$INTEROP_DIR/net-setup.sh" || { echo "FAIL net-setup"; exit 1; }

ACCESS=--enable-native-access=ALL-UNNAMED,org.rdma4j.verbs,org.rdma4j.soft,org.rdma4j.nativeverbs
rdma4j() { # the rdma4j tool in the root namespace (rxe0, native provider)
  # shellcheck disable=SC2086 # RDMA4J_INTEROP_JAVA_OPTS is a list of options
  timeout 240 "$JAVA" $TOOL_AOT_OPTS ${RDMA4J_INTEROP_JAVA_OPTS:-} -XX:TieredStopAtLevel=1 "$ACCESS" \
    -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}
rdma4j_peer() { # the rdma4j tool in namespace peer (soft over UDP)
  # shellcheck disable=SC2086
  ip netns exec peer timeout 240 "$JAVA" $TOOL_AOT_OPTS ${RDMA4J_INTEROP_JAVA_OPTS:-} -XX:TieredStopAtLevel=1 "$ACCESS" \
    -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}

wait_listen() { # PORT NETNS PID: until the server listens; not once it has exited
  local i
  for ((i = 0; i < 300; i++)); do
    ${2:+ip netns exec "$2"} ss -Htln "sport = :$1" 2>/dev/null | grep -q . && return 0
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}

# --- devinfo first: it also tells whether the native provider works here at all.
t0=$SECONDS
ibv_devinfo -d rxe0 >"$INTEROP_OUT/devinfo.c.txt" 2>&1
rdma4j devinfo -d rxe0 >"$INTEROP_OUT/devinfo.java.txt" 2>"$INTEROP_OUT/devinfo.java.err"
jrc=$?
if ((jrc != 0)) || ! grep -q "hca_id:[[:space:]]*rxe0" "$INTEROP_OUT/devinfo.java.txt"; then
  cat "$INTEROP_OUT/devinfo.java.txt" "$INTEROP_OUT/devinfo.java.err"
  why="$(grep -m1 -i -E 'native|unavailable|no device|not found' "$INTEROP_OUT/devinfo.java.err" | sed 's/^[[:space:]]*//')"
  echo "FAIL native-pingpong: native provider unavailable: ${why:-rdma4j devinfo -d rxe0 exited $jrc}"
  exit 1
fi
if diff -u "$INTEROP_OUT/devinfo.c.txt" "$INTEROP_OUT/devinfo.java.txt" >"$INTEROP_OUT/devinfo.diff"; then
  mark=$t0; result "devinfo -d rxe0 matches ibv_devinfo line for line ($(wc -l <"$INTEROP_OUT/devinfo.c.txt") lines)" 0
else
  cat "$INTEROP_OUT/devinfo.diff"; mark=$t0; result "devinfo -d rxe0 matches ibv_devinfo line for line" 1 "diff above"
fi
ibv_devinfo -v -d rxe0 >"$INTEROP_OUT/devinfo-v.c.txt" 2>&1
rdma4j devinfo -v -d rxe0 >"$INTEROP_OUT/devinfo-v.java.txt" 2>&1
# rdma4j's -v ends each port with a "counters:" block of its own (rxe's hw_counters) that ibv_devinfo
# does not print: compared without it, and said so.
awk '/^\t+counters:$/ { skip = 1; depth = match($0, /[^\t]/); next }
     skip && match($0, /[^\t]/) > depth { next } { skip = 0; print }' \
  "$INTEROP_OUT/devinfo-v.java.txt" >"$INTEROP_OUT/devinfo-v.java-nocounters.txt"
extra=$(( $(wc -l <"$INTEROP_OUT/devinfo-v.java.txt") - $(wc -l <"$INTEROP_OUT/devinfo-v.java-nocounters.txt") ))
if diff -u "$INTEROP_OUT/devinfo-v.c.txt" "$INTEROP_OUT/devinfo-v.java-nocounters.txt" >"$INTEROP_OUT/devinfo-v.diff"; then
  result "devinfo -v -d rxe0 matches ibv_devinfo -v line for line ($(wc -l <"$INTEROP_OUT/devinfo-v.c.txt") lines; rdma4j adds $extra lines of counters)" 0
else
  cat "$INTEROP_OUT/devinfo-v.diff"; result "devinfo -v -d rxe0 matches ibv_devinfo -v line for line" 1 "diff above"
fi

# side KIND TOOL FAM: the command of one end, in the array CMD. KIND c (rdma-core on rxe0), n (rdma4j,
# native, rxe0) or s (rdma4j, soft over UDP in namespace peer); ADDR the address its server listens on.
side() {
  local kind=$1 tool=$2 fam=$3 gid
  [[ $fam == v6 ]] && gid=$RXE_GID_V6 || gid=$RXE_GID_V4
  case $kind in
    c) CMD=(timeout 240 "ibv_${tool}_pingpong" -d rxe0 -g "$gid"); NS=""; ADDR=10.77.0.1 ;;
    n) CMD=(rdma4j pingpong "$tool" -d rxe0 -g "$gid"); NS=""; ADDR=10.77.0.1 ;;
    s) if [[ $fam == v6 ]]; then CMD=(rdma4j_peer pingpong "$tool" --bind fd77::2 -g 1)
       else CMD=(rdma4j_peer pingpong "$tool" --bind 10.77.0.2 --udp-mode raw -g 1); fi
       NS=peer; ADDR=10.77.0.2 ;;
  esac
}

# pair SERVER CLIENT TOOL FAM SIZE MTU: one pingpong run, SERVER and CLIENT kinds as for side().
pair() {
  local sk=$1 ck=$2 tool=$3 fam=$4 size=$5 mtu=$6
  local name="$tool $sk-$ck $fam -s $size${mtu:+ -m $mtu}"
  port=$((port + 1))
  local log="$INTEROP_OUT/pp-$tool-$sk$ck-$fam-$size-$port"
  local common=(-p "$port" -s "$size" -n "$ITERS" -c) scmd ccmd sns saddr src crc spid
  [[ -n $mtu ]] && common+=(-m "$mtu")
  side "$sk" "$tool" "$fam"; scmd=("${CMD[@]}"); sns=$NS; saddr=$ADDR
  side "$ck" "$tool" "$fam"; ccmd=("${CMD[@]}")
  "${scmd[@]}" "${common[@]}" >"$log.server.log" 2>&1 &
  spid=$!
  if ! wait_listen "$port" "$sns" "$spid"; then
    kill "$spid" 2>/dev/null; wait "$spid"; tail -n 20 "$log.server.log"; result "$name" 1 "server did not listen"; return
  fi
  "${ccmd[@]}" "${common[@]}" "$saddr" >"$log.client.log" 2>&1
  crc=$?
  ((crc == 0)) || { sleep 2; kill "$spid" 2>/dev/null; }
  wait "$spid"; src=$?
  local ok=0
  ((src == 0 && crc == 0)) || ok=1
  grep -q "iters in" "$log.server.log" || ok=1
  grep -q "iters in" "$log.client.log" || ok=1
  if ((ok != 0)); then
    echo "--- $name: server (exit $src):"; tail -n 20 "$log.server.log"
    echo "--- $name: client (exit $crc):"; tail -n 20 "$log.client.log"
  else
    echo "    server: $(grep 'iters in' "$log.server.log")"
    echo "    client: $(grep 'iters in' "$log.client.log")"
  fi
  result "$name" $ok "server exit $src, client exit $crc"
}

# --- native against rdma-core, both on rxe0
pair n c rc v4 4096 1024
pair c n rc v6 1 1024
if interop_full; then
  pair c n rc v4 4096 1024
  pair n c rc v6 1 1024
fi

# --- native on rxe0 against soft over UDP, all four transports (by default each in one direction,
# both directions covered; INTEROP_FULL=1: each both ways)
if interop_full; then
  for d in "n s" "s n"; do
    read -r a b <<<"$d"
    pair "$a" "$b" rc v6 4096 1024
    pair "$a" "$b" uc v6 4096 1024
    pair "$a" "$b" ud v6 1024 ""
    pair "$a" "$b" srq v6 1024 1024
  done
else
  pair n s rc v6 4096 1024
  pair s n uc v6 4096 1024
  pair n s ud v6 1024 ""
  pair s n srq v6 1024 1024
fi
pair n s rc v4 4096 1024

# --- two-JVM stress, no faults: native on rxe0 against soft over UDP, native as the server
STRESS_MESSAGES="${INTEROP_STRESS_MESSAGES:-2000}"
stress_line='^stress: messages=[0-9]+ delivered=([0-9]+) data_errors=0 duplicate_executions=0 retransmits=[0-9]+$'
stress() { # SERVER-KIND CLIENT-KIND
  local sk=$1 ck=$2 name="stress $1-$2 v6 --messages $STRESS_MESSAGES (no faults)"
  port=$((port + 1))
  local log="$INTEROP_OUT/stress-$sk$ck" scmd ccmd saddr sns spid src crc
  local nofaults=(--loss 0 --reorder 0 --dup 0 --corrupt 0)
  if [[ $sk == n ]]; then scmd=(rdma4j stress -d rxe0 -g "$RXE_GID_V6"); sns=""; saddr=10.77.0.1
  else scmd=(rdma4j_peer stress --bind fd77::2 "${nofaults[@]}"); sns=peer; saddr=10.77.0.2; fi
  if [[ $ck == n ]]; then ccmd=(rdma4j stress -d rxe0 -g "$RXE_GID_V6")
  else ccmd=(rdma4j_peer stress --bind fd77::2 "${nofaults[@]}"); fi
  "${scmd[@]}" -p "$port" >"$log.server.log" 2>&1 &
  spid=$!
  if ! wait_listen "$port" "$sns" "$spid"; then
    kill "$spid" 2>/dev/null; wait "$spid"; tail -n 20 "$log.server.log"; result "$name" 1 "server did not listen"; return
  fi
  "${ccmd[@]}" -p "$port" --messages "$STRESS_MESSAGES" "$saddr" >"$log.client.log" 2>&1
  crc=$?
  ((crc == 0)) || { sleep 2; kill "$spid" 2>/dev/null; }
  wait "$spid"; src=$?
  local ok=0
  ((src == 0 && crc == 0)) || ok=1
  tail -n 1 "$log.server.log" | grep -Eq "$stress_line" || ok=1
  tail -n 1 "$log.client.log" | grep -Eq "$stress_line" || ok=1
  if ((ok != 0)); then
    echo "--- $name: server (exit $src):"; tail -n 25 "$log.server.log"
    echo "--- $name: client (exit $crc):"; tail -n 25 "$log.client.log"
  else
    echo "    $(tail -n 1 "$log.client.log")"
  fi
  result "$name" $ok "server exit $src, client exit $crc"
}
stress n s
# Soft as the server and the native provider as the client is opt-in: under TCG the soft server
# falls behind rxe's retransmission timer and rxe's retries swamp it (2026-11-24 CI rehearsal: 924
# of 2000 messages in 213 s, 7327 completer retries on rxe0, data intact, then the time limit).
if [[ ${INTEROP_STRESS_SOFT_SERVER:-0} == 1 ]]; then
  stress s n
fi

echo "--- rxe0 hw_counters: $(grep -H . /sys/class/infiniband/rxe0/ports/1/hw_counters/* 2>/dev/null | sed 's|.*/||' | paste -sd' ')"
echo "native-pingpong: $pass passed, $fail failed"
((fail == 0))
