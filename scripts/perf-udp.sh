#!/usr/bin/env bash
# perf-udp.sh: the soft device over RoCEv2/UDP between two JVMs, beside plain Java UDP between the same
# loopback addresses, in one run, with the ratios the issue's targets are stated in. Every figure comes
# from the same run; the load average is printed before and after (on a shared machine, compare only
# within one run).
#
#   scripts/perf-udp.sh                 # 8-byte latency, busy and with events; stream and packet rate
#   scripts/perf-udp.sh -n 20000 -w 5000 -r 3
#
# Options: -n ITERS timed round trips (default 20000), -w WARMUP round trips before (default 5000),
# -r ROUNDS (default 1; each round runs everything once, alternating floor and rdma4j), -s SECONDS for
# the stream tests (default 3), -d BYTES datagram size of the stream (default 4124: what a 4096-byte
# MTU packet of a WRITE stream is on the wire after the UDP header, BTH 12 + payload 4096 + ICRC 4 +
# RETH 12 on a first packet rounded down), -a/-b the two addresses (default 127.0.0.3, 127.0.0.4: not
# the 127.0.0.1/127.0.0.2 pair tests and other runs use), -u PORT the devices' UDP port (default a random
# one in 20000..20999, never 4791), -t TESTS (lat,bw: which halves to run; default both), -B DIR a
# baseline build to run beside this one (DIR holds lib/ and rdma4j-tools-*.jar as tools/target does;
# every rdma4j run then happens twice per round, "base" first in odd rounds, "new" first in even ones).
# -x FACTOR multiplies the bandwidth runs' iterations (default 1: -n 5000 and -n 200000; the first
# seconds of a JVM are mostly compilation, so longer runs show the warmed-up device).
# RDMA4J_JAVA_OPTS is passed to the rdma4j JVMs (e.g. a JFR recording); %r in it becomes
# "base-client", "new-server", ... so two JVMs do not write one file.
#
# What it runs, per round:
#   floor   java ... org.rdma4j.bench.UdpFloor test=latency poll=busy|block   (bench/target/benchmarks.jar)
#   rdma4j  rdma4j pingpong rc -g 1 -s 8 --warmup W [-e]          (usec/iter = mean round trip; per build)
#   rdma4j  rdma4j pingpong rc -g 1 -s 8 -n 20000 without --warmup, as a user runs it first, without and
#           with the launcher's start-up cache (tools/target/rdma4j.aot: run ./rdma4j once to make it)
#   rdma4j  java ... org.rdma4j.bench.UdpFloor test=latency stack=rdma poll=busy|block   (percentiles)
#   floor   UdpFloor test=stream size=D, test=rate                 (datagrams/s and 8-byte packets/s)
#   rdma4j  rdma4j perf write_bw -s 65536 and -s 8 between two JVMs    (beside the stream and rate floors; per build)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
. scripts/jdk.sh
rdma4j_select_jdk

iters=20000
warmup=5000
rounds=1
seconds=3
dgram=4124
a=127.0.0.3
b=127.0.0.4
uport=$((20000 + RANDOM % 1000))
tests=lat,bw
base=
factor=1
while getopts "n:w:r:s:d:a:b:u:t:B:x:h" opt; do
  case "$opt" in
    n) iters="$OPTARG" ;;
    w) warmup="$OPTARG" ;;
    r) rounds="$OPTARG" ;;
    s) seconds="$OPTARG" ;;
    d) dgram="$OPTARG" ;;
    a) a="$OPTARG" ;;
    b) b="$OPTARG" ;;
    u) uport="$OPTARG" ;;
    t) tests="$OPTARG" ;;
    B) base="$OPTARG" ;;
    x) factor="$OPTARG" ;;
    *) sed -n '2,29p' "$0"; exit 2 ;;
  esac
done

jar="$root/bench/target/benchmarks.jar"
if [ ! -f "$jar" ]; then
  echo "perf-udp: building bench/target/benchmarks.jar ..." >&2
  ./mvnw -q -B -pl bench -am package -DskipTests >&2
fi
java=("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$jar")
port=$((19000 + RANDOM % 500))
fport=$((21000 + RANDOM % 500 * 2))
# The rdma4j command of a build: "new" is this tree's tools/target (built when missing; unlike ./rdma4j
# this never installs into ~/.m2), "base" the -B directory. Started directly, so a source edit during a
# run cannot trigger a rebuild.
if ! ls tools/target/rdma4j-tools-*.jar >/dev/null 2>&1 || [ ! -d tools/target/lib ]; then
  echo "perf-udp: building tools/target ..." >&2
  ./mvnw -q -B -pl tools -am package -DskipTests >&2
fi
toolsjar() { ls "$1"/rdma4j-tools-*.jar | grep -v -e sources -e javadoc -e tests | head -1; }
rdmacmd() { # rdmacmd BUILD ROLE: sets cmd to the rdma4j command line of BUILD (new or base); ROLE names
  # the JVM for %r in RDMA4J_JAVA_OPTS. With pp_aot=1 the JVM starts from the build's start-up cache
  # (rdma4j.aot, made by ./rdma4j after a build) as the launcher starts it, when the cache is there.
  local dir="$root/tools/target"
  [ "$1" = base ] && dir="$base"
  local opts="${RDMA4J_JAVA_OPTS:-}"
  opts="${opts//%r/$1-$2}"
  if [ "${pp_aot:-0}" = 1 ] && [ -f "$dir/rdma4j.aot" ]; then
    opts="-XX:AOTCache=$dir/rdma4j.aot -Xlog:aot*=off -Xlog:cds*=off $opts"
  fi
  # shellcheck disable=SC2206 # opts is a list of options
  cmd=("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED,org.rdma4j.verbs,org.rdma4j.soft,org.rdma4j.nativeverbs
    $opts -p "$dir/lib:$(toolsjar "$dir")" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j)
}
builds=(new)
[ -n "$base" ] && builds=(base new)
tmp="$(mktemp -d "${TMPDIR:-/tmp}/perf-udp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# key=value from a UdpFloor output file
val() { sed -n "s/^$1=//p" "$2" | head -1; }

floor() { # floor OUT ARGS...: UdpFloor, measuring side on $b, peer on $a
  local out="$1"; shift
  timeout 300 "${java[@]}" org.rdma4j.bench.UdpFloor local="$b" remote="$a" port="$fport" roceport="$uport" "$@" >"$out" 2>"$out.err" || {
    echo "perf-udp: UdpFloor $* failed:" >&2; cat "$out" "$out.err" >&2; return 1; }
}

pingpong() { # pingpong BUILD OUT [-e]: two JVMs, rdma4j pingpong rc, the client's usec/iter; pp_n and
  # pp_warmup override -n and --warmup (default: $iters after $warmup)
  local build="$1" out="$2"; shift 2
  local n="${pp_n:-$((iters + warmup))}" w="${pp_warmup:-$warmup}"
  port=$((port + 1))
  rdmacmd "$build" server
  "${cmd[@]}" pingpong rc "$@" --bind "$a" --udp-port "$uport" -g 1 -s 8 -n "$n" --warmup "$w" -p "$port" \
    </dev/null >"$out.server" 2>&1 &
  local server=$!
  sleep 1.5
  local rc=0
  rdmacmd "$build" client
  timeout 300 "${cmd[@]}" pingpong rc "$@" --bind "$b" --udp-port "$uport" -g 1 -s 8 -n "$n" --warmup "$w" -p "$port" \
    "$a" </dev/null >"$out" 2>&1 || rc=$?
  wait "$server" || rc=$?
  if [ "$rc" != 0 ]; then
    echo "perf-udp: pingpong $* failed:" >&2; cat "$out" "$out.server" >&2; return 1
  fi
  sed -n 's/.* = \([0-9.]*\) usec\/iter/\1/p' "$out"
}

perf_bw() { # perf_bw BUILD OUT ARGS...: two JVMs, rdma4j perf write_bw ARGS; prints "MiB/s Mpps" of the client's row
  local build="$1" out="$2"; shift 2
  port=$((port + 1))
  rdmacmd "$build" server
  "${cmd[@]}" perf write_bw "$@" --bind "$a" --udp-port "$uport" -p "$port" </dev/null >"$out.server" 2>&1 &
  local server=$!
  for _ in $(seq 1 150); do
    ss -Htln "sport = :$port" 2>/dev/null | grep -q . && break
    sleep 0.1
  done
  local rc=0
  rdmacmd "$build" client
  timeout 300 "${cmd[@]}" perf write_bw "$@" --bind "$b" --udp-port "$uport" -p "$port" "$a" </dev/null >"$out" 2>&1 || rc=$?
  wait "$server" || rc=$?
  if [ "$rc" != 0 ]; then
    echo "perf-udp: perf write_bw $* failed:" >&2; cat "$out" "$out.server" >&2; return 1
  fi
  # the row: #bytes #iterations BW peak BW average MsgRate
  awk '$1 ~ /^[0-9]+$/ && NF == 5 { print $4, $5 }' "$out" | tail -1
}

# UDP RcvbufErrors of the whole host (/proc/net/snmp): datagrams the kernel dropped for a full socket buffer
rcvbuferrors() { awk '$1 == "Udp:" && $2 ~ /^[0-9]+$/ { print $7 }' /proc/net/snmp; }
# UDP OutDatagrams of the whole host: a run's data packets plus its ACKs (plus whatever else the host sends)
outdatagrams() { awk '$1 == "Udp:" && $2 ~ /^[0-9]+$/ { print $5 }' /proc/net/snmp; }

ratio() { awk -v x="$1" -v y="$2" 'BEGIN { if (y > 0) printf "%.2f", x / y; else print "n/a" }'; }

echo "perf-udp: $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $a <-> $b," \
  "devices on UDP port $uport, $iters round trips after $warmup, $(nproc) CPUs, builds: ${builds[*]}${base:+ (base $base)}"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  echo "== round $r (load $(cut -d' ' -f1 /proc/loadavg))"
  if [[ ",$tests," == *,lat,* ]]; then
    floor "$tmp/fb" test=latency poll=busy size=8 iters="$iters" warmup="$warmup"
    floor "$tmp/rb" test=latency stack=rdma poll=busy size=8 iters="$iters" warmup="$warmup"
    floor "$tmp/fe" test=latency poll=block size=8 iters="$iters" warmup="$warmup"
    floor "$tmp/re" test=latency stack=rdma poll=block size=8 iters="$iters" warmup="$warmup"
    printf '%-44s %10s %10s %10s %10s\n' "8 B round trip (us)" mean p50 p90 p99
    for f in fb:"UDP busy-poll (floor)" rb:"rdma4j RC SEND/RECV busy-poll" fe:"UDP blocking (floor)" \
             re:"rdma4j RC SEND/RECV events"; do
      k="${f%%:*}"
      printf '%-44s %10s %10s %10s %10s\n' "${f#*:}" "$(val rtt_mean_us "$tmp/$k")" "$(val rtt_p50_us "$tmp/$k")" \
        "$(val rtt_p90_us "$tmp/$k")" "$(val rtt_p99_us "$tmp/$k")"
    done
    echo "ratios (target <= 1.25):"
    echo "  RC busy        / UDP busy, median:  $(ratio "$(val rtt_p50_us "$tmp/rb")" "$(val rtt_p50_us "$tmp/fb")")"
    echo "  RC events      / UDP block, median: $(ratio "$(val rtt_p50_us "$tmp/re")" "$(val rtt_p50_us "$tmp/fe")")"
    echo "  RC busy p99    / its own p50:       $(ratio "$(val rtt_p99_us "$tmp/rb")" "$(val rtt_p50_us "$tmp/rb")") (target <= 3)"
    echo "rdma4j counters (RC busy run): $(val counters "$tmp/rb")"
    for build in "${builds[@]}"; do
      ppb="$(pingpong "$build" "$tmp/pb")"
      ppe="$(pingpong "$build" "$tmp/pe" -e)"
      echo "[$build] pingpong rc    (usec/iter, busy):   $ppb = $(ratio "$ppb" "$(val rtt_mean_us "$tmp/fb")") of UDP busy"
      echo "[$build] pingpong rc -e (usec/iter, events): $ppe = $(ratio "$ppe" "$(val rtt_mean_us "$tmp/fe")") of UDP block"
      # as a user runs it first: 20 000 round trips, no --warmup; with and without the launcher's start-up cache
      ppc="$(pp_n=20000 pp_warmup=0 pingpong "$build" "$tmp/pc")"
      ppa="$(pp_n=20000 pp_warmup=0 pp_aot=1 pingpong "$build" "$tmp/pa")"
      echo "[$build] pingpong rc -n 20000, no --warmup (usec/iter): $ppc = $(ratio "$ppc" "$(val rtt_mean_us "$tmp/fb")") of UDP busy;" \
        "from the start-up cache: $ppa = $(ratio "$ppa" "$(val rtt_mean_us "$tmp/fb")")"
    done
  fi
  if [[ ",$tests," == *,bw,* ]]; then
    floor "$tmp/fs" test=stream size="$dgram" seconds="$seconds"
    floor "$tmp/fr" test=rate seconds="$seconds"
    echo "UDP stream, $dgram-byte datagrams: $(val datagrams_per_s "$tmp/fs") datagrams/s," \
      "$(val mib_per_s "$tmp/fs") MiB/s (the floor for 64 KiB write_bw: target >= 80 %)"
    echo "UDP 8-byte packets: $(val datagrams_per_s "$tmp/fr") packets/s (the floor for the message rate: target >= 80 %)"
    order=("${builds[@]}")
    if [ "${#builds[@]}" = 2 ] && [ $((r % 2)) = 0 ]; then order=(new base); fi # even rounds: new first
    for build in "${order[@]}"; do
      e0="$(rcvbuferrors)"; o0="$(outdatagrams)"
      bw64="$(perf_bw "$build" "$tmp/bw" -s 65536 -n $((5000 * factor)))"
      e1="$(rcvbuferrors)"; o1="$(outdatagrams)"
      rate8="$(perf_bw "$build" "$tmp/mr" -s 8 -n $((200000 * factor)))"
      e2="$(rcvbuferrors)"; o2="$(outdatagrams)"
      echo "[$build] perf write_bw -s 65536 -n $((5000 * factor)) (two JVMs): ${bw64% *} MiB/s =" \
        "$(ratio "${bw64% *}" "$(val mib_per_s "$tmp/fs")") of the UDP stream ($((e1 - e0)) UDP RcvbufErrors, $((o1 - o0)) datagrams sent on the host)"
      echo "[$build] perf write_bw -s 8 -n $((200000 * factor)) (two JVMs; -Q 100): ${rate8#* } Mpps =" \
        "$(ratio "$(awk -v m="${rate8#* }" 'BEGIN { print m * 1e6 }')" "$(val datagrams_per_s "$tmp/fr")") of the UDP packet rate" \
        "($((e2 - e1)) UDP RcvbufErrors, $((o2 - o1)) datagrams sent on the host)"
    done
  fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
