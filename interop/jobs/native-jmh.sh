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
# Every benchmark must have its result line in JMH's table: JMH reports a fork that died
# ("<forked VM failed with exit code 134>") and still exits 0, so the job checks the table itself, and
# runs the missing benchmarks once more (saying so) before it fails.
# `bash interop/jobs/native-jmh.sh --check FILE` runs only that check on a saved JMH output (exit 1 and
# a FAIL line per missing benchmark): how the check is shown to fail without a VM.
set -uo pipefail

BENCHMARKS=(pollEmptyCq writeAndPoll)
# missing_results FILE [NAME...]: prints the benchmarks (default: all) that have no result line in
# JMH's table in FILE (a result line: NativeDataPathBenchmark.NAME, its params, avgt, Cnt, Score)
missing_results() {
  local f=$1 b; shift
  (($#)) || set -- "${BENCHMARKS[@]}"
  for b in "$@"; do
    awk -v n="NativeDataPathBenchmark.$b" '$1 == n && / avgt / { found = 1 } END { exit !found }' "$f" || echo "$b"
  done
}
# died_at FILE: the crash lines of the forks that died, as JMH copied them from the fork's output
died_at() { grep -E '^<forked VM failed|^# +SIG[A-Z]+ |^# [JjCV] ' "$1" | sort -u | head -n 6; }

if [[ ${1:-} == --check ]]; then
  [[ -f ${2:-} ]] || { echo "usage: native-jmh.sh --check JMH_OUTPUT"; exit 2; }
  miss="$(missing_results "$2")"
  [[ -z $miss ]] && { echo "PASS native-jmh: every benchmark has its result line in $2"; exit 0; }
  for b in $miss; do echo "FAIL native-jmh $b: no result line in JMH's table ($2)"; done
  died_at "$2"
  exit 1
fi

REPO="$(cd "$INTEROP_DIR/.." && pwd)"
JAVA="${INTEROP_JAVA:-${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java}"
[[ -x $JAVA ]] || JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
fail() { echo "FAIL native-jmh: $*"; exit 1; }

. "$INTEROP_DIR/net-setup.sh" || fail "net-setup"
JAR="$REPO/bench/target/benchmarks.jar"
[[ -f $JAR ]] || fail "no $JAR (build the project on the host first: ./mvnw -B -DskipTests package)"

# run_jmh OUT JSON REGEX: one JMH run of the benchmarks REGEX matches. The forks are C2 only, as the
# allocation check below: under TCG a tiered fork has died with SIGILL/SIGSEGV at the entry of a C1
# method the JIT had just patched (docs/decisions/0028-the-interop-vm.md), an emulation artifact.
# -jvmArgsAppend replaces the annotation's, so it repeats --enable-native-access.
run_jmh() {
  timeout 400 "$JAVA" --enable-native-access=ALL-UNNAMED -jar "$JAR" "$3" \
    -jvmArgsAppend "-XX:-TieredCompilation --enable-native-access=ALL-UNNAMED" \
    -p device="$RXE_DEV" -p gidIndex="$RXE_GID_V4" -prof gc -f 1 -wi 1 -w 1 -i 2 -r 1 \
    -rf json -rff "$2" >"$1" 2>&1
}

out="$INTEROP_OUT/native-jmh.txt"
run_jmh "$out" "$INTEROP_OUT/native-jmh.json" 'NativeDataPathBenchmark'
rc=$?
grep -E '^(Benchmark|NativeDataPath)' "$out"
((rc == 0)) || { tail -n 40 "$out"; fail "JMH exited $rc"; }
miss="$(missing_results "$out")"
if [[ -n $miss ]]; then
  died="$(died_at "$out")"
  echo "native-jmh: no result line for: $(echo $miss)${died:+; a fork died:}"
  [[ -n $died ]] && sed 's/^/    /' <<<"$died"
  echo "native-jmh: running JMH once more for $(echo $miss) (first output kept in $out)"
  out="$INTEROP_OUT/native-jmh-rerun.txt"
  run_jmh "$out" "$INTEROP_OUT/native-jmh-rerun.json" "NativeDataPathBenchmark\\.($(echo $miss | tr ' ' '|'))\$"
  rc=$?
  grep -E '^(Benchmark|NativeDataPath)' "$out"
  ((rc == 0)) || { tail -n 40 "$out"; fail "JMH (rerun) exited $rc"; }
  # shellcheck disable=SC2086 # the names
  miss="$(missing_results "$out" $miss)"
  if [[ -n $miss ]]; then
    died_at "$out" | sed 's/^/    /'
    for b in $miss; do echo "FAIL native-jmh $b: no result line in JMH's table, twice (the fork died: $out)"; done
    exit 1
  fi
  cat "$INTEROP_OUT/native-jmh.txt" "$out" >"$INTEROP_OUT/native-jmh-both.txt"; out="$INTEROP_OUT/native-jmh-both.txt"
fi

for b in "${BENCHMARKS[@]}"; do
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
for b in "${BENCHMARKS[@]}"; do
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
