#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Interop job, runs inside the rxe VM: RDMA READ against kernel rxe (issue 23). For each size of
# INTEROP_READ_SIZES, in one VM run and one after the other:
#   rxe  ib_read_bw server and client both on rxe0 (GID fd77::1): kernel rxe against itself, the baseline
#   s-c  rdma4j perf read_bw client on the soft device (UDP/IPv6, --bind fd77::2 -x 1, namespace peer)
#        reading from an ib_read_bw server on rxe0 (rxe's responder answers soft's READ requests)
#   c-s  ib_read_bw client on rxe0 reading from an rdma4j perf read_bw server on the soft device (soft's
#        responder answers rxe's requester)
#
# Two modes:
#   default (what .ci/run runs, about 2 minutes): 2 B, 1 MiB and 8 MiB in iteration mode, few iterations
#     (INTEROP_READ_SIZES "2:2000 1048576:20 8388608:4"). Checks completion: both ends exit 0, the client
#     prints its row with #bytes the size and #iterations -n, and neither log reports a completion error
#     (RETRY_EXC_ERR, "transport retry counter exceeded", any failed WC status). The RATIO lines are
#     printed but not checked (INTEROP_READ_MIN_RATIO 0): a run this short measures mostly the soft JVM's
#     warm-up under TCG, its ratio to rxe is not a stable figure (docs/PERFORMANCE.md).
#   INTEROP_READ_FULL=1 (or INTEROP_FULL=1; about 20 minutes: INTEROP_READ_FULL=1 bash interop/run.sh
#     read-bw): the measurement. Sizes "2/30 65536/30 262144/30 1048576/30 8388608:100" (each sampled
#     from second 30: the soft JVM's compiler still runs at second 15 under TCG), duration mode, and
#     each soft run's rate must reach INTEROP_READ_MIN_RATIO (0.5) of the baseline's at that size.
#
# Every run keeps perftest's defaults (128 outstanding reads, -t 128, timeout 14, MTU 4096 on this veth)
# except -s and the duration: perftest's duration mode, -D INTEROP_READ_DURATION -f INTEROP_READ_MARGIN,
# so that the first and last MARGIN seconds are not sampled, for C and Java alike. The margin is the
# soft JVM's warm-up, and under TCG that is long: compiled code comes late there (C1 compiles about 20
# methods a second; -XX:+PrintCompilation in the soft server showed Icrc.crc compiled 4 s and
# Responder.receive 14 s after the traffic started, C2 later still), and until then the data path runs
# in the interpreter at about 1.7 ms a datagram (a host runs it at 4 us). With -f 3 the c-s run measured
# that interpreter (2 B: 0.015 of rxe's rate). A run passes when both ends exit 0, no completion error is
# reported, and the client prints its result row with #bytes the size (and #iterations -n in iteration
# mode, at least one otherwise); the rate check passes when the client's rate of each soft run is at
# least INTEROP_READ_MIN_RATIO of the baseline's at that size (the rate: the row's MsgRate below 64 KiB,
# its BW average from 64 KiB on, where MsgRate's six decimals of Mpps keep one or two digits). One
# PASS/FAIL line per run and a RATIO line per soft run.
#
# perftest's rates come from the TSC: at the end of a run it estimates the TSC's frequency by a linear
# fit of 200 rdtsc/gettimeofday samples (get_clock.c, sample_get_cpu_mhz) and gives up when r^2 < 0.9
# ("Correlation coefficient r^2: ... < 0.9"); with -F (kept here, as cpufreq warnings mean nothing in a
# VM) print_report_bw then goes on with 0 cycles a second and prints 0.00 MB/s and 0 Mpps (read_lat
# prints inf). Under TCG a busy VM spoils the fit: the c-s 8 MiB client printed 0.00 MB/s with r^2 0.52
# while the soft server's JVM still ran beside it. That row measures nothing: the run is reported as
# "rate not measured" and, when the rate is checked, run once more.
#
# A reduced set of sizes rather than -a: -a runs 1000 iterations of every size from 2 B to 8 MiB, about
# 16 GB of READ responses, which takes kernel rxe alone 5-6 minutes under TCG and a soft JVM far longer.
#
#   INTEROP_READ_SIZES      sizes (defaults above). SIZE/MARGIN samples that size from second MARGIN on
#                           (-D 2*MARGIN+6 -f MARGIN): at 2 B the soft client reached 0.27-0.57 of rxe
#                           with the 15 s margin and 0.51 and 0.62 with 30 s, its data path's compiled
#                           code coming late under TCG. SIZE:ITERS runs that size in iteration mode,
#                           -n ITERS, instead (warm-up included, so ITERS large enough to outweigh it
#                           when measuring: with -n 10 the soft runs measured mostly their JVM's warm-up,
#                           0.35-0.44 of rxe; with -n 100, 0.64-0.75). 8 MiB needs it: with 128 READs
#                           of 8 MiB outstanding (1 GiB, 20 s at rxe's 50 MB/s under TCG) perftest's
#                           duration mode (perftest's CQ moderation of 100 or -Q 1) counted no iteration
#   INTEROP_READ_DURATION   -D (default 36); INTEROP_READ_MARGIN -f (default 15): 6 s measured
#                           after the soft JVM's warm-up (above)
#   INTEROP_READ_MIN_RATIO  the rate check's bound (default 0.5 with INTEROP_READ_FULL=1, else 0;
#                           0 turns the check off)
#   INTEROP_READ_ROLES      which soft runs (default "s-c c-s")
#   INTEROP_READ_JAVA_OPTS  JVM options of the rdma4j runs (default: C2 only, as the other measuring
#                           jobs, decisions/0028: C1-only code reached 0.30 of rxe at 2 B as the client,
#                           C2 0.57; tiered code replacement, where JVMs die under qemu's multi-threaded
#                           TCG, does not happen with one compiler. And no CRC32 intrinsic: its
#                           pclmulqdq folding loop is emulated slowly by TCG, 3-6x slower than zlib's
#                           table there, 5x faster on a real CPU; docs/decisions/0001-icrc-on-the-jvms-crc32.md.
#                           The kernel's rxe computes its ICRC with a table, so without the intrinsic
#                           both sides pay a like cost per byte in the VM)
#   INTEROP_READ_AB_OPTS    more JVM options for the roles written with a trailing + ("s-c+", "c-s+"):
#                           an A/B of an option against the same baseline in one VM run, e.g.
#                           INTEROP_READ_ROLES="c-s c-s+" INTEROP_READ_AB_OPTS=-Drdma4j.udp.gso=false
#   INTEROP_READ_PROFILE    SECONDS: a whole-VM perf profile (cpu-clock, call graphs) of each run from the
#                           start of its measured window, reported as NAME.perf*.txt beside its logs
#   INTEROP_READ_RUN_LIMIT  seconds one run may take (default 240; 120 in the default mode)
set -uo pipefail

. "$INTEROP_DIR/tools-env.sh" read-bw || exit 1
. "$INTEROP_DIR/net-setup.sh" || { echo "FAIL net-setup"; exit 1; }

FULL="${INTEROP_READ_FULL:-${INTEROP_FULL:-0}}"
if [[ $FULL == 1 ]]; then
  SIZES="${INTEROP_READ_SIZES:-2/30 65536/30 262144/30 1048576/30 8388608:100}"
  MIN_RATIO="${INTEROP_READ_MIN_RATIO:-0.5}"
  LIMIT="${INTEROP_READ_RUN_LIMIT:-240}"
else
  SIZES="${INTEROP_READ_SIZES:-2:200 8388608:5}"
  MIN_RATIO="${INTEROP_READ_MIN_RATIO:-0}"
  LIMIT="${INTEROP_READ_RUN_LIMIT:-120}"
fi
DURATION="${INTEROP_READ_DURATION:-36}"
MARGIN="${INTEROP_READ_MARGIN:-15}"
ROLES="${INTEROP_READ_ROLES:-s-c c-s}"
JOPTS="${INTEROP_READ_JAVA_OPTS:--XX:-TieredCompilation -XX:+UnlockDiagnosticVMOptions -XX:-UseCRC32Intrinsics}"
ACCESS=--enable-native-access=ALL-UNNAMED,org.rdma4j.verbs,org.rdma4j.soft,org.rdma4j.nativeverbs
RESULTS="$INTEROP_OUT/read-bw-results.txt"
: >"$RESULTS"
t_job=$SECONDS
port=18950

result() { # NAME STATUS DETAIL
  local line
  if [[ $2 -eq 0 ]]; then line="PASS $1: $3"; else line="FAIL $1: $3"; fi
  echo "$line"; echo "$line" >>"$RESULTS"
}
rdma4j_peer() { # the rdma4j tool in namespace peer (soft over UDP/IPv6)
  # shellcheck disable=SC2086 # option lists
  ip netns exec peer timeout "$LIMIT" "$JAVA" $TOOL_AOT_OPTS ${RDMA4J_INTEROP_JAVA_OPTS:-} $JOPTS ${EXTRA_JOPTS:-} "$ACCESS" \
    -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j perf read_bw --bind fd77::2 -x 1 -F --counters "$@"
}
ib_read() { timeout "$LIMIT" ib_read_bw -d rxe0 -x "$RXE_GID_V6" -F "$@"; }
listening() { # PORT NETNS PID: until the server listens; not once it has exited
  local i
  for ((i = 0; i < 1200; i++)); do
    ${2:+ip netns exec "$2"} ss -Htln "sport = :$1" 2>/dev/null | grep -q . && return 0
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
# rxe0's non-zero port counters as NAME=VALUE lines; the delta of two such snapshots says what one run
# cost rxe (retransmissions, duplicates, RNR NAKs).
rxe_counters() { grep -H . /sys/class/infiniband/rxe0/ports/1/hw_counters/* 2>/dev/null | sed 's|.*/||; s/:/=/'; }
# Where a run's packets were lost on their way between the two stacks, as NAME=VALUE lines (deltas with
# counter_delta): the per-CPU input backlogs (/proc/net/softnet_stat's second column: netdev_max_backlog
# overrun), each veth's receive drops, and the UDP receive buffer overruns in each namespace.
net_drops() {
  local _ dropped sum=0
  while read -r _ dropped _; do sum=$((sum + 16#$dropped)); done </proc/net/softnet_stat
  echo "softnet_backlog_drops=$sum"
  echo "veth0_rx_dropped=$(cat /sys/class/net/veth0/statistics/rx_dropped 2>/dev/null || echo 0)"
  echo "veth1_rx_dropped=$(ip netns exec peer cat /sys/class/net/veth1/statistics/rx_dropped 2>/dev/null || echo 0)"
  awk '$1 == "Udp6RcvbufErrors" { print "root_udp6_rcvbuf_errors=" $2 }' /proc/net/snmp6
  ip netns exec peer awk '$1 == "Udp6RcvbufErrors" { print "peer_udp6_rcvbuf_errors=" $2 }' /proc/net/snmp6
}
counter_delta() { # BEFORE AFTER: "name+delta ..." for the counters that moved, packets left out
  printf '%s\n--\n%s\n' "$1" "$2" | awk -F= '$0 == "--" { after = 1; next } !after { b[$1] = $2; next }
    $1 !~ /pkts$/ && $2 - b[$1] > 0 { printf "%s%s+%d", sep, $1, $2 - b[$1]; sep = " " }'
}
# The client's result row: the line after perftest's " #bytes" header.
row() { awk '/^ #bytes/ { hdr = 1; next } hdr && /^ *[0-9]+ +[0-9]+ / { print; exit }' "$1"; }

# run KIND SIZE [ITERS]: one run (duration mode without ITERS); sets RATE (the client's MsgRate in Mpps below 64 KiB, else its BW
# average in MB/s) or leaves it empty on failure.
run() {
  local kind=$1 size=$2 iters=${3:-} log spid cpid src crc r t0=$SECONDS name how counters_before
  port=$((port + 1))
  if [[ -n $iters ]]; then
    how=(-n "$iters")
  elif [[ -n ${4:-} ]]; then
    how=(-D $((2 * $4 + 6)) -f "$4") # perftest wants DURATION > 2 * MARGIN
  else
    how=(-D "$DURATION" -f "$MARGIN")
  fi
  counters_before="$(rxe_counters; net_drops)"
  name="read_bw $kind -s $size ${how[*]}"
  log="$INTEROP_OUT/read-bw-$kind-$size"
  RATE=
  EXTRA_JOPTS=
  [[ $kind == *+ ]] && EXTRA_JOPTS="${INTEROP_READ_AB_OPTS:-}" # the B of an A/B in one VM run
  case ${kind%+} in
    rxe) ib_read -p "$port" -s "$size" "${how[@]}" >"$log.server.log" 2>&1 & spid=$!
         listening "$port" "" "$spid" || { wait "$spid"; result "$name" 1 "ib_read_bw server did not listen"; return; }
         ib_read -p "$port" -s "$size" "${how[@]}" 10.77.0.1 >"$log.client.log" 2>&1 & cpid=$! ;;
    s-c) ib_read -p "$port" -s "$size" "${how[@]}" >"$log.server.log" 2>&1 & spid=$!
         listening "$port" "" "$spid" || { wait "$spid"; result "$name" 1 "ib_read_bw server did not listen"; return; }
         rdma4j_peer -p "$port" -s "$size" "${how[@]}" 10.77.0.1 >"$log.client.log" 2>&1 & cpid=$! ;;
    c-s) rdma4j_peer -p "$port" -s "$size" "${how[@]}" >"$log.server.log" 2>&1 & spid=$!
         listening "$port" peer "$spid" || { wait "$spid"; result "$name" 1 "rdma4j server did not listen"; return; }
         ib_read -p "$port" -s "$size" "${how[@]}" 10.77.0.2 >"$log.client.log" 2>&1 & cpid=$! ;;
  esac
  local ppid=
  if [[ -n ${INTEROP_READ_PROFILE:-} ]]; then
    # a whole-VM profile (cpu-clock samples, kernel and user) of PROFILE seconds from the measured window
    ( sleep "${4:-$MARGIN}"; perf record -a -g -F 199 -o "$log.perf.data" -- sleep "$INTEROP_READ_PROFILE" ) \
      >"$log.perf.log" 2>&1 & ppid=$!
  fi
  wait "$cpid"; crc=$?
  wait "$spid"; src=$?
  if [[ -n $ppid ]]; then
    wait "$ppid"
    perf report -i "$log.perf.data" --stdio --no-children -g none --sort comm,dso,sym 2>/dev/null | grep -v '^#' | grep . \
      | head -n 120 >"$log.perf.txt"
    perf report -i "$log.perf.data" --stdio -g none --sort comm,dso 2>/dev/null | grep -v '^#' | grep . \
      | head -n 30 >"$log.perf-comm.txt"
    perf report -i "$log.perf.data" --stdio --no-children --sort sym -G \
      --symbols=memset_erms,memcpy_erms,copy_user_enhanced_fast_string,clear_page_erms,loop_64 2>/dev/null \
      | grep -v '^#' | grep . | head -n 400 >"$log.perf-callers.txt"
  fi
  r="$(row "$log.client.log")"
  local problems=() wc_err moved soft clock=
  moved="$(counter_delta "$counters_before" "$(rxe_counters; net_drops)")"
  ((crc == 0)) || problems+=("client exit $crc")
  ((src == 0)) || problems+=("server exit $src")
  # A completion error (perftest: "Completion with error", "Failed status N"; rdma4j names the status)
  wc_err="$(cat "$log.client.log" "$log.server.log" | grep -v '^counters:' \
    | grep -iE -m 2 'RETRY_EXC|retry counter exceeded|completion with error|failed status|_ERR\b' \
    | tr -cd '[:print:]\n' | paste -sd'|' | cut -c1-200)"
  # the soft device's port counters (perf --counters): its retransmissions, duplicates and drops
  soft="$(grep -h -m 1 '^counters:' "$log.client.log" "$log.server.log" | head -n 1 | tr -cd '[:print:]' \
    | sed 's/^counters: *//; s/[a-z_]*pkts=[0-9]* *//g')"
  [[ -z $soft ]] || moved="${moved:+$moved; }soft: $soft"
  [[ -z $wc_err ]] || problems+=("completion error: $wc_err")
  [[ " $moved" != *" retry_exceeded_err+"* ]] || problems+=("rxe0 counted RETRY_EXC_ERR ($moved)")
  if [[ -z $r ]]; then
    problems+=("client printed no result row")
  else
    read -r rb ri _ ravg rrate <<<"$r"
    [[ $rb == "$size" && ( ( -n $iters && $ri == "$iters" ) || ( -z $iters && $ri -gt 0 ) ) ]] \
      || problems+=("client row '$rb $ri', expected #bytes $size, #iterations ${iters:-at least 1}")
  fi
  if ((${#problems[@]})); then
    echo "--- $name: server log tail:"; tail -n 8 "$log.server.log"
    echo "--- $name: client log tail:"; tail -n 8 "$log.client.log"
    result "$name [$((SECONDS - t0))s]" 1 "$(IFS=';'; echo "${problems[*]}")"
    return
  fi
  # perftest's TSC frequency estimate failed: the row's rates are 0 and measure nothing (header comment).
  clock="$(grep -h -m 1 'Correlation coefficient r^2' "$log.client.log" | tr -cd '[:print:]')"
  if [[ -n $clock ]]; then
    CLOCK_FAILED=1
    result "$name [$((SECONDS - t0))s]" 0 "completed; rate not measured: perftest's TSC estimate failed ($clock), row $ravg MB/s${moved:+; counters: $moved}"
    return
  fi
  if ((size >= 65536)); then RATE=$ravg; else RATE=$rrate; fi
  result "$name [$((SECONDS - t0))s]" 0 "BW average $ravg MB/s, MsgRate $rrate Mpps${moved:+; counters: $moved}"
}
# measure KIND SIZE ITERS MARGIN: run, and once more if the rate is checked and perftest could not measure it
measure() {
  CLOCK_FAILED=0
  run "$@"
  if ((CLOCK_FAILED)) && [[ $MIN_RATIO != 0 ]]; then
    echo "--- read_bw $1 -s $2: perftest's TSC estimate failed, running it once more to measure the rate"
    CLOCK_FAILED=0
    run "$@"
  fi
}

for sz in $SIZES; do
  margin=
  if [[ $sz == */* ]]; then margin=${sz#*/}; sz=${sz%%/*}; fi
  size=${sz%%:*} iters=
  [[ $sz == *:* ]] && iters=${sz#*:}
  measure rxe "$size" "$iters" "$margin"; base=$RATE base_clock=$CLOCK_FAILED
  for role in $ROLES; do
    measure "$role" "$size" "$iters" "$margin"
    if [[ -z $RATE || -z $base ]]; then
      # completed but perftest's TSC estimate failed (on this run or the baseline's): no figure to check
      if ((CLOCK_FAILED || base_clock)) && [[ $MIN_RATIO != 0 ]]; then
        result "read_bw $role -s $size rate" 1 "not measured: perftest's TSC estimate failed twice ($( ((base_clock)) && echo "the baseline's" || echo "this run's"))"
      fi
      continue
    fi
    ratio="$(awk -v a="$RATE" -v b="$base" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "nan" }')"
    ok="$(awk -v r="$ratio" -v m="$MIN_RATIO" 'BEGIN { print (r != "nan" && r + 0 >= m + 0) ? 0 : 1 }')"
    echo "RATIO read_bw $role -s $size: $ratio of rxe against itself ($RATE / $base $( ((size >= 65536)) && echo MB/s || echo Mpps))"
    if [[ $MIN_RATIO != 0 ]]; then
      result "read_bw $role -s $size rate" "$ok" "$ratio of rxe's own (bound $MIN_RATIO)"
    fi
  done
done

echo "--- rxe0 hw_counters: $(grep -H . /sys/class/infiniband/rxe0/ports/1/hw_counters/* 2>/dev/null | sed 's|.*/||' | grep -v ':0$' | paste -sd' ')"
pass=$(grep -c '^PASS ' "$RESULTS") fail=$(grep -c '^FAIL ' "$RESULTS")
echo "read-bw: $pass passed, $fail failed in $((SECONDS - t_job))s ($([[ $FULL == 1 ]] && echo full || echo default) mode; sizes: $SIZES; roles: $ROLES; bound $MIN_RATIO)"
grep '^FAIL ' "$RESULTS" | sed 's/^/  /'
((fail == 0 && pass > 0))
