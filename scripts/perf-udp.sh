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
# RETH 12 on a first packet rounded down), -a/-b the two addresses (127.0.0.1, 127.0.0.2).
#
# What it runs, per round:
#   floor   java ... org.rdma4j.bench.UdpFloor test=latency poll=busy|block   (bench/target/benchmarks.jar)
#   rdma4j  ./rdma4j pingpong rc -g 1 -s 8 --warmup W [-e]        (usec/iter = mean round trip)
#   rdma4j  java ... org.rdma4j.bench.UdpFloor test=latency stack=rdma poll=busy|block   (percentiles)
#   floor   UdpFloor test=stream size=D, test=rate                 (datagrams/s and 8-byte packets/s)
#   rdma4j  ./rdma4j perf write_bw -s 65536 and -s 8 between two JVMs  (beside the stream and rate floors)
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
a=127.0.0.1
b=127.0.0.2
while getopts "n:w:r:s:d:a:b:h" opt; do
  case "$opt" in
    n) iters="$OPTARG" ;;
    w) warmup="$OPTARG" ;;
    r) rounds="$OPTARG" ;;
    s) seconds="$OPTARG" ;;
    d) dgram="$OPTARG" ;;
    a) a="$OPTARG" ;;
    b) b="$OPTARG" ;;
    *) sed -n '2,27p' "$0"; exit 2 ;;
  esac
done

jar="$root/bench/target/benchmarks.jar"
if [ ! -f "$jar" ]; then
  echo "perf-udp: building bench/target/benchmarks.jar ..." >&2
  ./mvnw -q -B -pl bench -am package -DskipTests >&2
fi
java=("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$jar")
port=$((19000 + RANDOM % 500))
tmp="$(mktemp -d "${TMPDIR:-/tmp}/perf-udp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# key=value from a UdpFloor output file
val() { sed -n "s/^$1=//p" "$2" | head -1; }

floor() { # floor OUT ARGS...: UdpFloor, measuring side on $b, peer on $a
  local out="$1"; shift
  timeout 300 "${java[@]}" org.rdma4j.bench.UdpFloor local="$b" remote="$a" "$@" >"$out" 2>"$out.err" || {
    echo "perf-udp: UdpFloor $* failed:" >&2; cat "$out" "$out.err" >&2; return 1; }
}

pingpong() { # pingpong OUT [-e]: two JVMs, ./rdma4j pingpong rc, the client's usec/iter
  local out="$1"; shift
  port=$((port + 1))
  ./rdma4j pingpong rc "$@" --bind "$a" -g 1 -s 8 -n $((iters + warmup)) --warmup "$warmup" -p "$port" \
    </dev/null >"$out.server" 2>&1 &
  local server=$!
  sleep 1.5
  local rc=0
  timeout 300 ./rdma4j pingpong rc "$@" --bind "$b" -g 1 -s 8 -n $((iters + warmup)) --warmup "$warmup" -p "$port" \
    "$a" </dev/null >"$out" 2>&1 || rc=$?
  wait "$server" || rc=$?
  if [ "$rc" != 0 ]; then
    echo "perf-udp: pingpong $* failed:" >&2; cat "$out" "$out.server" >&2; return 1
  fi
  sed -n 's/.* = \([0-9.]*\) usec\/iter/\1/p' "$out"
}

perf_bw() { # perf_bw OUT ARGS...: two JVMs, ./rdma4j perf write_bw ARGS; prints "MiB/s Mpps" of the client's row
  local out="$1"; shift
  port=$((port + 1))
  ./rdma4j perf write_bw "$@" --bind "$a" -p "$port" </dev/null >"$out.server" 2>&1 &
  local server=$!
  for _ in $(seq 1 150); do
    ss -Htln "sport = :$port" 2>/dev/null | grep -q . && break
    sleep 0.1
  done
  local rc=0
  timeout 300 ./rdma4j perf write_bw "$@" --bind "$b" -p "$port" "$a" </dev/null >"$out" 2>&1 || rc=$?
  wait "$server" || rc=$?
  if [ "$rc" != 0 ]; then
    echo "perf-udp: perf write_bw $* failed:" >&2; cat "$out" "$out.server" >&2; return 1
  fi
  # the row: #bytes #iterations BW peak BW average MsgRate
  awk '$1 ~ /^[0-9]+$/ && NF == 5 { print $4, $5 }' "$out" | tail -1
}

rdma_lat_busy() { pingpong "$1"; }
rdma_lat_events() { pingpong "$1" -e; }

ratio() { awk -v x="$1" -v y="$2" 'BEGIN { if (y > 0) printf "%.2f", x / y; else print "n/a" }'; }

echo "perf-udp: $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $a <-> $b," \
  "$iters round trips after $warmup, $(nproc) CPUs"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  echo "== round $r"
  floor "$tmp/fb" test=latency poll=busy size=8 iters="$iters" warmup="$warmup"
  ppb="$(rdma_lat_busy "$tmp/pb")"
  floor "$tmp/rb" test=latency stack=rdma poll=busy size=8 iters="$iters" warmup="$warmup"
  floor "$tmp/fe" test=latency poll=block size=8 iters="$iters" warmup="$warmup"
  ppe="$(rdma_lat_events "$tmp/pe")"
  floor "$tmp/re" test=latency stack=rdma poll=block size=8 iters="$iters" warmup="$warmup"
  floor "$tmp/fs" test=stream size="$dgram" seconds="$seconds"
  floor "$tmp/fr" test=rate seconds="$seconds"
  bw64="$(perf_bw "$tmp/bw" -s 65536 -n 5000)"
  rate8="$(perf_bw "$tmp/mr" -s 8 -n 200000)"

  printf '%-44s %10s %10s %10s %10s\n' "8 B round trip (us)" mean p50 p90 p99
  for f in fb:"UDP busy-poll (floor)" rb:"rdma4j RC SEND/RECV busy-poll" fe:"UDP blocking (floor)" \
           re:"rdma4j RC SEND/RECV events"; do
    k="${f%%:*}"
    printf '%-44s %10s %10s %10s %10s\n' "${f#*:}" "$(val rtt_mean_us "$tmp/$k")" "$(val rtt_p50_us "$tmp/$k")" \
      "$(val rtt_p90_us "$tmp/$k")" "$(val rtt_p99_us "$tmp/$k")"
  done
  printf '%-44s %10s\n' "rdma4j pingpong rc (usec/iter, busy)" "$ppb"
  printf '%-44s %10s\n' "rdma4j pingpong rc -e (usec/iter, events)" "$ppe"
  echo "ratios (target <= 1.25):"
  echo "  pingpong rc    / UDP busy, mean:    $(ratio "$ppb" "$(val rtt_mean_us "$tmp/fb")")"
  echo "  RC busy        / UDP busy, median:  $(ratio "$(val rtt_p50_us "$tmp/rb")" "$(val rtt_p50_us "$tmp/fb")")"
  echo "  pingpong rc -e / UDP block, mean:   $(ratio "$ppe" "$(val rtt_mean_us "$tmp/fe")")"
  echo "  RC events      / UDP block, median: $(ratio "$(val rtt_p50_us "$tmp/re")" "$(val rtt_p50_us "$tmp/fe")")"
  echo "UDP stream, $dgram-byte datagrams: $(val datagrams_per_s "$tmp/fs") datagrams/s," \
    "$(val mib_per_s "$tmp/fs") MiB/s (the floor for 64 KiB write_bw: target >= 80 %)"
  echo "UDP 8-byte packets: $(val datagrams_per_s "$tmp/fr") packets/s (the floor for the message rate: target >= 80 %)"
  echo "rdma4j perf write_bw -s 65536 -n 5000 (two JVMs): ${bw64% *} MiB/s =" \
    "$(ratio "${bw64% *}" "$(val mib_per_s "$tmp/fs")") of the UDP stream"
  echo "rdma4j perf write_bw -s 8 -n 200000 (two JVMs; perftest's -Q default signals every 100th): ${rate8#* } Mpps =" \
    "$(ratio "$(awk -v m="${rate8#* }" 'BEGIN { print m * 1e6 }')" "$(val datagrams_per_s "$tmp/fr")") of the UDP packet rate"
  echo "rdma4j counters (RC busy run): $(val counters "$tmp/rb")"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
