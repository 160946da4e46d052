#!/usr/bin/env bash
# Interop job, runs inside the rxe VM: `rdma4j mckey` (rdma_join_multicast on rdma4j's cm) against
# rdmacm-utils' `mckey` on rxe0 (the kernel's rdma_cm joins the group: on RoCEv2 the MGID is the
# IPv4-mapped group, and for an IPv4 group it joins the IP group on veth0 with IGMP), 10 datagrams of
# 100 bytes per run (mckey's defaults), IPv4 groups:
#   c2j  mckey -s on rxe0 sends, rdma4j mckey receives on a soft UDP device in namespace peer (2 nodes)
#   j2c  rdma4j mckey -s on a soft UDP device in namespace peer (raw IPv4, so rxe accepts the ICRC) sends,
#        mckey receives on rxe0
#   c2n  mckey -s on rxe0 sends, rdma4j mckey receives on rxe0 itself (the native provider: librdmacm)
#   n2c  rdma4j mckey -s on rxe0 (native) sends, mckey receives on rxe0
# c2n and n2c need rxe0 to loop a group's datagrams back to its own QPs. A run passes when both ends
# exit 0 and the receiver printed "data transfers complete" (every node got every datagram).
# Both ends must print the same "mckey: joined dgid: ... mlid ... sl ..." line. Then IPv6: a NOTE with
# what mckey on rxe0 does with an IPv6 group, and a run checking that rdma4j on rxe0 fails the same way.
set -uo pipefail

. "$INTEROP_DIR/tools-env.sh" mckey || exit 1
pass=0 fail=0

. "$INTEROP_DIR/net-setup.sh" || { echo "FAIL net-setup"; exit 1; }

ACCESS=--enable-native-access=ALL-UNNAMED,org.rdma4j.verbs,org.rdma4j.soft,org.rdma4j.nativeverbs
rdma4j_peer() { # the rdma4j tool in namespace peer (soft over UDP)
  # shellcheck disable=SC2086 # option lists
  ip netns exec peer timeout 120 "$JAVA" $TOOL_AOT_OPTS ${RDMA4J_INTEROP_JAVA_OPTS:-} -XX:TieredStopAtLevel=1 \
    -XX:+UseSerialGC "$ACCESS" -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}
rdma4j_host() { # the rdma4j tool beside mckey (the native provider finds rxe0 by its address)
  # shellcheck disable=SC2086 # option lists
  timeout 120 "$JAVA" $TOOL_AOT_OPTS ${RDMA4J_INTEROP_JAVA_OPTS:-} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
    "$ACCESS" -p "$MODULE_PATH" -m org.rdma4j.tools/org.rdma4j.tools.Rdma4j "$@"
}
cmckey() { timeout 60 stdbuf -oL mckey "$@"; } # line-buffered, so its "joined" line shows while it runs

wait_joined() { # LOG PID N: until N "mckey: joined" lines (or the receiver exits)
  local i
  for ((i = 0; i < 600; i++)); do
    (($(grep -c '^mckey: joined dgid' "$1" 2>/dev/null) >= $3)) && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}

result() { # NAME RC DETAIL
  if [[ $2 -eq 0 ]]; then echo "PASS $1"; pass=$((pass + 1)); else echo "FAIL $1: $3"; fail=$((fail + 1)); fi
}
counters() { grep -H . /sys/class/infiniband/rxe0/ports/1/hw_counters/{rcvd_pkts,sent_pkts} 2>/dev/null | sed 's|.*/||' | paste -sd' '; }

# run DIR GROUP
run() {
  local dir=$1 group=$2 t0=$SECONDS log="$INTEROP_OUT/mckey-$1" rpid rrc src nodes=1 problems=
  echo "--- $dir $group: rxe0 before: $(counters)"
  case $dir in
    c2j)
      nodes=2
      rdma4j_peer mckey -m "$group" -b "$PEER_ADDR_V4" --udp-mode raw -c 2 --timeout 40 >"$log.recv.log" 2>&1 & ;;
    c2n)
      rdma4j_host mckey -m "$group" -b "$RXE_ADDR_V4" --timeout 40 >"$log.recv.log" 2>&1 & ;;
    *)
      cmckey -m "$group" -b "$RXE_ADDR_V4" >"$log.recv.log" 2>&1 & ;;
  esac
  rpid=$!
  if ! wait_joined "$log.recv.log" "$rpid" "$nodes"; then
    kill "$rpid" 2>/dev/null; wait "$rpid"
    result "mckey $dir $group [$((SECONDS - t0))s]" 1 "the receiver did not join: $(tail -n 5 "$log.recv.log" | paste -sd' ')"
    return
  fi
  case $dir in
    j2c) rdma4j_peer mckey -m "$group" -b "$PEER_ADDR_V4" --udp-mode raw -s >"$log.send.log" 2>&1 ;;
    n2c) rdma4j_host mckey -m "$group" -b "$RXE_ADDR_V4" -s >"$log.send.log" 2>&1 ;;
    *) cmckey -m "$group" -b "$RXE_ADDR_V4" -s >"$log.send.log" 2>&1 ;;
  esac
  src=$?
  wait "$rpid"; rrc=$?
  echo "--- $dir $group: rxe0 after:  $(counters)"
  ((src == 0)) || problems+=" sender exit $src;"
  ((rrc == 0)) || problems+=" receiver exit $rrc;"
  grep -q '^data transfers complete' "$log.recv.log" || problems+=" the receiver did not complete;"
  grep -q '^data transfers complete' "$log.send.log" || problems+=" the sender did not complete;"
  # both ends joined the same group: the kernel's MULTICAST_JOIN and rdma4j's must say the same
  [[ "$(grep -m1 '^mckey: joined dgid' "$log.send.log")" == "$(grep -m1 '^mckey: joined dgid' "$log.recv.log")" ]] \
    || problems+=" the two ends' 'joined dgid' lines differ;"
  if [[ -n $problems ]]; then
    result "mckey $dir $group [$((SECONDS - t0))s]" 1 "$problems"
    echo "--- sender:"; tail -n 12 "$log.send.log"
    echo "--- receiver:"; tail -n 12 "$log.recv.log"
  else
    result "mckey $dir $group [$((SECONDS - t0))s]" 0 "10 datagrams to $nodes node(s)"
    echo "    receiver: $(grep '^mckey: joined' "$log.recv.log" | head -n 1)"
  fi
}

run c2j 239.1.4.1
run j2c 239.1.4.2
run c2n 239.1.4.3
run n2c 239.1.4.4

# What the kernel's rdma_cm says to an IPv6 group on a RoCEv2 port (cma_iboe_join_multicast: ENOTSUPP,
# 524): a NOTE for C mckey, and rdma4j mckey on rxe0 (native) must fail the same way.
v6log="$INTEROP_OUT/mckey-v6-probe.log"
cmckey -m ff0e::4d:4 -b "$RXE_ADDR_V6" -C 1 >"$v6log" 2>&1
echo "NOTE mckey on rxe0 with an IPv6 group (exit $?): $(grep -v '^$' "$v6log" | paste -sd'|')"
t0=$SECONDS
rdma4j_host mckey -m ff0e::4d:5 -b "$RXE_ADDR_V6" -C 1 --pause 0 >"$v6log.n" 2>&1
v6rc=$?
# errno 524 reads ENOTSUPP in rdma4j's messages (Errno has the kernel's name for it)
if ((v6rc == 1)) && grep -Eq '^mckey: failure joining: .*(ENOTSUPP|524)' "$v6log.n"; then
  result "mckey native v6 join refused as in C (ENOTSUPP 524) [$((SECONDS - t0))s]" 0 ""
else
  result "mckey native v6 join refused as in C (ENOTSUPP 524) [$((SECONDS - t0))s]" 1 "exit $v6rc: $(paste -sd'|' "$v6log.n")"
fi

echo "mckey: $pass passed, $fail failed"
((fail == 0))
