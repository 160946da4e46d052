#!/usr/bin/env bash
# Interop job, runs inside the rxe VM: QP1 of the soft device (GsiPort) against the kernel's IB CM on
# rxe0. interop/gsi/CmProbe.java (run from source) makes a soft UDP device in namespace peer, opens
# its QP1 and sends a hand-built CM REQ MAD to QP1 of rxe0 for an rdma_cm TCP-port service id nobody
# listens on (port 7999); the kernel CM must answer with a REJ, reason 8 (invalid service ID), to our
# comm id and TID, from QP1. Over IPv6 (fd77::2 -> fd77::1, UDP socket) and IPv4 (10.77.0.2 ->
# 10.77.0.1, raw socket so that rxe accepts our ICRC). Needs only verbs and soft built on the host
# (./mvnw -pl verbs,soft package -DskipTests). Then, with `rping -s` listening on rxe0 (port 7174),
# a REQ carrying rdma_cm's private-data header must be accepted by the kernel's rdma_cm and answered
# with a REP (the probe then rejects it). Prints one PASS/FAIL line per run, then rxe0's hw_counters
# and rxe's kernel messages, and exits non-zero if any failed.
# interop: opt-in (the rping job covers the CM against the kernel end to end; run this one by name to
# look at QP1 alone: bash interop/run.sh gsi)
set -uo pipefail

REPO="$(cd "$INTEROP_DIR/.." && pwd)"
JAVA="${INTEROP_JAVA:-${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java}"
[[ -x $JAVA ]] || JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
jar_of() { ls "$REPO/$1/target/rdma4j-$1-"*.jar 2>/dev/null | grep -v -e sources -e javadoc -e tests | head -n 1; }
VERBS_JAR="$(jar_of verbs)" SOFT_JAR="$(jar_of soft)"
if [[ -z $VERBS_JAR || -z $SOFT_JAR ]]; then
  echo "FAIL gsi: build verbs and soft on the host first (./mvnw -pl verbs,soft package -DskipTests)"
  exit 1
fi
pass=0 fail=0 mark=$SECONDS

result() {
  local t=$((SECONDS - mark)); mark=$SECONDS
  if [[ $2 -eq 0 ]]; then echo "PASS $1 [${t}s]"; pass=$((pass + 1)); else echo "FAIL $1 [${t}s] ($3)"; fail=$((fail + 1)); fi
}

. "$INTEROP_DIR/net-setup.sh" || { echo "FAIL net-setup"; exit 1; }

counters() { grep -H . /sys/class/infiniband/rxe0/ports/1/hw_counters/* 2>/dev/null | sed 's|.*/||' | paste -sd' '; }

# probe NAME BIND DEST MODE [PORT EXPECT]
probe() {
  local log="$INTEROP_OUT/gsi-$1.log" rc
  echo "--- rxe0 hw_counters before $1: $(counters)"
  ip netns exec peer timeout 300 "$JAVA" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
    --enable-native-access=ALL-UNNAMED,org.rdma4j.verbs,org.rdma4j.soft \
    -p "$VERBS_JAR:$SOFT_JAR" --add-modules org.rdma4j.soft \
    "$REPO/interop/gsi/CmProbe.java" "$2" "$3" "$4" "${5:-7999}" "${6:-rej}" >"$log" 2>&1
  rc=$?
  sed 's/^/    /' "$log"
  echo "--- rxe0 hw_counters after $1: $(counters)"
  grep -q '^PASS' "$log" || rc=1
  if [[ ${6:-rej} == rep ]]; then
    result "CM REQ to rping -s on rxe0 answered by REP ($1: $2 -> $3, mode $4)" "$rc" "probe exit $rc"
  else
    result "CM REQ to rxe0 QP1 answered by REJ 8 ($1: $2 -> $3, mode $4)" "$rc" "probe exit $rc"
  fi
}

# with_rping NAME BIND DEST MODE: probe for a REP while rping -s listens on DEST port 7174
with_rping() {
  local rlog="$INTEROP_OUT/rping-$1.log"
  timeout 240 rping -s -v -a "$3" -p 7174 -C 1 >"$rlog" 2>&1 &
  local rpid=$!
  probe "$1-rep" "$2" "$3" "$4" 7174 rep
  kill "$rpid" 2>/dev/null; wait "$rpid" 2>/dev/null
  echo "--- rping -s ($1) said:"; sed 's/^/    /' "$rlog"
}

probe v6 "$PEER_ADDR_V6" "$RXE_ADDR_V6" auto
probe v4 "$PEER_ADDR_V4" "$RXE_ADDR_V4" raw
with_rping v6 "$PEER_ADDR_V6" "$RXE_ADDR_V6" auto
with_rping v4 "$PEER_ADDR_V4" "$RXE_ADDR_V4" raw

echo "--- kernel messages (rxe, cm, mad):"
dmesg | grep -i -e rxe -e ' cm' -e mad | tail -n 20
echo "gsi: $pass passed, $fail failed"
((fail == 0))
