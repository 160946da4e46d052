#!/bin/sh
# /init of the interop VM's initramfs (runs under static busybox; provision.sh packs it).
#
# Loads the modules in /etc/modules, mounts the host's / read-only over 9p (tag hostroot) and the
# job directory read-write (tag job), mounts proc/sys/dev/devpts/tmpfs inside the host root, then
# chroots into it and runs the job described by job.env in the job directory. It writes the job's
# exit code to <job dir>/exit-code and the kernel log to <job dir>/dmesg.log, then powers off.
# Never returns: if anything goes wrong it still powers off, so the host sees qemu exit.
export PATH=/bin:/sbin

mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys

say() { echo "init: $*"; }

halt_vm() {
  sync
  umount /mnt/root/run/interop 2>/dev/null
  umount /mnt/job 2>/dev/null
  say "powering off"
  poweroff -f
  sleep 2
  echo o > /proc/sysrq-trigger
  sleep 10
  # Returning from /init panics the kernel; with panic=-1 and -no-reboot qemu exits anyway.
  exit 1
}

echo /sbin/modprobe > /proc/sys/kernel/modprobe 2>/dev/null
for m in $(cat /etc/modules); do
  modprobe "$m" || say "WARNING: modprobe $m failed"
done
say "modules loaded"

P9=trans=virtio,version=9p2000.L,msize=262144
mkdir -p /mnt/root /mnt/job
if ! mount -t 9p -o "$P9,ro,cache=loose" hostroot /mnt/root; then
  say "ERROR: cannot mount host root (9p tag hostroot)"; halt_vm
fi
if ! mount -t 9p -o "$P9,rw,cache=none" job /mnt/job; then
  say "ERROR: cannot mount job share (9p tag job)"; halt_vm
fi

R=/mnt/root
mount -t proc proc $R/proc &&
  mount -t sysfs sysfs $R/sys &&
  mount -t devtmpfs devtmpfs $R/dev &&
  mkdir -p $R/dev/pts $R/dev/shm &&
  mount -t devpts -o newinstance,ptmxmode=0666 devpts $R/dev/pts &&
  mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm &&
  mkdir -p /mnt/hosttmp && mount -o bind $R/tmp /mnt/hosttmp &&
  mount -t tmpfs -o mode=1777 tmpfs $R/tmp &&
  mount -t tmpfs -o mode=755 tmpfs $R/run &&
  mkdir -p $R/run/interop $R/tmp/home &&
  mount -o bind /mnt/job $R/run/interop ||
  { say "ERROR: mounting the chroot's file systems failed"; halt_vm; }
# The VM's /tmp is a tmpfs; host paths under /tmp that the job needs (its script, the repository)
# are listed in tmp-binds and bound back in from the host's /tmp, read-only.
if [ -f /mnt/job/tmp-binds ]; then
  while read -r name; do
    [ -n "$name" ] || continue
    src=/mnt/hosttmp/$name
    if [ -d "$src" ]; then mkdir -p "$R/tmp/$name"; else touch "$R/tmp/$name"; fi
    mount -o bind "$src" "$R/tmp/$name" || say "WARNING: cannot bind host /tmp/$name"
  done < /mnt/job/tmp-binds
fi
[ -d $R/sys/kernel/debug ] && mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null
ip link set lo up 2>/dev/null
hostname rdma4j-vm

if [ ! -f /mnt/job/job.env ]; then
  say "ERROR: no job.env in the job share"; halt_vm
fi

say "starting job"
# job.env (written by run-vm.sh) sets INTEROP_JOB, INTEROP_JOB_TIMEOUT, INTEROP_CWD and friends.
chroot $R /usr/bin/env -i \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/tmp/home TMPDIR=/tmp LANG=C.UTF-8 TERM=dumb INTEROP_OUT=/run/interop \
  /bin/bash -c 'set -a; . /run/interop/job.env; set +a
                cd "${INTEROP_CWD:-/}" 2>/dev/null || cd /
                exec /usr/bin/timeout -k 5 "${INTEROP_JOB_TIMEOUT:-540}" /bin/bash "$INTEROP_JOB"' \
  </dev/null >/mnt/job/job.log 2>&1
rc=$?
say "job exited with status $rc"
echo "$rc" > /mnt/job/exit-code
dmesg > /mnt/job/dmesg.log 2>/dev/null
halt_vm
