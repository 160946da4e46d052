#!/usr/bin/env bash
# Network and rxe setup inside the interop VM. Source it from a job (it exports variables):
#
#   . "$INTEROP_DIR/net-setup.sh" || exit 1
#
# or run it to set up and print the variables. Creates, once per VM:
#
#   root namespace                         namespace "peer"
#   veth0  10.77.0.1/24  fd77::1/64  <--->  veth1  10.77.0.2/24  fd77::2/64
#   rxe0 (kernel Soft-RoCE) on veth0         (a user-space RoCEv2 stack binds UDP 4791 here)
#
# Exports: RXE_DEV=rxe0 RXE_NETDEV=veth0 RXE_ADDR_V6 RXE_ADDR_V4 PEER_NS=peer PEER_NETDEV=veth1
#          PEER_ADDR_V6 PEER_ADDR_V4 RXE_GID_V6 RXE_GID_V4 RXE_GID_LL (GID table indexes of rxe0 for
#          fd77::1, ::ffff:10.77.0.1 and the fe80:: link-local address) RXE_MTU (veth MTU)
#          RXE_IBV_MTU (rxe0 active MTU in bytes). Also written to /run/rdma4j-net.env.
#
# RXE_NET_MTU (default 9000) sets the veth MTU; at 9000 rxe0's active MTU is 4096, so path MTUs
# 1024 and 4096 both work. Only for use inside the VM: it changes the network configuration.

rxe_net_setup() {
  local mtu="${RXE_NET_MTU:-9000}"
  export RXE_DEV=rxe0 RXE_NETDEV=veth0 RXE_ADDR_V6=fd77::1 RXE_ADDR_V4=10.77.0.1
  export PEER_NS=peer PEER_NETDEV=veth1 PEER_ADDR_V6=fd77::2 PEER_ADDR_V4=10.77.0.2
  export RXE_MTU="$mtu"

  if [[ ! -e /run/interop && -z ${RXE_NET_SETUP_ANYWHERE:-} ]]; then
    echo "net-setup: refusing to run outside the interop VM (no /run/interop)" >&2
    return 1
  fi

  if [[ ! -d /sys/class/infiniband/rxe0 ]]; then
    {
      ip link set lo up &&
      ip netns add peer &&
      ip link add veth0 mtu "$mtu" type veth peer name veth1 mtu "$mtu" &&
      ip link set veth1 netns peer &&
      ip -n peer link set lo up &&
      ip addr add 10.77.0.1/24 dev veth0 &&
      ip -6 addr add fd77::1/64 dev veth0 nodad &&
      ip -n peer addr add 10.77.0.2/24 dev veth1 &&
      ip -n peer -6 addr add fd77::2/64 dev veth1 nodad &&
      ip link set veth0 up &&
      ip -n peer link set veth1 up &&
      rdma link add rxe0 type rxe netdev veth0
    } || { echo "net-setup: FAILED to create veth0/veth1/rxe0 (see dmesg)" >&2; dmesg | tail -n 5 >&2; return 1; }
  fi

  # The GID table fills in asynchronously from the addresses on veth0.
  local gids=/sys/class/infiniband/rxe0/ports/1/gids types=/sys/class/infiniband/rxe0/ports/1/gid_attrs/types
  local want6=fd77:0000:0000:0000:0000:0000:0000:0001 want4=0000:0000:0000:0000:0000:ffff:0a4d:0001
  local i gid deadline=$((SECONDS + 30))
  RXE_GID_V6='' RXE_GID_V4='' RXE_GID_LL=''
  while :; do
    for ((i = 0; i < 16; i++)); do
      gid="$(cat "$gids/$i" 2>/dev/null)" || continue
      case "$gid" in
        "$want6") RXE_GID_V6=$i ;;
        "$want4") RXE_GID_V4=$i ;;
        fe80:*) [[ -z $RXE_GID_LL ]] && RXE_GID_LL=$i ;;
      esac
    done
    [[ -n $RXE_GID_V6 && -n $RXE_GID_V4 ]] && break
    if ((SECONDS >= deadline)); then
      echo "net-setup: FAILED: rxe0 GID table lacks fd77::1 or ::ffff:10.77.0.1 after 30 s:" >&2
      grep -H . "$gids"/* >&2 2>/dev/null
      return 1
    fi
    sleep 0.2
  done
  RXE_IBV_MTU="$(ibv_devinfo -d rxe0 2>/dev/null | sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p' | head -n1)"
  export RXE_GID_V6 RXE_GID_V4 RXE_GID_LL RXE_IBV_MTU

  echo "net-setup: rxe0 on veth0 (mtu $mtu, rxe active_mtu ${RXE_IBV_MTU:-?}); namespace peer has veth1"
  echo "net-setup: rxe0 GID table (index: gid type):"
  for ((i = 0; i < 16; i++)); do
    gid="$(cat "$gids/$i" 2>/dev/null)" || continue
    [[ $gid == 0000:0000:0000:0000:0000:0000:0000:0000 ]] && continue
    echo "net-setup:   $i: $gid $(cat "$types/$i" 2>/dev/null)"
  done
  echo "net-setup: RXE_GID_V6=$RXE_GID_V6 (fd77::1)  RXE_GID_V4=$RXE_GID_V4 (::ffff:10.77.0.1)  RXE_GID_LL=${RXE_GID_LL:-none}"

  local v
  for v in RXE_DEV RXE_NETDEV RXE_ADDR_V6 RXE_ADDR_V4 PEER_NS PEER_NETDEV PEER_ADDR_V6 PEER_ADDR_V4 \
           RXE_GID_V6 RXE_GID_V4 RXE_GID_LL RXE_MTU RXE_IBV_MTU; do
    printf 'export %s=%q\n' "$v" "${!v}"
  done > /run/rdma4j-net.env
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  rxe_net_setup || exit 1
  cat /run/rdma4j-net.env
else
  rxe_net_setup
fi
