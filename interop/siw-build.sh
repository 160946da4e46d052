#!/usr/bin/env bash
# Build softiwarp (siw.ko) for the interop VM's kernel, out of tree, on the host (see interop/README.md,
# section "softiwarp"). Debian's kernel does not set CONFIG_RDMA_SIW, but the driver
# (drivers/infiniband/sw/siw) only needs ib_core and libcrc32c, which Debian builds as modules.
#
#   interop/siw-build.sh [KVER DEBVERSION]
#     KVER        the kernel release, e.g. 6.1.0-56-amd64 (default: the cached kernel's kver)
#     DEBVERSION  the Debian version of linux-image-KVER, e.g. 6.1.192-2 (default: from the cached deb)
#
# With `apt-get download` (nothing is installed on the host but gcc-N and make when they are missing)
# it fetches linux-headers-KVER, the -common headers and linux-kbuild-X.Y it depends on, and
# linux-source-X.Y, all of the same Debian version as the kernel; unpacks the headers with
# `dpkg-deb -x` (their Makefile names /usr/src/linux-headers-...-common, so it is pointed at the
# unpacked copy); streams only drivers/infiniband/sw/siw out of the source tarball; builds it with
# `make -C <headers> M=<dir> modules` and a two-line Kbuild; checks that siw.ko's vermagic equals that
# of the kernel's own modules. The downloads and trees are deleted afterwards: only siw.ko is kept, in
# $RDMA4J_INTEROP_CACHE/kernel-KVER/siw/ (with the Debian version it was built for), so a warm run
# does nothing and a new kernel means a new build (provision.sh drops old kernel directories).
#
# Prints the path of siw.ko as its last line; exits non-zero with the reason on stderr otherwise.
# provision.sh calls it with the provisioning lock held (RDMA4J_INTEROP_PROVISION_LOCKED=1).
set -euo pipefail

CACHE="${RDMA4J_INTEROP_CACHE:-${HOME:-/root}/.cache/rdma4j-interop}"
APT_TIMEOUT="${RDMA4J_INTEROP_APT_TIMEOUT:-900}"
log() { printf 'siw-build: %s\n' "$*" >&2; }
die() { printf 'siw-build: ERROR: %s\n' "$*" >&2; exit 1; }

KVER="${1:-}"
DEBVER="${2:-}"
if [[ -z $KVER ]]; then
  kdir="$(ls -1d "$CACHE"/kernel-*/ 2>/dev/null | sort -V | tail -n1 || true)"
  [[ -n $kdir && -f $kdir/kver ]] || die "no KVER given and no provisioned kernel in $CACHE (run interop/provision.sh)"
  KVER="$(cat "$kdir/kver")"
fi
if [[ -z $DEBVER ]]; then
  deb="$(ls -1 "$CACHE/debs/linux-image-${KVER}_"*.deb 2>/dev/null | sort -V | tail -n1 || true)"
  [[ -n $deb ]] || die "no DEBVERSION given and no $CACHE/debs/linux-image-${KVER}_*.deb"
  DEBVER="$(dpkg-deb -f "$deb" Version)"
fi
[[ $KVER =~ ^([0-9]+\.[0-9]+)\. ]] || die "cannot tell the kernel series of $KVER"
SERIES="${BASH_REMATCH[1]}"

OUT="$CACHE/kernel-$KVER/siw"
if [[ -f $OUT/siw.ko && "$(cat "$OUT/debversion" 2>/dev/null)" == "$DEBVER" ]]; then
  echo "$OUT/siw.ko"
  exit 0
fi

[[ $(id -u) -eq 0 ]] || die "must run as root (apt-get)"
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$CACHE"
if [[ -z ${RDMA4J_INTEROP_PROVISION_LOCKED:-} ]]; then
  exec 8>"$CACHE/.provision.lock"
  flock -w "$APT_TIMEOUT" 8 || die "timed out waiting for $CACHE/.provision.lock"
fi

t0=$SECONDS
work="$(mktemp -d "${TMPDIR:-/tmp}/rdma4j-siw.XXXXXX")"
trap 'rm -rf "$work"' EXIT

download() { # PACKAGE=VERSION...
  (cd "$work/debs" && timeout "$APT_TIMEOUT" apt-get -o APT::Sandbox::User=root download -qq "$@" >&2)
}
mkdir -p "$work/debs"
HDR="linux-headers-$KVER"
log "apt-get download $HDR=$DEBVER linux-source-$SERIES=$DEBVER"
if ! download "$HDR=$DEBVER" "linux-source-$SERIES=$DEBVER"; then
  log "apt-get update (download failed; stale package lists?)"
  timeout "$APT_TIMEOUT" apt-get update -qq >&2 || die "apt-get update failed"
  download "$HDR=$DEBVER" "linux-source-$SERIES=$DEBVER" \
    || die "apt-get download $HDR=$DEBVER linux-source-$SERIES=$DEBVER failed (the mirror must still carry the kernel's Debian version)"
fi
# The headers package depends on its -common part (same version) and on linux-kbuild-X.Y (scripts,
# modpost, objtool) and names the compiler the kernel was built with (linux-compiler-gcc-N-ARCH).
deps="$(dpkg-deb -f "$work/debs/${HDR}_"*.deb Depends)"
common="$(grep -o 'linux-headers-[^ ,]*-common' <<<"$deps" | head -n1)"
kbuild="$(grep -o 'linux-kbuild-[0-9.]*' <<<"$deps" | head -n1)"
gccv="$(grep -o 'linux-compiler-gcc-[0-9]*' <<<"$deps" | head -n1 | sed 's/.*-gcc-//')"
[[ -n $common && -n $kbuild && -n $gccv ]] || die "unexpected Depends of $HDR: $deps"
download "$common=$DEBVER" || die "apt-get download $common=$DEBVER failed"
# linux-kbuild-X.Y is a dependency ">=" the kernel's version, and Debian's security archive moves it on
# by itself (seen: headers 6.1.192-2 wanting linux-kbuild-6.1 >= 6.1.192-2, which the mirror carried
# only as 6.1.192-3): the kernel's own version when the mirror has it, else its candidate if that
# satisfies the dependency.
kbuild_min="$(grep -o "$kbuild ([<>=]* [^)]*)" <<<"$deps" | head -n1 | sed 's/.*(\([<>=]*\) \(.*\))/\1 \2/')"
if ! download "$kbuild=$DEBVER"; then
  read -r kbuild_op kbuild_ver <<<"$kbuild_min"
  [[ $kbuild_op == ">=" && -n $kbuild_ver ]] || die "apt-get download $kbuild=$DEBVER failed (Depends: $kbuild ${kbuild_min:-unversioned})"
  download "$kbuild" || die "apt-get download $kbuild failed"
  got="$(dpkg-deb -f "$work/debs/${kbuild}_"*.deb Version)"
  dpkg --compare-versions "$got" ge "$kbuild_ver" \
    || die "$kbuild $got from the mirror does not satisfy $HDR's Depends ($kbuild >= $kbuild_ver)"
  log "$kbuild $DEBVER is gone from the mirror; $got satisfies $HDR's Depends ($kbuild >= $kbuild_ver)"
fi

# The compiler the kernel was built with (Kbuild checks it), make, xz and strip: installed when missing.
installed() { [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]; }
missing=()
for p in "gcc-$gccv" make xz-utils binutils; do installed "$p" || missing+=("$p"); done
if ((${#missing[@]})); then
  log "apt-get install ${missing[*]}"
  timeout "$APT_TIMEOUT" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 \
    || die "apt-get install ${missing[*]} failed"
fi

log "unpacking $HDR, $common, $kbuild"
root="$work/root"
for d in "$HDR" "$common" "$kbuild"; do dpkg-deb -x "$work/debs/${d}_"*.deb "$root"; done
hdir="$root/usr/src/$HDR"
[[ -f $hdir/Makefile && -f $hdir/Module.symvers && -e $hdir/scripts ]] || die "$HDR has no usable build tree at /usr/src/$HDR"
grep -q "^# CONFIG_RDMA_SIW is not set" "$hdir/.config" || log "note: $KVER's .config: $(grep '^CONFIG_RDMA_SIW' "$hdir/.config" || echo 'no CONFIG_RDMA_SIW line')"
for c in CONFIG_INFINIBAND CONFIG_LIBCRC32C; do
  grep -Eq "^$c=[ym]" "$hdir/.config" || die "$KVER lacks $c, which siw needs"
done
# The top Makefile includes the -common one by its absolute path: point it at the unpacked copy.
sed -i "s|/usr/src/$common/|$root/usr/src/$common/|g" "$hdir/Makefile"

log "extracting drivers/infiniband/sw/siw from linux-source-$SERIES"
src="$work/siw"
dpkg-deb --fsys-tarfile "$work/debs/linux-source-${SERIES}_"*.deb \
  | tar -xO "./usr/src/linux-source-$SERIES.tar.xz" \
  | tar -xJ -C "$work" --strip-components=4 "linux-source-$SERIES/drivers/infiniband/sw/siw" \
  || die "cannot extract drivers/infiniband/sw/siw from linux-source-$SERIES"
[[ -f $src/siw_main.c ]] || die "linux-source-$SERIES has no drivers/infiniband/sw/siw/siw_main.c"
rm -rf "$work/debs"
# The driver's objects, from its own Makefile (everything it lists under siw-y).
objs="$(sed -n '/^siw-y/,/^$/p' "$src/Makefile" | grep -o 'siw_[a-z_]*\.o' | paste -sd' ')"
[[ -n $objs ]] || die "cannot read siw-y from drivers/infiniband/sw/siw/Makefile"
rm -f "$src/Makefile"
printf 'obj-m += siw.o\nsiw-y := %s\n' "$objs" > "$src/Kbuild"

log "make -C /usr/src/$HDR M=... modules ($objs)"
make -C "$hdir" M="$src" -j"$(nproc)" modules > "$work/make.log" 2>&1 \
  || { tail -n 30 "$work/make.log" >&2; die "building siw.ko failed"; }
[[ -f $src/siw.ko ]] || die "make produced no siw.ko"

# The module must carry the kernel's vermagic, or the VM's kernel refuses it.
want="$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$hdir/include/generated/utsrelease.h" 2>/dev/null || true)"
[[ $want == "$KVER" ]] || die "the headers are for '$want', not $KVER"
vm="$(modinfo -F vermagic "$src/siw.ko")"
ref_deb="$(ls -1 "$CACHE/debs/linux-image-${KVER}_${DEBVER}_"*.deb 2>/dev/null | head -n1 || true)"
if [[ -n $ref_deb ]]; then
  # rdma_rxe.ko from the kernel package itself: the vermagic must match exactly.
  dpkg-deb --fsys-tarfile "$ref_deb" | tar -x -C "$work" --wildcards '*/rdma_rxe.ko*' 2>/dev/null || true
  ref="$(find "$work/lib" -name 'rdma_rxe.ko*' 2>/dev/null | head -n1)"
  case "$ref" in
    *.xz) xz -dc "$ref" > "$work/ref.ko" ;; *.zst) zstd -qdc "$ref" > "$work/ref.ko" ;; *) cp "$ref" "$work/ref.ko" ;;
  esac
  kvm="$(modinfo -F vermagic "$work/ref.ko")"
  [[ $vm == "$kvm" ]] || die "siw.ko vermagic '$vm' differs from the kernel's '$kvm'"
else
  [[ $vm == "$KVER "* ]] || die "siw.ko vermagic '$vm' is not for $KVER"
fi
log "siw.ko: vermagic '$vm', depends $(modinfo -F depends "$src/siw.ko")"

# Without debug info, as Debian ships its modules (5 MB -> ~0.3 MB in the initrd).
strip --strip-debug "$src/siw.ko" || die "strip --strip-debug siw.ko failed"
mkdir -p "$OUT"
cp "$src/siw.ko" "$OUT/siw.ko.tmp"
mv "$OUT/siw.ko.tmp" "$OUT/siw.ko"
echo "$DEBVER" > "$OUT/debversion"
log "built siw.ko for $KVER ($DEBVER) in $((SECONDS - t0))s"
echo "$OUT/siw.ko"
