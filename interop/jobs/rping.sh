#!/usr/bin/env bash
# Interop job, runs inside the rxe VM: `rdma4j rping` (rdma4j's connection manager: the IB CM as MADs
# on the soft device's QP1) against librdmacm's `rping` on rxe0 (the kernel's rdma_cm and ib_cm), 100
# validated pings each way:
#   j2c  rdma4j rping -s on a soft UDP device in namespace peer, rping -c on rxe0
#   c2j  rping -s on rxe0, rdma4j rping -c on a soft UDP device in namespace peer
#   n2c  rdma4j rping -s on rxe0 itself (the native provider: its cm goes through librdmacm), rping -c;
#        over IPv4 the rdma4j server listens on any address (rping's default), so on every device
#   c2n  rping -s on rxe0, rdma4j rping -c on rxe0 itself (native provider)
# over IPv6 (fd77::2 <-> fd77::1) and IPv4 (10.77.0.2 <-> 10.77.0.1; the soft device uses a raw
# socket there, so that rxe accepts our ICRC: see RXE-VM.md). A run passes when both ends exit 0 and
# the client printed 100 "ping data: rdma-ping-N: ..." lines, N = 0..99, with rping's pattern.
# rping's -q (the program creates its QP and moves it with rdma_init_qp_attr's values; the CM only
# carries its number) is used by the rdma4j side in every IPv4 run, and by C rping's client in j2c v6.
# C rping runs under `stdbuf -oL`: its stderr lines (DISCONNECT) must not land inside a half-written
# stdout ping line in the shared log.
#
#   INTEROP_RPING_COUNT   pings per run (default 100)
#   INTEROP_FULL=1        all 8 runs; by default 6 (n2c v6 and c2n v4 are left out: the native
#                         provider's server and client are each run once, in the other family)
set -uo pipefail

. "$INTEROP_DIR/tools-env.sh" rping || exit 1
COUNT="${INTEROP_RPING_COUNT:-100}"
pass=0 fail=0 port=7174

. "$INTEROP_DIR/net-setup.sh" || { echo "FAIL net-setup"; exit 1; }

ACCESS=--enable-native-access=ALL-UNNAMED,org.rdma4j.verbs,org.rdma4j.soft,org.rdma4j.nativeverbs
rdma4j_peer() { # the rdma4j tool in namespace peer (soft over UDP)
  # shellcheck disable=SC2086 # option lists
  ip netns exec peer timeout 240 "$JAVA" $TOOL_AOT_OPTS ${RDMA4J_INTEROP_JAVA_OPTS:-} -XX:TieredStopAtLevel=1 "$ACCESS" \
    -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}

rdma4j_host() { # the rdma4j tool beside rping (the native provider finds rxe0 by its address)
  # shellcheck disable=SC2086 # option lists
  timeout 240 "$JAVA" $TOOL_AOT_OPTS ${RDMA4J_INTEROP_JAVA_OPTS:-} -XX:TieredStopAtLevel=1 "$ACCESS" \
    -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}

wait_listen_cm() { # PID LOG: until the rdma4j server says it listens (-d), not once it has exited
  local i
  for ((i = 0; i < 900; i++)); do
    grep -q '^listening on' "$2" 2>/dev/null && return 0
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}

# The client's ping lines are rping's: "ping data: rdma-ping-N: " then printable ASCII from 'A' + N % 58.
check_pings() { # LOG
  awk -v want="$COUNT" '
    /^ping data: rdma-ping-[0-9]+: / {
      n = substr($3, 11) + 0
      if (n != seen) { print "ping " seen " missing (got " n ")"; bad = 1; exit }
      seen++
    }
    END { if (!bad && seen != want) print seen " ping lines, expected " want }' "$1"
}

result() { # NAME RC DETAIL
  if [[ $2 -eq 0 ]]; then echo "PASS $1"; pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
}

# run DIRECTION FAMILY [RDMA4J_Q [C_Q [nosrc]]]: the next two are "-q" or "" for the rdma4j and the C
# side; nosrc gives the rdma4j client of c2j no -I, so its --bind device is the source (as rdma_cm's route)
run() {
  local dir=$1 fam=$2 t0=$SECONDS saddr extra=() log="$INTEROP_OUT/rping-$1-$2${5:+-$5}" spid src crc problems
  local jq=(${3:-}) cq=(${4:-}) name="rping $1 $2${3:+ rdma4j$3}${4:+ C$4}${5:+ $5}" src_opt=()
  port=$((port + 1))
  if [[ $fam == v6 ]]; then jaddr=$PEER_ADDR_V6 caddr=$RXE_ADDR_V6; else jaddr=$PEER_ADDR_V4 caddr=$RXE_ADDR_V4; extra=(--udp-mode raw); fi
  if [[ $dir == n2c || $dir == c2n ]]; then
    jaddr=$caddr # both ends on rxe0: no soft device, no --bind
  fi
  if [[ $dir == n2c ]]; then
    local listen=(-a "$caddr")
    [[ $fam == v4 ]] && listen=() # rping's default: any IPv4 address (a wildcard listener on every device)
    rdma4j_host rping -s "${listen[@]}" -p "$port" -V -d "${jq[@]}" --accept-timeout 180 >"$log.server.log" 2>&1 &
    spid=$!
    if ! wait_listen_cm "$spid" "$log.server.log"; then
      result "$name" 1 "the rdma4j server did not listen: $(tail -n 5 "$log.server.log" | paste -sd' ')"
      kill "$spid" 2>/dev/null; wait "$spid"; return
    fi
    timeout 120 stdbuf -oL rping -c -a "$caddr" -p "$port" -C "$COUNT" -v -V -d "${cq[@]}" >"$log.client.log" 2>&1; crc=$?
  elif [[ $dir == j2c ]]; then
    rdma4j_peer rping -s -a "$jaddr" -p "$port" -V -d "${jq[@]}" --bind "$jaddr" "${extra[@]}" --accept-timeout 180 \
      >"$log.server.log" 2>&1 &
    spid=$!
    if ! wait_listen_cm "$spid" "$log.server.log"; then
      result "$name" 1 "the rdma4j server did not listen: $(tail -n 5 "$log.server.log" | paste -sd' ')"
      kill "$spid" 2>/dev/null; wait "$spid"; return
    fi
    timeout 120 stdbuf -oL rping -c -a "$jaddr" -p "$port" -C "$COUNT" -v -V -d "${cq[@]}" >"$log.client.log" 2>&1; crc=$?
  else
    timeout 200 stdbuf -oL rping -s -a "$caddr" -p "$port" -v -V -d "${cq[@]}" >"$log.server.log" 2>&1 &
    spid=$!
    local i
    for ((i = 0; i < 50; i++)); do # rping's server listens within a moment; no line says so
      sleep 0.2
      kill -0 "$spid" 2>/dev/null || break
    done
    if [[ $dir == c2n ]]; then
      rdma4j_host rping -c -a "$caddr" -p "$port" -C "$COUNT" -v -V -d "${jq[@]}" >"$log.client.log" 2>&1; crc=$?
    else
      [[ ${5:-} == nosrc ]] || src_opt=(-I "$jaddr")
      rdma4j_peer rping -c -a "$caddr" "${src_opt[@]}" -p "$port" -C "$COUNT" -v -V -d "${jq[@]}" --bind "$jaddr" "${extra[@]}" \
        >"$log.client.log" 2>&1; crc=$?
    fi
  fi
  local deadline=$((SECONDS + 30))
  while kill -0 "$spid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.5; done
  kill "$spid" 2>/dev/null
  wait "$spid"; src=$?
  problems="$(check_pings "$log.client.log")"
  ((crc == 0)) || problems+=" client exit $crc;"
  ((src == 0)) || problems+=" server exit $src;"
  if [[ -n $problems ]]; then
    result "$name [$((SECONDS - t0))s]" 1 "$problems"
    echo "--- server log:"; tail -n 15 "$log.server.log"
    echo "--- client log:"; tail -n 15 "$log.client.log"
  else
    result "$name [$((SECONDS - t0))s]" 0 "$COUNT validated pings"
  fi
}

counters() { grep -H . /sys/class/infiniband/rxe0/ports/1/hw_counters/* 2>/dev/null | sed 's|.*/||' | paste -sd' '; }
echo "rxe0 hw_counters at the start: $(counters)"
run j2c v6 "" -q
echo "rxe0 hw_counters: $(counters)"
run c2j v6
run c2j v6 "" "" nosrc
echo "rxe0 hw_counters: $(counters)"
run j2c v4 -q
run c2j v4 -q
interop_full && run n2c v6
run c2n v6
run n2c v4 -q
interop_full && run c2n v4 -q
echo "rping: $pass passed, $fail failed"
((fail == 0))
