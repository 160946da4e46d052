#!/usr/bin/env bash
# Interop job, runs inside the rxe VM: JMH's NativeDataPathBenchmark (bench/) against the native
# provider on rxe0, with the GC profiler: the data path through java.lang.foreign must allocate
# nothing (gc.alloc.rate.norm 0 B/op, within JMH's measurement noise of < 1 B/op).
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
  -p device="$RXE_DEV" -p gidIndex="$RXE_GID_V4" -prof gc -f 1 -wi 2 -w 1 -i 3 -r 1 \
  -rf json -rff "$INTEROP_OUT/native-jmh.json" >"$out" 2>&1
rc=$?
grep -E '^(Benchmark|NativeDataPath)' "$out"
((rc == 0)) || { tail -n 40 "$out"; fail "JMH exited $rc"; }

bad=0
for b in pollEmptyCq writeAndPoll; do
  # a result line: name (params) avgt Cnt Score [± Error] Units
  score() { awk -v n="$1" '$1 ~ n { for (i = 2; i <= NF; i++) if ($i == "avgt") { s = $(i + 2); if (s == "≈") s = 0; print s, $NF; exit } }' "$out"; }
  norm="$(score "\\.${b}:gc\\.alloc\\.rate\\.norm$" | cut -d' ' -f1)"
  time="$(score "\\.${b}$")"
  if [[ -z $norm ]]; then
    echo "FAIL native-jmh $b: no gc.alloc.rate.norm in the output"; bad=1
  elif awk -v n="$norm" 'BEGIN { exit !(n + 0 < 1) }'; then
    echo "PASS native-jmh $b: ${norm} B/op, ${time}"
  else
    echo "FAIL native-jmh $b: allocates ${norm} B/op (${time})"; bad=1
  fi
done
exit $bad
