#!/usr/bin/env bash
# Interop job, runs inside the rxe VM: the abstract conformance suites of rdma4j-conformance (package
# org.rdma4j.conformance, docs/SEMANTICS.md) against the native provider (libibverbs through FFM) on the
# kernel's rxe0, with JUnit's console launcher, once per setup of NativeSetups
# (native/src/test/java/org/rdma4j/nativeverbs/conformance/NativeSetups.java):
#   native    rxe0, both ends on it, GID index of ::ffff:10.77.0.1 (RXE_GID_V4); the port-state suite on
#             rxe1, made here on veth2 (veth3 in namespace iso) and taken down with `ip link set veth2 down`
# Prints one FAIL line per failed test and one SKIP line per skipped or aborted test with its reason,
# keeps the per-test tree and JUnit's XML reports in $INTEROP_OUT, exits non-zero on any failure.
#
#   INTEROP_CONFORMANCE_PROVIDER=soft   run soft's setups instead (soft's test classes; for timing the
#                                       harness in the VM without the native provider)
#   INTEROP_CONFORMANCE_SETUPS=a,b      only these setups (-Drdma4j.conformance.setups; soft: default loopback)
#   INTEROP_CONFORMANCE_SELECT=...      console launcher selectors instead of the whole package, e.g.
#                                       "--select-class org.rdma4j.conformance.UdConformanceTest"
#   INTEROP_CONFORMANCE_ISOLATED=0      no rxe1, so no PORT_STATE_CONTROL (the port-state suite is skipped)
#   INTEROP_CONFORMANCE_DEVICE=siw0     another device than rxe0 (made by the caller, e.g. jobs/siw.sh)
#   INTEROP_CONFORMANCE_GID=N           its GID index (default RXE_GID_V4)
#   INTEROP_CONFORMANCE_CM_ADDRESS=IP   RC pairs connected through librdmacm on this address of the device
#                                       (CmQpConnector) instead of by modify_qp (siw0: iWARP needs it)
set -uo pipefail

REPO="$(cd "$INTEROP_DIR/.." && pwd)"
JAVA="${INTEROP_JAVA:-${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java}"
[[ -x $JAVA ]] || JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
PROVIDER="${INTEROP_CONFORMANCE_PROVIDER:-native}"
NAME="native-conformance${PROVIDER:+ ($PROVIDER)}"
fail() { echo "FAIL $NAME: $*"; exit 1; }

. "$INTEROP_DIR/net-setup.sh" || fail "net-setup"
DEV="${INTEROP_CONFORMANCE_DEVICE:-rxe0}"

# JUnit's console launcher: the native module's build names it in native/target/test-classpath.txt;
# otherwise the newest junit-platform-console-standalone in the local Maven repository.
M2="${INTEROP_M2:-$HOME/.m2}"
[[ -d $M2/repository ]] || M2=/root/.m2
cp_file="$REPO/native/target/test-classpath.txt"
launcher=
if [[ $PROVIDER == native && -f $cp_file ]]; then
  launcher="$(tr ':' '\n' <"$cp_file" | grep -m1 'junit-platform-console-standalone-.*\.jar$')"
fi
[[ -n $launcher ]] || launcher="$(ls "$M2"/repository/org/junit/platform/junit-platform-console-standalone/*/junit-platform-console-standalone-*.jar 2>/dev/null | sort -V | tail -n 1)"
[[ -f $launcher ]] || fail "no junit-platform-console-standalone jar (native/target/test-classpath.txt or $M2/repository); build the project on the host first"

# The class path: the module's test classes and classes, rdma4j's modules, their other dependencies;
# JUnit's own jars are left out (the launcher carries them, and two jupiter engines would clash).
jars=()
if [[ $PROVIDER == native ]]; then
  [[ -d $REPO/native/target/test-classes/org/rdma4j/nativeverbs/conformance ]] \
    || fail "native provider unavailable: native/target/test-classes has no NativeSetups (build the project on the host first: ./mvnw -B -DskipTests package)"
  jars+=("$REPO/native/target/test-classes" "$REPO/native/target/classes")
  if [[ -f $cp_file ]]; then
    # (no process substitution: the VM has no /dev/fd)
    for j in $(tr ':' '\n' <"$cp_file" | grep -v -e '/org/junit/' -e '/org/opentest4j/' -e '/org/apiguardian/'); do
      jars+=("$j")
    done
  fi
else
  jars+=("$REPO/soft/target/test-classes" "$REPO/soft/target/classes")
fi
jars+=("$REPO/conformance/target/classes" "$REPO/verbs/target/classes")
for j in "${jars[@]}"; do [[ -e $j ]] || fail "missing $j (build the project on the host first: ./mvnw -B -DskipTests package)"; done
CP="$(IFS=:; echo "${jars[*]}")"

props=()
if [[ $PROVIDER == native ]]; then
  props+=(-Drdma4j.native.conformance.device="$DEV" -Drdma4j.native.conformance.gid="${INTEROP_CONFORMANCE_GID:-$RXE_GID_V4}")
  props+=(-Drdma4j.conformance.setups="${INTEROP_CONFORMANCE_SETUPS:-native}")
  [[ -n ${INTEROP_CONFORMANCE_CM_ADDRESS:-} ]] && props+=(-Drdma4j.native.conformance.cm.address="$INTEROP_CONFORMANCE_CM_ADDRESS")
  if [[ ${INTEROP_CONFORMANCE_ISOLATED:-1} != 0 ]]; then
    # A device of its own for the port-state suite: rxe1 on veth2. rxe connects a QP only to a peer it
    # reaches through the GID's own net device, so both ends are on rxe1; its port follows veth2.
    if ip netns add iso && ip link add veth2 mtu "$RXE_MTU" type veth peer name veth3 mtu "$RXE_MTU" &&
       ip link set veth3 netns iso && ip addr add 10.78.0.1/24 dev veth2 && ip -n iso link set veth3 up &&
       ip link set veth2 up && rdma link add rxe1 type rxe netdev veth2; then
      iso_gid=
      for ((t = 0; t < 150; t++)); do
        [[ -n $iso_gid ]] && break
        for i in 0 1 2 3 4 5 6 7; do
          [[ $(cat /sys/class/infiniband/rxe1/ports/1/gids/$i 2>/dev/null) == 0000:0000:0000:0000:0000:ffff:0a4e:0001 ]] && iso_gid=$i
        done
        [[ -n $iso_gid ]] || sleep 0.2
      done
      if [[ -n $iso_gid ]]; then
        echo "--- rxe1 on veth2 (10.78.0.1, GID $iso_gid) for the port-state suite"
        props+=(-Drdma4j.native.conformance.isolated=rxe1 -Drdma4j.native.conformance.isolated.gid="$iso_gid"
                -Drdma4j.native.conformance.isolated.netdev=veth2)
      else
        echo "--- rxe1 has no GID for 10.78.0.1 after 30 s: no port-state suite"
      fi
    else
      echo "--- could not create veth2/rxe1: no port-state suite"
    fi
  fi
else
  props+=(-Drdma4j.conformance.setups="${INTEROP_CONFORMANCE_SETUPS:-loopback}")
fi

# What C gets from libibverbs on rxe0 where the suites skip a test as a known rxe deviation
# (RxeDeviations.java): the native provider passes these verbs through, so the answers must match.
if [[ $PROVIDER == native && $DEV == rxe* ]]; then
  if gcc -O2 -Wall -o /tmp/deviations "$INTEROP_DIR/native/deviations.c" -libverbs >"$INTEROP_OUT/deviations-gcc.log" 2>&1; then
    /tmp/deviations "$DEV" 2>&1 | sed "s/^/--- C on $DEV: /"
  else
    echo "--- C on $DEV: could not compile interop/native/deviations.c (see $INTEROP_OUT/deviations-gcc.log)"
  fi
fi

select=(--select-package org.rdma4j.conformance)
[[ -n ${INTEROP_CONFORMANCE_SELECT:-} ]] && read -r -a select <<<"$INTEROP_CONFORMANCE_SELECT"

reports="$INTEROP_OUT/conformance-reports"
echo "--- $NAME: ${props[*]}"
echo "--- launcher $launcher"
t0=$SECONDS
# TieredStopAtLevel=1: under TCG C2 compiles cost more than they win in a run of this length.
# shellcheck disable=SC2086 # RDMA4J_INTEROP_JAVA_OPTS is a list of options
# A test that hangs (a waiter that is never woken) fails after INTEROP_CONFORMANCE_TEST_TIMEOUT
# (JUnit's default timeout; SEPARATE_THREAD, so even a thread stuck in a downcall is left behind)
# instead of using up the VM's time. The launcher prints the tree only at the end: a feed line per finished test goes to $feed (and the
# job's log), so a run stopped by its time limit still shows how far it got.
feed="$INTEROP_OUT/conformance-feed.txt"
limit="${INTEROP_CONFORMANCE_TIMEOUT:-$(( ${INTEROP_JOB_TIMEOUT:-875} - 60 ))}"
timeout "$limit" "$JAVA" ${RDMA4J_INTEROP_JAVA_OPTS:-} -XX:TieredStopAtLevel=1 \
  --enable-native-access=ALL-UNNAMED "${props[@]}" -jar "$launcher" execute \
  --class-path "$CP" "${select[@]}" --exclude-engine=junit-vintage --exclude-engine=junit-platform-suite \
  --config=junit.jupiter.execution.timeout.default="${INTEROP_CONFORMANCE_TEST_TIMEOUT:-60s}" \
  --config=junit.jupiter.execution.timeout.thread.mode.default=SEPARATE_THREAD \
  --fail-if-no-tests --disable-banner --disable-ansi-colors --details=testfeed \
  --reports-dir "$reports" 2>&1 | tee "$feed" | grep --line-buffered -v -e ':: SUCCESSFUL' -e ':: STARTED' -e '^$' | cut -c1-400
rc=${PIPESTATUS[0]}
tree=$feed
echo "--- $NAME: console launcher exit $rc after $((SECONDS - t0))s; per-test feed: $tree, XML: $reports"

# NativeSetups offers no setup (and says why) when the provider cannot run: one line, not one per suite.
if grep -q "^native provider unavailable: " "$tree"; then
  fail "$(grep -m1 "^native provider unavailable: " "$tree")"
fi

# One line per test that did not pass: suite > [setup] > test (parameters), the reason or the failure.
awk '
  function flush() { if (what != "") print what (msg != "" ? ": " msg : ""); what = ""; msg = "" }
  / :: (FAILED|ABORTED|SKIPPED)$/ { flush(); t = $0; sub(/^JUnit Jupiter > /, "", t); st = t; sub(/.* :: /, "", st); sub(/ :: [A-Z]+$/, "", t)
                                   what = (st == "FAILED" ? "FAIL " : "SKIP ") t (st == "ABORTED" ? " (aborted)" : st == "SKIPPED" ? " (skipped)" : ""); next }
  what != "" && /^\t[^\t]/ && msg == "" { msg = $0; sub(/^\t(Reason: |=> )?/, "", msg); sub(/^org\.opentest4j\.[A-Za-z]+: /, "", msg); next }
  / :: [A-Z]+$/ { flush() }
  END { flush() }
' "$tree"

summary="$(grep -E '^\[ +[0-9]+ (tests|containers) (found|successful|failed|skipped|aborted) +\]$' "$tree")"
echo "$summary" | sed 's/^/--- /'
if ((rc != 0)); then
  ((rc == 124)) && fail "timed out after ${limit}s ($(grep -c ':: SUCCESSFUL' "$feed") tests had passed; last: $(grep ' :: ' "$feed" | tail -n 1 | cut -c1-200))"
  tail -n 30 "$tree"
  fail "console launcher exit $rc (failed tests above)"
fi
echo "PASS $NAME [$((SECONDS - t0))s]"
