#!/usr/bin/env bash
# Interop job, runs inside the rxe VM: JMH's NativeDataPathBenchmark (bench/) against the native
# provider on rxe0, with the GC profiler, then the benchmark's own allocation check: the data path
# through java.lang.foreign must allocate nothing. JMH's gc.alloc.rate.norm divides what every thread
# of the JVM allocates by the operations, so at the few thousand WRITEs a second of an emulated rxe
# its background shows as bytes per operation; the check counts the benchmark thread's own bytes
# (ThreadMXBean) over 10^6 polls and 2*10^4 WRITEs, and must see 0.
#   pollEmptyCq   poll_cq through ctx->ops on an empty CQ
#   writeAndPoll  an 8-byte inline signaled RDMA WRITE on an RC QP connected to itself, polled to completion
# Times here are TCG-emulated and only comparable within one VM run; the B/op figures are what counts.
set -uo pipefail

REPO="$(cd "$INTEROP_DIR/.." && pwd)"
JAVA="${INTEROP_JAVA:-${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java}"
[[ -x $JAVA ]] || JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
fail() { echo "FAIL native-jmh: $*"; exit 1; }

. "$INTEROP_DIR/net-setup.sh" || fail "net-setup"
JAR="$REPO/bench/target/benchmarks.jar"
[[ -f $JAR ]] || fail "no $JAR (build the project on the host first: ./mvnw -DskipTests install)"

out="$INTEROP_OUT/native-jmh.txt"
timeout 400 "$JAVA" --enable-native-access=ALL-UNNAMED -jar "$JAR" NativeDataPathBenchmark \
  -p device="$RXE_DEV" -p gidIndex="$RXE_GID_V4" -prof gc -f 1 -wi 1 -w 1 -i 2 -r 1 \
  -rf json -rff "$INTEROP_OUT/native-jmh.json" >"$out" 2>&1
rc=$?
grep -E '^(Benchmark|NativeDataPath)' "$out"
((rc == 0)) || { tail -n 40 "$out"; fail "JMH exited $rc"; }

for b in pollEmptyCq writeAndPoll; do
  # a result line: name (params) avgt Cnt Score [± Error] Units
  score() { awk -v n="$1" '$1 ~ n { for (i = 2; i <= NF; i++) if ($i == "avgt") { s = $(i + 2); if (s == "≈") s = 0; print s, $NF; exit } }' "$out"; }
  echo "--- JMH $b: $(score "\\.${b}$"), gc.alloc.rate.norm $(score "\\.${b}:gc\\.alloc\\.rate\\.norm$") (every thread)"
done

check="$INTEROP_OUT/native-alloc-check.txt"
# C2 only (no tiered C1 -> C2 replacement): under TCG a thread running C1 code that the JIT patches
# as not entrant has been seen to die with SIGILL, an emulation artifact, not the code under test
timeout 300 "$JAVA" -XX:-TieredCompilation --enable-native-access=ALL-UNNAMED -cp "$JAR" org.rdma4j.bench.NativeDataPathBenchmark \
  "$RXE_DEV" "$RXE_GID_V4" >"$check" 2>&1
rc=$?
cat "$check"
bad=0
for b in pollEmptyCq writeAndPoll; do
  line="$(grep "^alloc-check $b: " "$check")"
  if [[ -z $line ]]; then
    echo "FAIL native-jmh $b: no allocation check (exit $rc)"; bad=1
  elif [[ $line == *": 0 B in "* ]]; then
    echo "PASS native-jmh $b: 0 B/op on the posting thread (${line#*= })"
  else
    echo "FAIL native-jmh $b: ${line#alloc-check }"; bad=1
  fi
done
exit $bad
