#!/usr/bin/env bash
# Makes the JDK's AOT cache (JEP 483/514) for the rdma4j tool on the host, so that the JVMs the jobs
# start in the emulated VM find their classes already loaded and linked instead of parsing, verifying
# and linking several thousand classes each (half a minute per JVM under TCG). One training run of
# `rdma4j perf write_lat` over RoCEv2/UDP on loopback addresses (picocli, the perf tool, the soft
# device, the UDP link's FFM handles) writes tools/target/rdma4j-tools.aot; tools-env.sh passes
# -XX:AOTCache=FILE to the jobs' JVMs when the file is there. The VM sees the host's / at the same paths, so the module path the cache was made
# with is the one the jobs use; the JVM checks that (and the jars' sizes and times) and ignores a cache
# that does not match, so a stale or missing file only costs time, never a result.
#
#   interop/aot-cache.sh      (re)makes the cache when a jar is newer than it; prints its path
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
INTEROP_DIR="$HERE"
. "$HERE/tools-env.sh" aot-cache || exit 1
CACHE_FILE="$REPO/tools/target/rdma4j-tools.aot"

if [[ -f $CACHE_FILE && -z $(find "$REPO/tools/target/lib" "$TOOLS_JAR" -newer "$CACHE_FILE" -print -quit) ]]; then
  echo "$CACHE_FILE"
  exit 0
fi
rm -f "$CACHE_FILE"
log="$(mktemp "${TMPDIR:-/tmp}/rdma4j-aot.XXXXXX")"
tool() { # JVM_OPTION ARGS...: the rdma4j tool with the jobs' module path
  local opt=$1; shift
  timeout 300 "$JAVA" $opt --enable-native-access=ALL-UNNAMED,org.rdma4j.verbs,org.rdma4j.soft,org.rdma4j.nativeverbs \
    -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}
# The training run is a perf server on a soft device over RoCEv2/UDP (what most jobs' JVMs are: the
# UDP link's FFM handles, the TCP exchange, the perf tables), with a client in a second JVM.
port=$((20000 + RANDOM % 20000))
tool -XX:AOTCacheOutput="$CACHE_FILE" perf write_lat --bind 127.0.0.1 -p "$port" -n 2000 </dev/null >"$log" 2>&1 &
server=$!
for _ in $(seq 1 150); do
  ss -Htln "sport = :$port" 2>/dev/null | grep -q . && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.2
done
tool -Xshare:auto perf write_lat --bind 127.0.0.2 -p "$port" -n 2000 127.0.0.1 </dev/null >>"$log" 2>&1
wait "$server"
if [[ $? -eq 0 && -s $CACHE_FILE ]]; then
  rm -f "$log"
  echo "$CACHE_FILE"
else
  kill "$server" 2>/dev/null
  echo "interop: no AOT cache (the jobs run without it; training log: $log)" >&2
  rm -f "$CACHE_FILE"
fi
exit 0
