#!/usr/bin/env bash
# Interop job, runs inside the VM: the native provider on softiwarp (siw0, the kernel's iWARP driver,
# built out of tree for the VM's kernel by interop/siw-build.sh and loaded at boot; see
# interop/README.md, "The siw job"). siw0 sits on veth4 (10.79.0.1/24, fd79::1/64; veth5 in namespace
# siwns), a net device of its own, so that rdma_cm maps those addresses to siw0 while rxe0 keeps veth0:
#   devinfo    `rdma4j devinfo -d siw0` against `ibv_devinfo -d siw0`, diffed line for line (and -v,
#              without rdma4j's counters block); transport iWARP, node type RNIC, link layer Ethernet
#   cm_id      the C rping server's listener on 10.79.0.1 is bound to siw0 (`rdma res show cm_id`)
#   c2n        rping -s on siw0, rdma4j rping -c (native provider; librdmacm; iw_cm) on siw0
#   n2c        rdma4j rping -s on siw0, rping -c
#              (100 validated pings each, IPv4 both ways and c2n over IPv6, both ends on siw0's address: siw's TCP
#              connection runs over lo); at the end c2n v4 again after `rdma link delete rxe0`
#   conformance  the conformance suites on siw0 through NativeSetups: the control-path suites, and the
#              data-path suites (SendRecv and RdmaRead; all with INTEROP_SIW_DATAPATH=full) with every RC pair
#              connected through librdmacm (CmQpConnector: iWARP connects
#              QPs only through the CM; both ends on 10.79.0.1), with siw's departures skipped with a reason
#              (SiwDeviations.java)
# Prints one PASS/FAIL line per run; exits non-zero if any failed.
#
#   INTEROP_RPING_COUNT          pings per rping run (default 100)
#   INTEROP_SIW_CONFORMANCE=0    no conformance run
#   INTEROP_SIW_RPING=0          no rping runs (the conformance run alone)
#   INTEROP_SIW_DATAPATH=full    every data-path suite (default: SendRecv and RdmaRead besides the
#                                control-path suites, for CI time; the others add about 4 minutes)
set -uo pipefail

. "$INTEROP_DIR/tools-env.sh" siw || exit 1
COUNT="${INTEROP_RPING_COUNT:-100}"
pass=0 fail=0 port=7274
SIW_ADDR=10.79.0.1 SIW_ADDR6=fd79::1

result() { # NAME RC DETAIL
  if [[ $2 -eq 0 ]]; then echo "PASS $1${3:+: $3}"; pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
}

if [[ ! -d /sys/module/siw ]]; then
  echo "FAIL siw: the siw module is not loaded: provisioning built no siw.ko for $(uname -r) (see the provision log and interop/siw-build.sh)"
  exit 1
fi
. "$INTEROP_DIR/net-setup.sh" || { echo "FAIL siw: net-setup"; exit 1; }

if [[ ! -d /sys/class/infiniband/siw0 ]]; then
  { ip netns add siwns && ip link add veth4 type veth peer name veth5 && ip link set veth5 netns siwns &&
    ip addr add "$SIW_ADDR/24" dev veth4 && ip -6 addr add "$SIW_ADDR6/64" dev veth4 nodad && ip link set veth4 up && ip -n siwns link set veth5 up &&
    rdma link add siw0 type siw netdev veth4; } \
    || { echo "FAIL siw: cannot create veth4/siw0"; dmesg | tail -n 5; exit 1; }
fi
echo "--- $(rdma link show | paste -sd';')"

ACCESS=--enable-native-access=ALL-UNNAMED,org.rdma4j.verbs,org.rdma4j.soft,org.rdma4j.nativeverbs
rdma4j() {
  # shellcheck disable=SC2086 # option lists
  timeout 240 "$JAVA" $TOOL_AOT_OPTS ${RDMA4J_INTEROP_JAVA_OPTS:-} -XX:TieredStopAtLevel=1 "$ACCESS" \
    -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}

# --- devinfo
t0=$SECONDS
ibv_devinfo -d siw0 >"$INTEROP_OUT/devinfo.c.txt" 2>&1
rdma4j devinfo -d siw0 >"$INTEROP_OUT/devinfo.java.txt" 2>"$INTEROP_OUT/devinfo.java.err"
jrc=$?
if ((jrc != 0)) || ! grep -q "hca_id:[[:space:]]*siw0" "$INTEROP_OUT/devinfo.java.txt"; then
  cat "$INTEROP_OUT/devinfo.java.txt" "$INTEROP_OUT/devinfo.java.err"
  echo "FAIL siw: native provider unavailable or no siw0: rdma4j devinfo -d siw0 exited $jrc"
  exit 1
fi
if diff -u "$INTEROP_OUT/devinfo.c.txt" "$INTEROP_OUT/devinfo.java.txt" >"$INTEROP_OUT/devinfo.diff"; then
  result "devinfo -d siw0 [$((SECONDS - t0))s]" 0 "matches ibv_devinfo line for line ($(wc -l <"$INTEROP_OUT/devinfo.c.txt") lines)"
else
  cat "$INTEROP_OUT/devinfo.diff"; result "devinfo -d siw0" 1 "differs from ibv_devinfo (diff above)"
fi
t0=$SECONDS
ibv_devinfo -v -d siw0 >"$INTEROP_OUT/devinfo-v.c.txt" 2>&1
rdma4j devinfo -v -d siw0 >"$INTEROP_OUT/devinfo-v.java.txt" 2>&1
# rdma4j's -v ends each port with a "counters:" block of its own (siw has none: an empty block).
awk '/^\t+counters:$/ { skip = 1; depth = match($0, /[^\t]/); next }
     skip && match($0, /[^\t]/) > depth { next } { skip = 0; print }' \
  "$INTEROP_OUT/devinfo-v.java.txt" >"$INTEROP_OUT/devinfo-v.java-nocounters.txt"
if diff -u "$INTEROP_OUT/devinfo-v.c.txt" "$INTEROP_OUT/devinfo-v.java-nocounters.txt" >"$INTEROP_OUT/devinfo-v.diff"; then
  result "devinfo -v -d siw0 [$((SECONDS - t0))s]" 0 "matches ibv_devinfo -v line for line ($(wc -l <"$INTEROP_OUT/devinfo-v.c.txt") lines)"
else
  cat "$INTEROP_OUT/devinfo-v.diff"; result "devinfo -v -d siw0" 1 "differs from ibv_devinfo -v (diff above)"
fi
what="$(grep -E '^[[:space:]]+(transport|link_layer):' "$INTEROP_OUT/devinfo-v.java.txt" | tr -s '\t ' ' ' | paste -sd';')"
node="$(cat /sys/class/infiniband/siw0/node_type 2>/dev/null)"
if [[ $what == *"transport: iWARP (1)"*"link_layer: Ethernet"* && $node == "4: RNIC" ]]; then
  result "siw0 is an iWARP RNIC on Ethernet" 0 "$what; node_type $node"
else
  result "siw0 is an iWARP RNIC on Ethernet" 1 "rdma4j says '$what', sysfs node_type '$node'"
fi

# --- rping
wait_listen_cm() { # PID LOG: until the rdma4j server says it listens (-d), not once it has exited
  local i
  for ((i = 0; i < 900; i++)); do
    grep -q '^listening on' "$2" 2>/dev/null && return 0
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}

# The client's ping lines are rping's: "ping data: rdma-ping-N: " then printable ASCII from 'A' + N % 58.
check_pings() { # LOG
  awk -v want="$COUNT" '
    /^ping data: rdma-ping-[0-9]+: / {
      n = substr($3, 11) + 0
      if (n != seen) { print "ping " seen " missing (got " n ")"; bad = 1; exit }
      seen++
    }
    END { if (!bad && seen != want) print seen " ping lines, expected " want }' "$1"
}

run() { # DIRECTION FAMILY [NOTE]: c2n (C server, rdma4j client) or n2c; v4 or v6
  local dir=$1 fam=$2 note=${3:+ ($3)} t0=$SECONDS log="$INTEROP_OUT/rping-$1-$2${3:+-x}" spid crc src problems i addr
  local name="rping $dir $fam siw0$note"
  port=$((port + 1))
  [[ $fam == v6 ]] && addr=$SIW_ADDR6 || addr=$SIW_ADDR
  if [[ $dir == n2c ]]; then
    rdma4j rping -s -a "$addr" -p "$port" -V -d --accept-timeout 180 >"$log.server.log" 2>&1 &
    spid=$!
    if ! wait_listen_cm "$spid" "$log.server.log"; then
      result "$name" 1 "the rdma4j server did not listen: $(tail -n 5 "$log.server.log" | paste -sd' ')"
      kill "$spid" 2>/dev/null; wait "$spid"; return
    fi
    # line-buffered: rping prints its DISCONNECT line to stderr, which would land inside a half-flushed stdout line
    timeout 150 stdbuf -oL rping -c -a "$addr" -p "$port" -C "$COUNT" -v -V -d >"$log.client.log" 2>&1; crc=$?
  else
    timeout 200 rping -s -a "$addr" -p "$port" -v -V -d >"$log.server.log" 2>&1 &
    spid=$!
    local bound=
    for ((i = 0; i < 50; i++)); do # rping's server listens within a moment; no line says so
      sleep 0.2
      bound="$(rdma res show cm_id 2>/dev/null | grep -F "src-addr $addr:$port " | head -n1)"
      [[ -n $bound ]] && break
      kill -0 "$spid" 2>/dev/null || break
    done
    # rdma_cm binds a listener on a specific address to the device of that address's net device.
    if [[ $fam == v6 && -z $bound ]]; then
      : # (how `rdma res` prints an IPv6 address and port is not checked here)
    elif [[ $bound == "link siw0/"* ]]; then
      result "cm_id: rping's listener on $addr:$port is on siw0" 0
    else
      result "cm_id: rping's listener on $addr:$port is on siw0" 1 "rdma res show cm_id: '${bound:-nothing}'"
    fi
    rdma4j rping -c -a "$addr" -p "$port" -C "$COUNT" -v -V -d >"$log.client.log" 2>&1; crc=$?
  fi
  local deadline=$((SECONDS + 30))
  while kill -0 "$spid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.5; done
  kill "$spid" 2>/dev/null
  wait "$spid"; src=$?
  problems="$(check_pings "$log.client.log")"
  ((crc == 0)) || problems+=" client exit $crc;"
  ((src == 0)) || problems+=" server exit $src;"
  if [[ -n $problems ]]; then
    result "$name [$((SECONDS - t0))s]" 1 "$problems"
    echo "--- server log:"; grep -v -e '^ping data' -e '^RDMA addr' "$log.server.log" | tail -n 15
    echo "--- client log:"; grep -v -e '^ping data' -e '^RDMA addr' "$log.client.log" | tail -n 15
  else
    result "$name [$((SECONDS - t0))s]" 0 "$COUNT validated pings"
  fi
}
if [[ ${INTEROP_SIW_RPING:-1} != 0 ]]; then
  run c2n v4
  run n2c v4
  run c2n v6 # (n2c v6 takes the server's path of n2c v4 with another address: left out for time)
fi

# --- the conformance suites: control path, and data path over CM-connected RC pairs (iWARP connects QPs
# only through the CM); UC, UD, multicast, port state and lossy links do not exist on siw
if [[ ${INTEROP_SIW_CONFORMANCE:-1} != 0 ]]; then
  classes=(DeviceConformanceTest ProtectionDomainConformanceTest MemoryRegionConformanceTest MemoryRulesConformanceTest
           CompletionQueueConformanceTest CompletionChannelConformanceTest EventPollerConformanceTest
           ResourceLimitsConformanceTest QueuePairStateConformanceTest QueuePairTransitionConformanceTest
           AsyncEventConformanceTest LifetimeConformanceTest SendRecvConformanceTest RdmaReadConformanceTest)
  # the rest of the data path (about 4 more minutes of VM time) only when asked for
  if [[ ${INTEROP_SIW_DATAPATH:-} == full ]]; then
    classes+=(RdmaWriteConformanceTest AtomicConformanceTest ErrorOutcomeConformanceTest
              SignalingAndFenceConformanceTest SendQueueDrainConformanceTest PostingConformanceTest
              SharedReceiveQueueConformanceTest)
  fi
  sel=""
  for c in "${classes[@]}"; do sel+=" --select-class org.rdma4j.conformance.$c"; done
  out="$(INTEROP_CONFORMANCE_ISOLATED=0 INTEROP_CONFORMANCE_DEVICE=siw0 INTEROP_CONFORMANCE_GID=0 \
         INTEROP_CONFORMANCE_CM_ADDRESS=$SIW_ADDR \
         INTEROP_CONFORMANCE_SELECT="${sel# }" INTEROP_CONFORMANCE_TIMEOUT=${INTEROP_SIW_CONFORMANCE_TIMEOUT:-300} \
         INTEROP_OUT="$INTEROP_OUT" bash "$INTEROP_DIR/jobs/native-conformance.sh" 2>&1)"
  crc=$?
  # one line per skipped or failed test with its reason, the counts, the verdict
  grep -E '^(SKIP|FAIL|---|PASS)' <<<"$out" | grep -v -e '--- C on' -e '--- launcher' | sed 's/^PASS native-conformance (native)/PASS conformance siw0/;s/^FAIL native-conformance (native)/FAIL conformance siw0/'
  if ((crc == 0)); then pass=$((pass + 1)); else fail=$((fail + 1)); fi
fi

# --- siw alone: the rdma4j client finds siw0 with no RoCE device whose GID prefix could lead it to the
# native provider (an iWARP GID is a MAC address: the cm hands the id to librdmacm, which knows siw0)
if rdma link delete rxe0; then
  run c2n v4 "rxe0 deleted"
else
  result "rdma link delete rxe0" 1 "$(dmesg | tail -n 2 | paste -sd' ')"
fi

echo "siw: $pass passed, $fail failed"
((fail == 0))
