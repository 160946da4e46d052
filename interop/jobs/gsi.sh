#!/usr/bin/env bash
# Interop job, runs inside the rxe VM: QP1 of the soft device (GsiPort) against the kernel's IB CM on
# rxe0. interop/gsi/CmRejProbe.java (run from source) makes a soft UDP device in namespace peer, opens
# its QP1 and sends a hand-built CM REQ MAD to QP1 of rxe0 for an rdma_cm TCP-port service id nobody
# listens on (port 7999); the kernel CM must answer with a REJ, reason 8 (invalid service ID), to our
# comm id and TID, from QP1. Over IPv6 (fd77::2 -> fd77::1, UDP socket) and IPv4 (10.77.0.2 ->
# 10.77.0.1, raw socket so that rxe accepts our ICRC). Needs only verbs and soft built on the host
# (./mvnw -pl verbs,soft package -DskipTests). Prints one PASS/FAIL line per run, then rxe0's
# hw_counters and rxe's kernel messages, and exits non-zero if any failed.
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

# probe NAME BIND DEST MODE
probe() {
  local log="$INTEROP_OUT/gsi-$1.log" rc
  echo "--- rxe0 hw_counters before $1: $(counters)"
  ip netns exec peer timeout 300 "$JAVA" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
    --enable-native-access=ALL-UNNAMED,org.rdma4j.verbs,org.rdma4j.soft \
    -p "$VERBS_JAR:$SOFT_JAR" --add-modules org.rdma4j.soft \
    "$REPO/interop/gsi/CmRejProbe.java" "$2" "$3" "$4" 7999 >"$log" 2>&1
  rc=$?
  sed 's/^/    /' "$log"
  echo "--- rxe0 hw_counters after $1: $(counters)"
  grep -q '^PASS' "$log" || rc=1
  result "CM REQ to rxe0 QP1 answered by REJ 8 ($1: $2 -> $3, mode $4)" "$rc" "probe exit $rc"
}

probe v6 "$PEER_ADDR_V6" "$RXE_ADDR_V6" auto
probe v4 "$PEER_ADDR_V4" "$RXE_ADDR_V4" raw

echo "--- kernel messages (rxe, cm, mad):"
dmesg | grep -i -e rxe -e ' cm' -e mad | tail -n 20
echo "gsi: $pass passed, $fail failed"
((fail == 0))
