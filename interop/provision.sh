#!/usr/bin/env bash
# Provision the Linux rxe VM used by the interop harness (see interop/README.md).
#
#   1. host packages (qemu, busybox-static, rdma-core tools, ...) via apt-get, skipped when present;
#   2. Debian's current kernel image package, downloaded with `apt-get download` into the cache
#      and unpacked with `dpkg-deb -x` (never installed on the host), `depmod -b` on it;
#   3. softiwarp: siw.ko built for that kernel by interop/siw-build.sh (Debian's kernel lacks it; the
#      build downloads the kernel's headers and linux-source packages and installs gcc-N and make when
#      missing; cached, so a warm run does nothing). RDMA4J_INTEROP_SIW=0 skips it; a failed build is a
#      warning (the VM then has no siw and the siw job fails saying so);
#   4. a small initramfs: static busybox, interop/vm-init.sh as /init, and the kernel modules the
#      VM needs with their dependencies resolved through modules.dep (siw.ko added to the tree).
#
# Idempotent; everything lands in $RDMA4J_INTEROP_CACHE (default ~/.cache/rdma4j-interop), keyed by
# kernel version. On success it prints `KERNEL_DIR=...` as its last line; that directory holds
# vmlinuz, initrd.gz and kver. A warm run takes about a second.
#
# Environment: RDMA4J_INTEROP_CACHE, RDMA4J_INTEROP_APT_TIMEOUT (seconds per apt step, default 900).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${RDMA4J_INTEROP_CACHE:-${HOME:-/root}/.cache/rdma4j-interop}"
APT_TIMEOUT="${RDMA4J_INTEROP_APT_TIMEOUT:-900}"

# Host packages the harness uses. The VM chroots into the host's root, so the rdma-core tools run
# in the VM from the host's installation. gcc, libc6-dev and libibverbs-dev: jobs compile small C
# verbs programs (interop/mcast/) in the VM against the host's libibverbs.
HOST_PACKAGES=(qemu-system-x86 busybox-static cpio kmod ibverbs-providers ibverbs-utils
               rdmacm-utils perftest iproute2 gcc libc6-dev libibverbs-dev)

# Modules loaded in the VM (order matters for loading; dependencies are added automatically).
# crc32_generic / crc32-pclmul: rdma_rxe needs a "crc32" crypto implementation or `rdma link add`
# fails with "rdma_rxe: failed to add". sch_netem: for `tc qdisc ... netem` loss tests.
VM_MODULES=(virtio_pci 9pnet_virtio 9p veth crc32_generic crc32-pclmul
            rdma_rxe ib_uverbs rdma_ucm sch_netem)

log() { printf 'provision: %s\n' "$*" >&2; }
die() { printf 'provision: ERROR: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "must run as root (apt-get install, mknod)"
export DEBIAN_FRONTEND=noninteractive

mkdir -p "$CACHE"
# One provisioning at a time (two concurrent runs would fight over apt and the cache).
exec 8>"$CACHE/.provision.lock"
flock -w "$APT_TIMEOUT" 8 || die "timed out waiting for $CACHE/.provision.lock"

apt_updated=0
apt_update() {
  ((apt_updated)) && return 0
  log "apt-get update"
  timeout "$APT_TIMEOUT" apt-get update -qq >&2 || die "apt-get update failed"
  apt_updated=1
}

installed() { [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]; }

# ---------------------------------------------------------------------------- 1. host packages
missing=()
for p in "${HOST_PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
if ((${#missing[@]})); then
  apt_update
  log "apt-get install ${missing[*]}"
  timeout "$APT_TIMEOUT" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 \
    || die "apt-get install ${missing[*]} failed"
fi
for tool in qemu-system-x86_64 busybox cpio depmod modprobe dpkg-deb ibv_rc_pingpong rdma ip gcc; do
  command -v "$tool" >/dev/null || [[ -x /bin/$tool || -x /sbin/$tool || -x /usr/sbin/$tool ]] \
    || die "$tool not found after installing ${HOST_PACKAGES[*]}"
done
BUSYBOX=/bin/busybox
[[ -x $BUSYBOX ]] || BUSYBOX="$(command -v busybox)"
file_is_static() { ! LC_ALL=C ldd "$1" >/dev/null 2>&1; }
file_is_static "$BUSYBOX" || die "$BUSYBOX is not static (package busybox-static)"

# ---------------------------------------------------------------------------- 2. kernel package
kernel_pkg() { apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1; }

pkg="$(kernel_pkg || true)"
if [[ -z $pkg ]]; then
  # No package lists yet (fresh machine): update once and ask again.
  apt_update || true
  pkg="$(kernel_pkg || true)"
fi
if [[ -z $pkg ]]; then
  # Offline and no lists: fall back to a kernel already in the cache.
  latest="$(ls -1d "$CACHE"/kernel-*/ 2>/dev/null | sort -V | tail -n1 || true)"
  [[ -n $latest && -f $latest/.complete ]] || die "cannot resolve linux-image-amd64 (apt-cache depends) and no cached kernel"
  log "WARNING: apt-cache cannot resolve linux-image-amd64; using cached ${latest%/}"
  pkg="linux-image-$(cat "$latest/kver")"
fi
KVER="${pkg#linux-image-}"
KDIR="$CACHE/kernel-$KVER"
mkdir -p "$KDIR" "$CACHE/debs"

deb="$(ls -1 "$CACHE/debs/${pkg}_"*.deb 2>/dev/null | sort -V | tail -n1 || true)"
if [[ -z $deb ]]; then
  log "apt-get download $pkg"
  tmp="$(mktemp -d "$CACHE/debs/.dl.XXXXXX")"
  dl() { (cd "$tmp" && timeout "$APT_TIMEOUT" apt-get -o APT::Sandbox::User=root download -qq "$pkg" >&2); }
  if ! dl; then
    # Stale package lists name a version the mirror no longer has: update and retry once.
    apt_update
    dl || { rm -rf "$tmp"; die "apt-get download $pkg failed"; }
  fi
  mv "$tmp"/*.deb "$CACHE/debs/" && rmdir "$tmp"
  deb="$(ls -1 "$CACHE/debs/${pkg}_"*.deb | sort -V | tail -n1)"
fi

# ---------------------------------------------------------------------------- 3. softiwarp
SIW_KO=
if [[ ${RDMA4J_INTEROP_SIW:-1} != 0 ]]; then
  debver="$(dpkg-deb -f "$deb" Version)"
  if SIW_KO="$(RDMA4J_INTEROP_PROVISION_LOCKED=1 RDMA4J_INTEROP_CACHE="$CACHE" bash "$HERE/siw-build.sh" "$KVER" "$debver" | tail -n1)" \
     && [[ -f $SIW_KO ]]; then
    :
  else
    log "WARNING: no siw.ko for $KVER (interop/siw-build.sh failed, see above): the VM has no softiwarp"
    SIW_KO=
  fi
fi

# ---------------------------------------------------------------------------- 4. initramfs
# Rebuild when the kernel package, the init script, the module list or busybox changes. The
# unpacked kernel tree (~400 MB) is only kept while building.
inputs_hash="$( { basename "$deb"; cat "$HERE/vm-init.sh"; echo "${VM_MODULES[*]}"; sha256sum "$BUSYBOX"
                 if [[ -n $SIW_KO ]]; then sha256sum <"$SIW_KO"; fi; } | sha256sum | cut -c1-16)"
if [[ ! -f $KDIR/initrd.gz || ! -f $KDIR/vmlinuz || "$(cat "$KDIR/initrd.hash" 2>/dev/null)" != "$inputs_hash" ]]; then
  work="$(mktemp -d "$KDIR/.build.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  log "unpacking $(basename "$deb")"
  dpkg-deb -x "$deb" "$work/kernel"
  src_root="$work/kernel/lib/modules/$KVER"
  [[ -d $src_root ]] || die "$deb has no lib/modules/$KVER"
  [[ -f $work/kernel/boot/vmlinuz-$KVER ]] || die "$deb has no boot/vmlinuz-$KVER"
  boot_modules=("${VM_MODULES[@]}")
  if [[ -n $SIW_KO ]]; then
    # siw joins the tree as an out-of-tree module (updates/), so depmod and modprobe treat it like the
    # kernel's own; crc32c_generic: libcrc32c's crc32c transform (its softdep names only "crc32c").
    install -D -m 644 "$SIW_KO" "$src_root/updates/siw.ko"
    boot_modules+=(crc32c_generic siw)
  fi
  depmod -b "$work/kernel" "$KVER"

  log "building initrd.gz for $KVER"
  stage="$work/initrd"
  mkdir -p "$stage"/{bin,sbin,dev,proc,sys,mnt/root,tmp,etc} "$stage/lib/modules/$KVER/kernel"
  cp "$BUSYBOX" "$stage/bin/busybox"
  for applet in $("$BUSYBOX" --list); do
    [[ $applet == busybox ]] && continue
    ln -sf busybox "$stage/bin/$applet"
  done
  for s in modprobe insmod rmmod poweroff reboot halt; do ln -sf ../bin/busybox "$stage/sbin/$s"; done
  mknod -m 600 "$stage/dev/console" c 5 1
  mknod -m 666 "$stage/dev/null" c 1 3
  install -m 755 "$HERE/vm-init.sh" "$stage/init"

  # Closure of VM_MODULES through the unpacked kernel's modules.dep (modprobe does the walk,
  # including softdeps), copied under the same relative paths, decompressed if needed.
  mods="$(modprobe -d "$work/kernel" -S "$KVER" -a --show-depends "${boot_modules[@]}" 2>&1)" \
    || die "modprobe --show-depends failed: $mods"
  declare -A seen=()
  while read -r verb path _; do
    [[ $verb == insmod && -z ${seen[$path]:-} ]] || continue
    seen[$path]=1
    rel="${path#"$src_root/"}"
    [[ $rel != "$path" ]] || die "unexpected module path $path"
    dst="$stage/lib/modules/$KVER/$rel"
    mkdir -p "$(dirname "$dst")"
    case "$rel" in
      *.ko.xz)  xz -dc "$path" > "${dst%.xz}" ;;
      *.ko.zst) zstd -qdc "$path" > "${dst%.zst}" ;;
      *.ko.gz)  gzip -dc "$path" > "${dst%.gz}" ;;
      *.ko)     cp "$path" "$dst" ;;
      *) die "unexpected module file $path" ;;
    esac
  done <<<"$mods"
  ((${#seen[@]} > 0)) || die "no modules resolved for ${VM_MODULES[*]}: $mods"
  cp "$src_root"/modules.order "$src_root"/modules.builtin* "$stage/lib/modules/$KVER/" 2>/dev/null || true
  depmod -b "$stage" "$KVER"
  printf '%s\n' "${boot_modules[@]}" > "$stage/etc/modules"
  (cd "$stage" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) | gzip -6 > "$KDIR/initrd.gz.tmp"
  cp "$work/kernel/boot/vmlinuz-$KVER" "$KDIR/vmlinuz.tmp"
  mv "$KDIR/vmlinuz.tmp" "$KDIR/vmlinuz"
  mv "$KDIR/initrd.gz.tmp" "$KDIR/initrd.gz"
  echo "$KVER" > "$KDIR/kver"
  echo "$inputs_hash" > "$KDIR/initrd.hash"
  rm -rf "$work"; trap - EXIT
  log "initrd.gz: ${#seen[@]} modules${SIW_KO:+ (with siw)}, $(du -k "$KDIR/initrd.gz" | cut -f1) KiB"
fi
touch "$KDIR/.complete"

# Keep one kernel: drop other versions' trees and packages.
for old in "$CACHE"/kernel-*; do
  [[ -d $old && $old != "$KDIR" ]] || continue
  log "removing old cached kernel $old"; rm -rf "$old"
done
for olddeb in "$CACHE"/debs/*.deb; do
  [[ -e $olddeb && $(basename "$olddeb") != "${pkg}_"* ]] || continue
  rm -f "$olddeb"
done

echo "KERNEL_DIR=$KDIR"
