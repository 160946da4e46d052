#!/usr/bin/env bash
# Interop job, runs inside the rxe VM: rdma4j's pingpong on a soft RoCEv2 device (UDP, in namespace
# peer, bound to fd77::2 or 10.77.0.2) against rdma-core's ibv_{rc,uc,ud,srq}_pingpong on the kernel's
# rxe0, both directions (Java server / C client and C server / Java client), over IPv6 (UDP socket
# with UDP_NO_CHECK6_RX) and IPv4 (raw socket, so rxe accepts our ICRC), sizes 1 to 65536, MTU 1024
# and 4096, always with -c (contents checked).
# Prints one PASS/FAIL line per run and exits non-zero if any failed.
set -uo pipefail

REPO="$(cd "$INTEROP_DIR/.." && pwd)"
JAVA="${INTEROP_JAVA:-${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java}"
[[ -x $JAVA ]] || JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
TOOLS_JAR="$(ls "$REPO"/tools/target/rdma4j-tools-*.jar 2>/dev/null | grep -v -e sources -e javadoc | head -n 1)"
if [[ -z $TOOLS_JAR || ! -d $REPO/tools/target/lib ]]; then
  echo "FAIL pingpong: build the project on the host first (./mvnw -DskipTests install)"; exit 1
fi
MODULE_PATH="$REPO/tools/target/lib:$TOOLS_JAR"
ITERS="${INTEROP_PINGPONG_ITERS:-50}"
pass=0 fail=0 port=18600 mark=$SECONDS

result() {
  local t=$((SECONDS - mark)); mark=$SECONDS
  if [[ $2 -eq 0 ]]; then echo "PASS $1 [${t}s]"; pass=$((pass + 1)); else echo "FAIL $1 [${t}s] ($3)"; fail=$((fail + 1)); fi
}

. "$INTEROP_DIR/net-setup.sh" || { echo "FAIL net-setup"; exit 1; }

rdma4j() { # runs the rdma4j tool in namespace peer
  ip netns exec peer timeout 180 "$JAVA" -XX:TieredStopAtLevel=1 --enable-native-access=ALL-UNNAMED,org.rdma4j.soft \
    -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}

wait_listen() { # PORT [NETNS]
  local i
  for ((i = 0; i < 300; i++)); do
    ${2:+ip netns exec "$2"} ss -Htln "sport = :$1" 2>/dev/null | grep -q . && return 0
    sleep 0.2
  done
  return 1
}

# pair TOOL DIRECTION FAMILY SIZE MTU
#   TOOL rc|uc|ud|srq; DIRECTION j2c (Java server, C client) or c2j; FAMILY v6|v4
pair() {
  local tool=$1 dir=$2 fam=$3 size=$4 mtu=$5
  local name="$tool $dir $fam -s $size${mtu:+ -m $mtu}"
  local log="$INTEROP_OUT/pp-$tool-$dir-$fam-$size-${mtu:-x}"
  local cgid jaddr jargs=() common=(-s "$size" -n "$ITERS" -c)
  port=$((port + 1))
  if [[ $fam == v6 ]]; then cgid=$RXE_GID_V6; jaddr=fd77::2; else cgid=$RXE_GID_V4; jaddr=10.77.0.2; jargs=(--udp-mode raw); fi
  [[ -n $mtu ]] && common+=(-m "$mtu")
  local cbin="ibv_${tool}_pingpong" crc jrc cpid jpid
  if [[ $dir == c2j ]]; then
    timeout 180 "$cbin" -d rxe0 -g "$cgid" -p "$port" "${common[@]}" >"$log.c.log" 2>&1 &
    cpid=$!
    if ! wait_listen "$port"; then kill "$cpid" 2>/dev/null; result "$name" 1 "C server did not listen"; return; fi
    rdma4j pingpong "$tool" --bind "$jaddr" "${jargs[@]}" -g 1 -p "$port" "${common[@]}" 10.77.0.1 >"$log.java.log" 2>&1
    jrc=$?
    ((jrc == 0)) || { sleep 2; kill "$cpid" 2>/dev/null; }
    wait "$cpid"; crc=$?
  else
    rdma4j pingpong "$tool" --bind "$jaddr" "${jargs[@]}" -g 1 -p "$port" "${common[@]}" >"$log.java.log" 2>&1 &
    jpid=$!
    if ! wait_listen "$port" peer; then kill "$jpid" 2>/dev/null; wait "$jpid"; cat "$log.java.log"; result "$name" 1 "Java server did not listen"; return; fi
    timeout 180 "$cbin" -d rxe0 -g "$cgid" -p "$port" "${common[@]}" 10.77.0.2 >"$log.c.log" 2>&1
    crc=$?
    ((crc == 0)) || { sleep 2; kill "$jpid" 2>/dev/null; }
    wait "$jpid"; jrc=$?
  fi
  # Both sides must finish and print their throughput and latency lines.
  local ok=0
  ((crc == 0 && jrc == 0)) || ok=1
  grep -q "iters in" "$log.c.log" || ok=1
  grep -q "iters in" "$log.java.log" || ok=1
  if ((ok != 0)); then
    echo "--- $name: C side (exit $crc):"; tail -n 20 "$log.c.log"
    echo "--- $name: Java side (exit $jrc):"; tail -n 20 "$log.java.log"
  else
    echo "    C:    $(grep 'iters in' "$log.c.log")"
    echo "    Java: $(grep 'iters in' "$log.java.log")"
  fi
  result "$name" $ok "C exit $crc, Java exit $jrc"
}

for dir in j2c c2j; do
  pair rc "$dir" v6 4096 1024
  pair rc "$dir" v6 65536 4096
  pair rc "$dir" v6 1 1024
  pair uc "$dir" v6 4096 1024
  pair ud "$dir" v6 1024 ""
  pair rc "$dir" v4 4096 1024
done
# SRQ (16 RC QPs on one SRQ): passes with the rdma-core tool as server and one packet per message.
# Known gap (2026-11-22): rdma4j as the srq server, and 4096-byte messages (4 packets on each of the
# 16 QPs), do not complete against rxe yet; rdma4j<->rdma4j srq works. See the issue 4 note.
pair srq c2j v6 1024 1024
pair rc c2j v4 65536 4096
pair ud j2c v4 512 ""

# Known gap (2026-11-22): RC with `tc netem loss 2%` on the veth passed once and then failed in
# both directions (RETRY_EXC_ERR at rdma4j's requester against rxe's responder): retransmission
# interop is not reliable yet, so it is not part of this job. Loss recovery between rdma4j peers is
# covered by the soft module's chaos and property tests. See the issue 4 note.

echo "--- rxe0 hw_counters: $(grep -H . /sys/class/infiniband/rxe0/ports/1/hw_counters/* 2>/dev/null | sed 's|.*/||' | paste -sd' ')"
echo "pingpong: $pass passed, $fail failed"
((fail == 0))
