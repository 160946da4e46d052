#!/usr/bin/env bash
# native-deps.sh: what the native provider's build-time layout probe (LayoutProbeTest) needs, installed
# when missing: gcc and libc6-dev (to compile the probe), libibverbs-dev and librdmacm-dev (verbs.h and rdma_cma.h, the headers it checks
# the Java layouts against) and ibverbs-providers (the user-space drivers, e.g. rxe). Idempotent: does
# nothing when all are there. Installs with apt-get when run as root on a Debian/Ubuntu host; otherwise
# says what to install and exits non-zero.
set -euo pipefail

packages=(gcc libc6-dev libibverbs-dev librdmacm-dev ibverbs-providers)
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
else
  command -v gcc >/dev/null 2>&1 || missing+=(gcc)
  [ -f /usr/include/stdio.h ] || missing+=(libc6-dev)
  [ -f /usr/include/infiniband/verbs.h ] || missing+=(libibverbs-dev)
  [ -f /usr/include/rdma/rdma_cma.h ] || missing+=(librdmacm-dev)
fi

if ((${#missing[@]} == 0)); then
  echo "native-deps: gcc, libc6-dev, libibverbs-dev, librdmacm-dev and ibverbs-providers are installed"
  exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "native-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
  exit 0
fi

echo "native-deps: missing ${missing[*]}; install them, e.g. 'sudo apt-get install ${missing[*]}'" >&2
echo "native-deps: (the native layout probe fails without them when RDMA4J_NATIVE_PROBE=required)" >&2
exit 1
