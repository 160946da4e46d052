#!/usr/bin/env bash
# Interop job, runs inside the rxe VM: `rdma4j perf TEST` against perftest's `ib_TEST` (the rdma-core
# perftest package on the host) for the eight tests write_lat, write_bw, read_lat, read_bw, send_lat,
# send_bw, atomic_lat, atomic_bw, each in both roles (the first named side is the server):
#   n-c / c-n  rdma4j on the native provider on rxe0 against perftest on rxe0 (GID ::ffff:10.77.0.1)
#   s-c / c-s  rdma4j's soft device over RoCEv2/UDP in namespace peer (--bind fd77::2 -x 1) against
#              perftest on rxe0 (GID fd77::1)
# A run passes when both ends exit 0, the client prints perftest's result table with one row whose
# #bytes is the test's default size and whose #iterations is -n, the server's row (perftest's servers
# print one for every test but read_lat and atomic_lat) says the same, both ends print the same MTU,
# and each end's "local address" lines (QPN, PSN, RKey, VAddr, GID) are the other end's "remote
# address" lines: the exchange went through unchanged both ways. One PASS/FAIL line per run; on a
# failure the lines that differ and the tails of both logs.
#
#   INTEROP_PERF_TESTS     tests to run (default: all eight)
#   INTEROP_PERF_FULL=1    every test in both roles in each mode (32 runs); by default each test runs
#                          in one role per mode and the other mode takes the other role (16 runs: every
#                          test in both roles, every mode in both roles, half the CI time)
#   INTEROP_PERF_MODES     native and/or soft (default: both)
#   INTEROP_PERF_ITERS     -n of the latency tests (default 100)
#   INTEROP_PERF_BW_ITERS  -n of the bandwidth tests (default 20: each is 20 x 64 KiB; with soft as the
#                          server under TCG, rxe's retransmissions of larger bursts dominate the run)
#   INTEROP_PERF_RUN_LIMIT seconds a run may take from the client's start (default 150); then the JVMs
#                          still running print their threads (SIGQUIT) into their logs and are stopped
#   INTEROP_PERF_SERIAL=1  run the native and the soft runs one after the other (default: the two
#                          modes run side by side, each its runs in turn; see interop/README.md)
#   INTEROP_PERF_JAVA_OPTS JVM options of the rdma4j runs (default -XX:TieredStopAtLevel=1, as the other
#                          jobs: see docs/decisions/0028-the-interop-vm.md on tiered compilation under TCG)
#   INTEROP_PERF_SELFTEST=1  the harness's own check: perftest in place of rdma4j on the native side
#                          (perftest against itself must pass every check); the soft side is skipped
#   INTEROP_PERF_RUNS      instead of every test in both roles: TEST:xc (rdma4j serves, perftest is the
#                          client) and TEST:cx (the other way round) runs, in each mode
#   INTEROP_PERF_RDMA_CM=1 every end gets -R (perftest's rdma_cm mode; jobs/perf-cm.sh sets it): the
#                          exchange and the test QPs go through the connection managers (perftest's -R
#                          is IPv4 only: the soft end is --bind 10.77.0.2 --udp-mode raw); an rdma4j
#                          server counts as listening once it prints "Waiting for client to connect", a
#                          perftest server after a second (it says nothing when its rdma_cm listens)
set -uo pipefail

. "$INTEROP_DIR/tools-env.sh" perf || exit 1
TESTS="${INTEROP_PERF_TESTS:-write_lat write_bw read_lat read_bw send_lat send_bw atomic_lat atomic_bw}"
MODES="${INTEROP_PERF_MODES:-native soft}"
LAT_ITERS="${INTEROP_PERF_ITERS:-100}"
BW_ITERS="${INTEROP_PERF_BW_ITERS:-20}"
SELFTEST="${INTEROP_PERF_SELFTEST:-0}"
RUN_LIMIT="${INTEROP_PERF_RUN_LIMIT:-150}"
FULL="${INTEROP_PERF_FULL:-0}"
RDMA_CM="${INTEROP_PERF_RDMA_CM:-0}"
JOB=perf CM_ARG=()
((RDMA_CM)) && JOB=perf-cm CM_ARG=(-R)
RESULTS="$INTEROP_OUT/$JOB-results.txt"
: >"$RESULTS"
t_job=$SECONDS

result() { # NAME STATUS DETAIL: one line, appended in one write (the modes run side by side)
  local line
  if [[ $2 -eq 0 ]]; then line="PASS $1: $3"; else line="FAIL $1: $3"; fi
  echo "$line"; echo "$line" >>"$RESULTS"
}

. "$INTEROP_DIR/net-setup.sh" || { echo "FAIL net-setup"; exit 1; }

ACCESS=--enable-native-access=ALL-UNNAMED,org.rdma4j.verbs,org.rdma4j.soft,org.rdma4j.nativeverbs
rdma4j() { # the rdma4j tool in the root namespace (rxe0, native provider)
  # shellcheck disable=SC2086 # option lists
  timeout 180 "$JAVA" $TOOL_AOT_OPTS ${RDMA4J_INTEROP_JAVA_OPTS:-} ${INTEROP_PERF_JAVA_OPTS--XX:TieredStopAtLevel=1} "$ACCESS" \
    -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}
rdma4j_peer() { # the rdma4j tool in namespace peer (soft over UDP)
  # shellcheck disable=SC2086
  ip netns exec peer timeout 180 "$JAVA" $TOOL_AOT_OPTS ${RDMA4J_INTEROP_JAVA_OPTS:-} ${INTEROP_PERF_JAVA_OPTS--XX:TieredStopAtLevel=1} \
    "$ACCESS" -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}
perftest() { # TEST ARGS...: perftest's binary for TEST
  local t=$1; shift
  timeout 180 "ib_$t" "$@"
}

wait_listen() { # PORT NETNS PID: until the server listens; not once it has exited
  local i
  for ((i = 0; i < 600; i++)); do
    ${2:+ip netns exec "$2"} ss -Htln "sport = :$1" 2>/dev/null | grep -q . && return 0
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}

# java_of PID: the JVMs among PID and its descendants (the rdma4j functions run java under timeout,
# and for namespace peer under ip netns exec).
java_of() {
  local p kids
  [[ $(cat "/proc/$1/comm" 2>/dev/null) == java ]] && echo "$1"
  kids="$(cat /proc/"$1"/task/*/children 2>/dev/null)"
  for p in $kids; do java_of "$p"; done
}
# dump_threads PID: the JVMs under PID print their threads' stacks to their logs (SIGQUIT), so a hung
# rdma4j end shows where it waits.
dump_threads() {
  local j
  for j in $(java_of "$1"); do kill -QUIT "$j" 2>/dev/null; done
  sleep 2
}

# side KIND TEST: one end's command in CMD, its namespace in NS, the address its server listens on in
# ADDR, a name in WHO. KIND c (perftest on rxe0), n (rdma4j, native provider, rxe0), s (rdma4j, soft
# over UDP, namespace peer). Every end gets -F: perftest refuses to run when the VM's CPU frequency
# readings disagree, which they always do under TCG.
side() {
  local kind=$1 t=$2
  case $kind in
    c) CMD=(perftest "$t" -d rxe0 -x "$GID" -F "${CM_ARG[@]}"); NS=""; ADDR=10.77.0.1; WHO="ib_$t" ;;
    n) if ((SELFTEST)); then CMD=(perftest "$t" -d rxe0 -x "$GID" -F "${CM_ARG[@]}"); WHO="ib_$t (selftest)"
       else CMD=(rdma4j perf "$t" -d rxe0 -x "$GID" -F "${CM_ARG[@]}"); WHO="rdma4j perf -d rxe0"; fi
       NS=""; ADDR=10.77.0.1 ;;
    s) if ((RDMA_CM)); then CMD=(rdma4j_peer perf "$t" --bind 10.77.0.2 --udp-mode raw -x 1 -F -R)
         WHO="rdma4j perf --bind 10.77.0.2"
       else CMD=(rdma4j_peer perf "$t" --bind fd77::2 -x 1 -F); WHO="rdma4j perf --bind fd77::2"; fi
       NS=peer; ADDR=10.77.0.2 ;;
  esac
  if ((RDMA_CM)); then WHO+=" -R"; fi
}

# wait_up KIND PORT NETNS PID LOG: until the server of KIND listens (TCP: ss; -R: see above).
wait_up() {
  local i
  if ((!RDMA_CM)); then wait_listen "$2" "$3" "$4"; return; fi
  if [[ $1 == c ]] || ((SELFTEST)); then
    sleep 1; kill -0 "$4" 2>/dev/null; return
  fi
  for ((i = 0; i < 600; i++)); do
    grep -q 'Waiting for client to connect' "$5" 2>/dev/null && return 0
    kill -0 "$4" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}

# The result row of a perftest table: the line after the header that starts with " #bytes".
row() { awk '/^ #bytes/ { hdr = 1; next } hdr && /^ *[0-9]+ +[0-9]+ / { print; exit }' "$1"; }
# Each "local address" / "remote address" line with the GID line after it, one line each.
addr() { # FILE local|remote
  awk -v want=" $2 address:" 'index($0, want) == 1 { line = $0; getline g; if (g ~ /^ GID:/) line = line " |" g; print line }' "$1" \
    | sed "s/^ $2 address: //"
}
mtu() { sed -n 's/^ Mtu *: *\([0-9]*\).*/\1/p' "$1" | head -n 1; }
default_size() { case $1 in atomic_*) echo 8 ;; *_lat) echo 2 ;; *) echo 65536 ;; esac; }
# perftest's servers of read_lat and atomic_lat print no table (the client measures alone).
server_prints_row() { [[ $1 != read_lat && $1 != atomic_lat ]]; }
# The latency tests' row: #bytes #iterations t_min t_max t_typical ...; bandwidth: #bytes #iterations peak avg rate
figure() { # TEST ROW
  if [[ $1 == *_lat ]]; then awk '{ printf "t_typical %s usec", $5 }' <<<"$2"
  else awk '{ printf "BW average %s MB/s, %s Mpps", $4, $5 }' <<<"$2"; fi
}

# check TEST SERVERLOG CLIENTLOG: prints what is wrong, one line each; silent when all is well.
check() {
  local t=$1 slog=$2 clog=$3 crow srow want=$(default_size "$1")
  crow="$(row "$clog")" srow="$(row "$slog")"
  if [[ -z $crow ]]; then
    echo "client printed no result row"
  else
    read -r cb ci _ <<<"$crow"
    [[ $cb == "$want" ]] || echo "client #bytes $cb, expected perftest's default $want"
    [[ $ci == "$ITERS" ]] || echo "client #iterations $ci, expected -n $ITERS"
  fi
  if [[ -n $srow ]]; then
    read -r sb si _ <<<"$srow"
    [[ -z $crow || ($sb == "$cb" && $si == "$ci") ]] || echo "server row '$sb $si' and client row '$cb $ci' disagree on #bytes/#iterations"
  elif server_prints_row "$t"; then
    echo "server printed no result row (perftest's ib_$t server prints one)"
  fi
  local sm cm
  sm="$(mtu "$slog")" cm="$(mtu "$clog")"
  [[ -n $sm && $sm == "$cm" ]] || echo "MTU lines differ: server '${sm:-none}', client '${cm:-none}'"
  local sl sr cl cr
  sl="$(addr "$slog" local)" sr="$(addr "$slog" remote)" cl="$(addr "$clog" local)" cr="$(addr "$clog" remote)"
  [[ -n $sl && $sl == "$cr" ]] || echo "server's local address '${sl:-none}' != client's remote address '${cr:-none}'"
  [[ -n $cl && $cl == "$sr" ]] || echo "client's local address '${cl:-none}' != server's remote address '${sr:-none}'"
}

# dump_excerpt LOG: the log without a thread dump's JVM-internal threads, at most 60 lines; with a
# dump, the stacks of the threads that are rdma4j's (main and the device's own).
dump_excerpt() {
  if grep -q '^Full thread dump' "$1"; then
    sed -n '1,/^Full thread dump/p' "$1" | tail -n 25
    awk '/^"/ { keep = ($0 ~ /^"(main|rdma4j|perf)/) } keep' "$1" | head -n 60
  else
    tail -n 25 "$1"
  fi
}

# pair SERVER CLIENT TEST: one run, SERVER and CLIENT kinds as for side().
pair() {
  local sk=$1 ck=$2 t=$3 scmd ccmd sns saddr swho cwho spid src crc t0=$SECONDS tl
  local name="$t $sk-$ck" ITERS=$LAT_ITERS
  [[ $t == *_bw ]] && ITERS=$BW_ITERS
  port=$((port + 1))
  local log="$INTEROP_OUT/$JOB-$t-$sk$ck-$port"
  side "$sk" "$t"; scmd=("${CMD[@]}"); sns=$NS; saddr=$ADDR; swho=$WHO
  side "$ck" "$t"; ccmd=("${CMD[@]}"); cwho=$WHO
  local common=(-p "$port" -n "$ITERS")
  "${scmd[@]}" "${common[@]}" >"$log.server.log" 2>&1 &
  spid=$!
  if ! wait_up "$sk" "$port" "$sns" "$spid" "$log.server.log"; then
    kill "$spid" 2>/dev/null; wait "$spid"; src=$?
    echo "--- $name: server ($swho, exit $src):"; tail -n 20 "$log.server.log"
    result "$name [$((SECONDS - t0))s]" 1 "server ($swho) did not listen on $port (exit $src)"; return
  fi
  tl=$((SECONDS - t0))
  "${ccmd[@]}" "${common[@]}" "$saddr" >"$log.client.log" 2>&1 &
  local cpid=$! deadline=$((SECONDS + RUN_LIMIT))
  # Both ends must be done within RUN_LIMIT seconds of the client's start; a JVM still running then
  # dumps its threads into its log before it is stopped.
  while kill -0 "$cpid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.5; done
  if kill -0 "$cpid" 2>/dev/null; then
    echo "--- $name: the client still runs after ${RUN_LIMIT}s: thread dumps in the logs"
    dump_threads "$cpid"; dump_threads "$spid"; kill "$cpid" "$spid" 2>/dev/null
  fi
  wait "$cpid"; crc=$?
  while kill -0 "$spid" 2>/dev/null && ((SECONDS < deadline + 5)); do sleep 0.5; done
  if kill -0 "$spid" 2>/dev/null; then
    echo "--- $name: the server still runs after the client ended: thread dump in its log"
    dump_threads "$spid"; kill "$spid" 2>/dev/null
  fi
  wait "$spid"; src=$?
  local problems
  problems="$(check "$t" "$log.server.log" "$log.client.log")"
  ((src == 0)) || problems+=$'\n'"server exit $src"
  ((crc == 0)) || problems+=$'\n'"client exit $crc"
  problems="$(sed '/^$/d' <<<"$problems")"
  if [[ -n $problems ]]; then
    echo "--- $name: server: $swho ${common[*]}"; dump_excerpt "$log.server.log"
    echo "--- $name: client: $cwho ${common[*]} $saddr"; dump_excerpt "$log.client.log"
    result "$name [$((SECONDS - t0))s]" 1 "server $swho, client $cwho: $(paste -sd';' <<<"$problems")"
  else
    result "$name [$((SECONDS - t0))s, server up after ${tl}s]" 0 "server $swho, client $cwho: $(row "$log.client.log" | awk '{ print $1 " B x " $2 }'), $(figure "$t" "$(row "$log.client.log")")"
  fi
}

# mode native|soft [PARITY]: the tests one run after the other, both roles or (default) one role each,
# alternating, starting with rdma4j serving when PARITY is 0.
mode() {
  local x port
  case $1 in
    native) GID=$RXE_GID_V4; x=n; port=18600 ;;
    soft) GID=$RXE_GID_V6; x=s; port=18700
          ((RDMA_CM)) && GID=$RXE_GID_V4 ;;
  esac
  if [[ -n ${INTEROP_PERF_RUNS:-} ]]; then
    local r
    for r in $INTEROP_PERF_RUNS; do # TEST:xc (this mode's rdma4j end serves) or TEST:cx (perftest serves)
      case ${r#*:} in
        xc) pair "$x" c "${r%%:*}" ;;
        cx) pair c "$x" "${r%%:*}" ;;
        *) result "$JOB: INTEROP_PERF_RUNS" 1 "'$r' is not TEST:xc or TEST:cx" ;;
      esac
    done
    return
  fi
  local i=0
  for t in $TESTS; do
    if ((FULL)); then
      pair "$x" c "$t"
      pair c "$x" "$t"
    elif (((i + ${2:-0}) % 2 == 0)); then # one role per test, the other mode takes the other role
      pair "$x" c "$t"
    else
      pair c "$x" "$t"
    fi
    i=$((i + 1))
  done
}

run_modes=()
for m in $MODES; do
  case $m in
    native) run_modes+=(native) ;;
    soft) if ((SELFTEST)); then echo "NOTE perf: selftest: the soft side has no perftest stand-in, skipped"
          else run_modes+=(soft); fi ;;
    *) result "perf: INTEROP_PERF_MODES" 1 "unknown mode '$m' (native, soft)" ;;
  esac
done
if [[ ${INTEROP_PERF_SERIAL:-0} == 1 ]]; then
  k=0; for m in "${run_modes[@]}"; do mode "$m" "$k"; k=$((k + 1)); done
else
  pids=()
  k=0; for m in "${run_modes[@]}"; do mode "$m" "$k" & pids+=($!); k=$((k + 1)); done
  for p in "${pids[@]}"; do wait "$p"; done
fi

echo "--- rxe0 hw_counters: $(grep -H . /sys/class/infiniband/rxe0/ports/1/hw_counters/* 2>/dev/null | sed 's|.*/||' | paste -sd' ')"
pass=$(grep -c '^PASS ' "$RESULTS") fail=$(grep -c '^FAIL ' "$RESULTS")
echo "$JOB: $pass passed, $fail failed in $((SECONDS - t_job))s (modes: ${run_modes[*]}; -n $LAT_ITERS latency, $BW_ITERS bandwidth)"
grep '^FAIL ' "$RESULTS" | sed 's/^/  /'
((fail == 0 && pass > 0))
