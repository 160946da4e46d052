#!/usr/bin/env bash
# Interop job, runs inside the rxe VM: rdmacm-utils' `rdma_server`/`rdma_client` (librdmacm's
# rdma_create_ep layer on rxe0, the kernel's rdma_cm) against `rdma4j rdma-server`/`rdma4j rdma-client`
# (rdma4j's Endpoint), one 16-byte SEND each way per connection:
#   j2c  rdma4j rdma-server on a soft UDP device in namespace peer, C rdma_client on rxe0; before it a
#        C rdma_client to a port nobody listens on, which the soft device's CM must refuse (REJ), and a
#        C udaddy (UD: SIDR_REQ) nobody serves, which it must answer with SIDR_REP status 1
#   n2c  one rdma4j rdma-server on rxe0 itself (native provider, librdmacm), listening on :: and serving
#        a C rdma_client over IPv4 and one over IPv6 (--connections 2: one JVM)
#   c2j  C rdma_server on rxe0, rdma4j rdma-client on a soft UDP device in namespace peer
#   c2n  C rdma_server on rxe0, rdma4j rdma-client on rxe0 itself (native provider)
# and ucmatose (librdmacm's cmatose) against `rdma4j cmatose`, 4 connections at once, 10 messages of
# 100 bytes each way on each, the server disconnecting them all:
#   cmatose j2c  rdma4j cmatose server on a soft UDP device in peer, ucmatose -s on rxe0
#   cmatose c2j  ucmatose server on rxe0, rdma4j cmatose -s on a soft UDP device in peer
# over IPv6 (fd77::2 <-> fd77::1) and IPv4 (10.77.0.2 <-> 10.77.0.1; the soft device in raw mode, see
# RXE-VM.md). A run passes when both ends exit 0 with the programs' "start"/"end 0" lines (the rdma4j
# end with -v also says it received 16 bytes); a cmatose run when both print "return status 0" after
# "data transfers complete". And udaddy (UD ids: SIDR_REQ/SIDR_REP between the kernel's rdma_cm and
# rdma4j's cm, then -C 10 datagrams of 100 bytes each way, the server answering through an AH made from
# the receive) against `rdma4j udaddy`, IPv4, on port 7174 (C udaddy's, fixed), 2 ids per client:
#   udaddy j2c  rdma4j udaddy server on a soft UDP device in peer, C udaddy -s on rxe0
#   udaddy n2c  rdma4j udaddy server on rxe0 itself (native provider), C udaddy -s on rxe0
#   udaddy c2j  C udaddy server on rxe0, rdma4j udaddy -s on a soft UDP device in peer
#   udaddy c2n  the same C server (-c 4), rdma4j udaddy -s on rxe0 itself (native provider)
# (the two rdma4j servers run at once, and the two clients: their JVMs start side by side). A udaddy
# run passes when both ends print "data transfers complete", "test complete" and "return status 0".
# Thirteen JVMs in all with INTEROP_FULL=1; by default the rdma4j rdma-client runs once against the
# C rdma_server per provider (c2j over IPv6, c2n over IPv4), eleven JVMs.
set -uo pipefail

. "$INTEROP_DIR/tools-env.sh" cmutils || exit 1
pass=0 fail=0 port=7480

. "$INTEROP_DIR/net-setup.sh" || { echo "FAIL net-setup"; exit 1; }

ACCESS=--enable-native-access=ALL-UNNAMED,org.rdma4j.verbs,org.rdma4j.soft,org.rdma4j.nativeverbs
rdma4j_peer() { # the rdma4j tool in namespace peer (soft over UDP)
  # shellcheck disable=SC2086 # option lists
  ip netns exec peer timeout 150 "$JAVA" $TOOL_AOT_OPTS ${RDMA4J_INTEROP_JAVA_OPTS:-} -XX:TieredStopAtLevel=1 "$ACCESS" \
    -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}

rdma4j_host() { # the rdma4j tool beside the C programs (the native provider finds rxe0 by its address)
  # shellcheck disable=SC2086 # option lists
  timeout 150 "$JAVA" $TOOL_AOT_OPTS ${RDMA4J_INTEROP_JAVA_OPTS:-} -XX:TieredStopAtLevel=1 "$ACCESS" \
    -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}

wait_line() { # PID LOG PATTERN: until LOG has a line matching PATTERN, not once PID has exited
  local i
  for ((i = 0; i < 600; i++)); do
    grep -q "$3" "$2" 2>/dev/null && return 0
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}

result() { # NAME RC DETAIL
  if [[ $2 -eq 0 ]]; then echo "PASS $1"; pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
}

# check_c LOG PROGRAM: the C program's whole output is its two lines
check_c() {
  [[ "$(cat "$1")" == "$2: start"$'\n'"$2: end 0" ]] || echo "$2 printed: $(paste -sd'|' "$1");"
}

# check_j LOG PROGRAM [CONNECTIONS]: the rdma4j side received 16 bytes and ended with 0
check_j() {
  local n=${3:-1} got
  got=$(grep -c '^received 16 bytes$' "$1")
  ((got == n)) || echo "rdma4j $2 received $got messages, expected $n;"
  grep -qx "$2: end 0" "$1" || echo "rdma4j $2 did not end with 0: $(tail -n 3 "$1" | paste -sd'|');"
}

finish() { # NAME T0 PROBLEMS LOG...
  local name=$1 t0=$2 problems=$3 f
  shift 3
  if [[ -n $problems ]]; then
    result "$name [$((SECONDS - t0))s]" 1 "$problems"
    for f in "$@"; do echo "--- $(basename "$f"):"; tail -n 12 "$f"; done
  else
    result "$name [$((SECONDS - t0))s]" 0 "16 bytes each way"
  fi
}

stop() { # PID: wait up to 30 s for it to end, then kill it; its exit status in src
  local deadline=$((SECONDS + 30))
  while kill -0 "$1" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  kill "$1" 2>/dev/null
  wait "$1"; src=$?
}

fam_addrs() { # FAMILY: sets jaddr (peer), caddr (rxe0), extra (soft device options)
  if [[ $1 == v6 ]]; then jaddr=$PEER_ADDR_V6 caddr=$RXE_ADDR_V6 extra=(); else
    jaddr=$PEER_ADDR_V4 caddr=$RXE_ADDR_V4 extra=(--udp-mode raw); fi
}

# j2c FAMILY: rdma4j rdma-server (soft, peer) <- C rdma_client (rxe0)
j2c() {
  local t0=$SECONDS log="$INTEROP_OUT/cmutils-j2c-$1" spid src crc problems=''
  fam_addrs "$1"
  port=$((port + 1))
  rdma4j_peer rdma-server -s "$jaddr" -p "$port" -v --bind "$jaddr" "${extra[@]}" --accept-timeout 120 \
    >"$log.server.log" 2>&1 &
  spid=$!
  if ! wait_line "$spid" "$log.server.log" '^listening on'; then
    result "rdma_server j2c $1" 1 "the rdma4j server did not listen: $(tail -n 5 "$log.server.log" | paste -sd' ')"
    kill "$spid" 2>/dev/null; wait "$spid"; return
  fi
  # a port nobody listens on: the soft device's CM answers the kernel's REQ with a REJ
  timeout 60 rdma_client -s "$jaddr" -p $((port + 500)) >"$log.refused.log" 2>&1; crc=$?
  if ((crc == 255)) && grep -q '^rdma_connect: Connection refused' "$log.refused.log"; then
    result "rdma_client to a port without listener j2c $1" 0 "refused"
  else
    result "rdma_client to a port without listener j2c $1" 1 "exit $crc: $(paste -sd'|' "$log.refused.log")"
  fi
  # and udaddy's SIDR_REQ (UDP port space, port 7174) nobody serves there: a SIDR_REP with status 1
  timeout 60 udaddy -s "$jaddr" >"$log.udaddy-refused.log" 2>&1; crc=$?
  if ((crc == 1)) && grep -qx 'udaddy: event: RDMA_CM_EVENT_UNREACHABLE, error: 1' "$log.udaddy-refused.log" &&
     grep -qx 'return status 1' "$log.udaddy-refused.log"; then
    result "udaddy to a port without listener j2c $1" 0 "unreachable"
  else
    result "udaddy to a port without listener j2c $1" 1 "exit $crc: $(paste -sd'|' "$log.udaddy-refused.log")"
  fi
  timeout 60 rdma_client -s "$jaddr" -p "$port" >"$log.client.log" 2>&1; crc=$?
  stop "$spid"
  problems+="$(check_c "$log.client.log" rdma_client)$(check_j "$log.server.log" rdma_server)"
  ((crc == 0)) || problems+=" client exit $crc;"
  ((src == 0)) || problems+=" server exit $src;"
  finish "rdma_server j2c $1" "$t0" "$problems" "$log.server.log" "$log.client.log"
}

# n2c: rdma4j rdma-server (native, rxe0, listening on ::) <- C rdma_client over IPv4, then IPv6
n2c() {
  local t0=$SECONDS log="$INTEROP_OUT/cmutils-n2c" spid src c4 c6 problems=''
  port=$((port + 1))
  rdma4j_host rdma-server -s :: -p "$port" -v --connections 2 --accept-timeout 120 >"$log.server.log" 2>&1 &
  spid=$!
  if ! wait_line "$spid" "$log.server.log" '^listening on'; then
    result "rdma_server n2c" 1 "the rdma4j server did not listen: $(tail -n 5 "$log.server.log" | paste -sd' ')"
    kill "$spid" 2>/dev/null; wait "$spid"; return
  fi
  timeout 60 rdma_client -s "$RXE_ADDR_V4" -p "$port" >"$log.client-v4.log" 2>&1; c4=$?
  timeout 60 rdma_client -s "$RXE_ADDR_V6" -p "$port" >"$log.client-v6.log" 2>&1; c6=$?
  stop "$spid"
  problems+="$(check_c "$log.client-v4.log" rdma_client)$(check_c "$log.client-v6.log" rdma_client)"
  problems+="$(check_j "$log.server.log" rdma_server 2)"
  ((c4 == 0 && c6 == 0)) || problems+=" client exits $c4 (v4) $c6 (v6);"
  ((src == 0)) || problems+=" server exit $src;"
  finish "rdma_server n2c v4+v6" "$t0" "$problems" "$log.server.log" "$log.client-v4.log" "$log.client-v6.log"
}

# c2x DIRECTION FAMILY: C rdma_server (rxe0) <- rdma4j rdma-client, soft in peer (c2j) or native (c2n)
c2x() {
  local t0=$SECONDS log="$INTEROP_OUT/cmutils-$1-$2" spid src crc problems=''
  fam_addrs "$2"
  port=$((port + 1))
  # stdbuf: the C programs' stdout to a file is block-buffered, and the job waits for their first line
  timeout 120 stdbuf -oL rdma_server -s "$caddr" -p "$port" >"$log.server.log" 2>&1 &
  spid=$!
  wait_line "$spid" "$log.server.log" '^rdma_server: start' && sleep 1 # listening a moment later
  if [[ $1 == c2j ]]; then
    rdma4j_peer rdma-client -s "$caddr" -p "$port" -v --bind "$jaddr" "${extra[@]}" >"$log.client.log" 2>&1; crc=$?
  else
    rdma4j_host rdma-client -s "$caddr" -p "$port" -v >"$log.client.log" 2>&1; crc=$?
  fi
  stop "$spid"
  problems+="$(check_c "$log.server.log" rdma_server)$(check_j "$log.client.log" rdma_client)"
  ((crc == 0)) || problems+=" client exit $crc;"
  ((src == 0)) || problems+=" server exit $src;"
  finish "rdma_client $1 $2" "$t0" "$problems" "$log.server.log" "$log.client.log"
}

# cmatose DIRECTION FAMILY: ucmatose against rdma4j cmatose (soft, peer)
cmatose() {
  local t0=$SECONDS log="$INTEROP_OUT/cmutils-cmatose-$1-$2" spid crc problems='' f
  fam_addrs "$2"
  port=$((port + 1))
  local opts=(-c 4 -C 10 -S 100 -p "$port")
  if [[ $1 == j2c ]]; then
    rdma4j_peer cmatose -v -b "$jaddr" "${opts[@]}" --bind "$jaddr" "${extra[@]}" >"$log.server.log" 2>&1 &
    spid=$!
    if ! wait_line "$spid" "$log.server.log" '^listening on'; then
      result "cmatose j2c $2" 1 "the rdma4j server did not listen: $(tail -n 5 "$log.server.log" | paste -sd' ')"
      kill "$spid" 2>/dev/null; wait "$spid"; return
    fi
    timeout 60 ucmatose -s "$jaddr" "${opts[@]}" >"$log.client.log" 2>&1; crc=$?
  else
    timeout 120 stdbuf -oL ucmatose -b "$caddr" "${opts[@]}" >"$log.server.log" 2>&1 &
    spid=$!
    wait_line "$spid" "$log.server.log" '^cmatose: starting server' && sleep 1
    rdma4j_peer cmatose -s "$caddr" -b "$jaddr" "${opts[@]}" --bind "$jaddr" "${extra[@]}" >"$log.client.log" 2>&1
    crc=$?
  fi
  stop "$spid"
  for f in "$log.server.log" "$log.client.log"; do
    grep -qx 'data transfers complete' "$f" || problems+=" $(basename "$f" .log): no \"data transfers complete\";"
    grep -qx 'return status 0' "$f" || problems+=" $(basename "$f" .log): $(grep '^return status' "$f");"
  done
  ((crc == 0)) || problems+=" client exit $crc;"
  ((src == 0)) || problems+=" server exit $src;"
  if [[ -n $problems ]]; then
    finish "cmatose $1 $2" "$t0" "$problems" "$log.server.log" "$log.client.log"
  else
    result "cmatose $1 $2 [$((SECONDS - t0))s]" 0 "4 connections, 10 messages each way on each"
  fi
}

# udaddy_check NAME T0 SERVER_LOG CLIENT_LOG SERVER_RC CLIENT_RC: a udaddy run's verdict
udaddy_check() {
  local problems='' f
  for f in "$3" "$4"; do
    grep -qx 'data transfers complete' "$f" || problems+=" $(basename "$f" .log): no \"data transfers complete\";"
    grep -qx 'test complete' "$f" || problems+=" $(basename "$f" .log): no \"test complete\";"
    grep -qx 'return status 0' "$f" || problems+=" $(basename "$f" .log): $(grep '^return status' "$f");"
  done
  (($6 == 0)) || problems+=" client exit $6;"
  (($5 == 0)) || problems+=" server exit $5;"
  if [[ -n $problems ]]; then
    finish "$1" "$2" "$problems" "$3" "$4"
  else
    result "$1 [$((SECONDS - $2))s]" 0 "2 ids, 10 datagrams each way on each"
  fi
}

# udaddy_j FAMILY: two rdma4j udaddy servers started together (their JVMs start side by side), one on a
# soft UDP device in peer (j2c), one on rxe0 itself (native, n2c); C udaddy -s on rxe0 against each
udaddy_j() {
  local t0=$SECONDS log="$INTEROP_OUT/cmutils-udaddy" jpid npid jrc nrc c1 c2 t1
  fam_addrs "$1"
  local opts=(-c 2 -C 10 -S 100)
  rdma4j_peer udaddy -v -b "$jaddr" "${opts[@]}" --timeout 100 --bind "$jaddr" "${extra[@]}" \
    >"$log-j2c-$1.server.log" 2>&1 &
  jpid=$!
  rdma4j_host udaddy -v -b "$caddr" "${opts[@]}" --timeout 100 >"$log-n2c-$1.server.log" 2>&1 &
  npid=$!
  if wait_line "$jpid" "$log-j2c-$1.server.log" '^listening on'; then
    timeout 60 udaddy -s "$jaddr" "${opts[@]}" >"$log-j2c-$1.client.log" 2>&1; c1=$?
  else
    c1=1; echo "the rdma4j server did not listen" >"$log-j2c-$1.client.log"
  fi
  t1=$SECONDS
  if wait_line "$npid" "$log-n2c-$1.server.log" '^listening on'; then
    timeout 60 udaddy -s "$caddr" "${opts[@]}" >"$log-n2c-$1.client.log" 2>&1; c2=$?
  else
    c2=1; echo "the rdma4j server did not listen" >"$log-n2c-$1.client.log"
  fi
  stop "$jpid"; jrc=$src
  stop "$npid"; nrc=$src
  udaddy_check "udaddy j2c $1" "$t0" "$log-j2c-$1.server.log" "$log-j2c-$1.client.log" "$jrc" "$c1"
  udaddy_check "udaddy n2c $1" "$t1" "$log-n2c-$1.server.log" "$log-n2c-$1.client.log" "$nrc" "$c2"
}

# udaddy_c FAMILY: one C udaddy server on rxe0 for 4 ids; two rdma4j udaddy -s -c 2 started together, one
# on a soft UDP device in peer (c2j), one on rxe0 itself (native, c2n)
udaddy_c() {
  local t0=$SECONDS log="$INTEROP_OUT/cmutils-udaddy-c2x-$1" spid jpid npid c1 c2 srv
  fam_addrs "$1"
  local opts=(-C 10 -S 100)
  timeout 150 stdbuf -oL udaddy -b "$caddr" -c 4 "${opts[@]}" >"$log.server.log" 2>&1 &
  spid=$!
  wait_line "$spid" "$log.server.log" '^udaddy: starting server' && sleep 1
  rdma4j_peer udaddy -s "$caddr" -b "$jaddr" -c 2 "${opts[@]}" --timeout 100 --bind "$jaddr" "${extra[@]}" \
    >"$log.c2j.client.log" 2>&1 &
  jpid=$!
  rdma4j_host udaddy -s "$caddr" -c 2 "${opts[@]}" --timeout 100 >"$log.c2n.client.log" 2>&1 &
  npid=$!
  wait "$jpid"; c1=$?
  wait "$npid"; c2=$?
  stop "$spid"; srv=$src
  udaddy_check "udaddy c2j $1" "$t0" "$log.server.log" "$log.c2j.client.log" "$srv" "$c1"
  udaddy_check "udaddy c2n $1" "$t0" "$log.server.log" "$log.c2n.client.log" "$srv" "$c2"
}

if [[ -n ${RDMA4J_CMUTILS_ONLY:-} ]]; then # a developer's shortcut: only the runs named, e.g. "udaddy_j v4"
  while read -r -a run; do "${run[@]}"; done <<<"$RDMA4J_CMUTILS_ONLY"
  echo "cmutils: $pass passed, $fail failed"
  ((fail == 0)); exit
fi

j2c v6
j2c v4
n2c
c2x c2j v6
interop_full && c2x c2j v4
interop_full && c2x c2n v6
c2x c2n v4
cmatose j2c v6
cmatose c2j v6
udaddy_j v4
udaddy_c v4
echo "cmutils: $pass passed, $fail failed"
((fail == 0))
