#!/usr/bin/env bash
# Smoke job, runs inside the interop VM (interop/run-vm.sh interop/jobs/smoke.sh): proves the VM
# has a working kernel rxe device and a working JDK, with no Java of the project involved.
#   - net-setup (veth pair, namespace peer, rxe0 and its GID table)
#   - ibv_devinfo -d rxe0 shows an active port
#   - ibv_rc_pingpong server and client both on rxe0 (rxe loops packets to its own GID back),
#     over the IPv6 GID and over the IPv4-mapped GID
#   - the same with the client started in namespace peer (its TCP exchange crosses the veth;
#     rdma devices are shared between namespaces, so rxe0 is visible there)
#   - java -version of the JDK 25, in the root namespace and in namespace peer
# Prints one PASS/FAIL line per check and exits non-zero if any failed.
set -uo pipefail

JAVA="${INTEROP_JAVA:-${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java}"
[[ -x $JAVA ]] || JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
pass=0 fail=0 mark=$SECONDS
result() { # NAME STATUS [DETAIL]: one PASS/FAIL line, with the seconds since the previous one
  local t=$((SECONDS - mark)); mark=$SECONDS
  if [[ $2 -eq 0 ]]; then echo "PASS $1 [${t}s]${3:+ ($3)}"; pass=$((pass + 1)); else echo "FAIL $1 [${t}s]${3:+ ($3)}"; fail=$((fail + 1)); fi
}

. "$INTEROP_DIR/net-setup.sh"; rc=$?
result net-setup $rc "RXE_GID_V6=${RXE_GID_V6:-?} RXE_GID_V4=${RXE_GID_V4:-?}"
if ((rc != 0)); then echo "smoke: net-setup failed, stopping"; exit 1; fi

out="$(ibv_devinfo -d rxe0 2>&1)"; rc=$?
printf '%s\n' "$out"
grep -q 'state:[[:space:]]*PORT_ACTIVE' <<<"$out" || rc=1
result "ibv_devinfo -d rxe0" $rc "PORT_ACTIVE"

wait_listen() { # PORT [NETNS]: wait up to 20 s for a TCP listener
  local i
  for ((i = 0; i < 100; i++)); do
    ${2:+ip netns exec "$2"} ss -Htln "sport = :$1" 2>/dev/null | grep -q . && return 0
    sleep 0.2
  done
  return 1
}

# ibv_rc_pingpong with both ends on rxe0. NAME GID_INDEX SERVER_ADDR [CLIENT_NETNS]
rc_pingpong() {
  local name="$1" gid="$2" addr="$3" ns="${4:-}" log="$INTEROP_OUT/$1"
  local args=(-d rxe0 -g "$gid" -n 10 -s 4096)
  timeout 60 ibv_rc_pingpong "${args[@]}" >"$log.server.log" 2>&1 &
  local spid=$! crc src
  if ! wait_listen 18515; then
    kill "$spid" 2>/dev/null; wait "$spid"
    echo "--- $name: server never listened:"; cat "$log.server.log"
    result "$name" 1 "server did not listen on 18515"; return
  fi
  echo "--- $name: listening: $(ss -Htln 'sport = :18515' | awk '{print $4}' | paste -sd' ')"
  ${ns:+ip netns exec "$ns"} timeout 60 ibv_rc_pingpong "${args[@]}" "$addr" >"$log.client.log" 2>&1; crc=$?
  ((crc == 0)) || { sleep 1; kill "$spid" 2>/dev/null; }
  wait "$spid"; src=$?
  echo "--- $name: client (exit $crc)"; cat "$log.client.log"
  echo "--- $name: server (exit $src)"; cat "$log.server.log"
  result "$name" $((crc || src)) "client exit $crc, server exit $src"
}

# The TCP exchange goes to 10.77.0.1 whatever the GID: ibv_rc_pingpong's server listens on the
# first address getaddrinfo(NULL, AI_PASSIVE) returns, which is 0.0.0.0 (IPv4 only).
rc_pingpong "rc_pingpong rxe0<->rxe0 IPv6 GID" "$RXE_GID_V6" 10.77.0.1
rc_pingpong "rc_pingpong rxe0<->rxe0 IPv4 GID" "$RXE_GID_V4" 10.77.0.1
rc_pingpong "rc_pingpong client in netns peer" "$RXE_GID_V6" 10.77.0.1 peer

echo "--- rxe0 hw_counters: $(grep -H . /sys/class/infiniband/rxe0/ports/1/hw_counters/* 2>/dev/null | sed 's|.*/||' | paste -sd' ')"

mark=$SECONDS
out="$(timeout 120 "$JAVA" -version 2>&1)"; rc=$?
printf '%s\n' "$out"
grep -q 'version "25' <<<"$out" || rc=1
result "java -version" $rc "$JAVA"

out="$(ip netns exec peer timeout 120 "$JAVA" -version 2>&1)"; rc=$?
printf '%s\n' "$out"
grep -q 'version "25' <<<"$out" || rc=1
result "java -version in netns peer" $rc

echo "smoke: $pass passed, $fail failed"
((fail == 0))
