#!/bin/bash
# Builds the system test's Debian 12 guest image into the directory $1: base.img (raw ext4 root
# file system), vmlinuz and initrd.img. Follows shared/reference/vm-system-test.md section 4:
# debootstrap from this machine's apt mirror, gpio-sim/gpio-mockup built out of tree from
# linux-source (Debian's kernels lack them), a small initramfs, and the test runner service.
# Needs root, debootstrap and mkfs.ext4 >= 1.47 (-d). base.img is written last, through a rename,
# so its presence means the build finished. Takes about 2 minutes and 900 MB.
set -euo pipefail
IMG=${1:?usage: build-image.sh IMG_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
MIRROR=${MIRROR:-$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}
MIRROR=${MIRROR:-$(awk '$1=="deb"{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)}
[ -n "$MIRROR" ] || { echo "build-image: no Debian mirror in the apt configuration; set MIRROR" >&2; exit 1; }

mkdir -p "$IMG"
R=$(mktemp -d "$IMG/rootfs.XXXXXX")
X=$(mktemp -d "$IMG/src.XXXXXX")
cleanup() {
  mountpoint -q "$R/proc" && umount "$R/proc"
  rm -rf "$R" "$X"
}
trap cleanup EXIT
in_root() { chroot "$R" env DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }
with_proc() { mount -t proc proc "$R/proc"; "$@"; umount "$R/proc"; }
step() { echo "build-image: $1 ($(date +%s))"; }

# Base system, the simulated hardware's tools, and what the .deb and its tests need:
# espeak-ng and alsa-utils for the announcement check, fswebcam for the camera plugin,
# libstdc++6 for the host's node binary, which the test installs as /usr/bin/node.
PKGS=systemd,systemd-sysv,udev,kmod,dbus,procps,linux-image-amd64,initramfs-tools
PKGS=$PKGS,alsa-utils,i2c-tools,gpiod,v4l-utils,fswebcam,espeak-ng,libstdc++6
step "debootstrap from $MIRROR"
debootstrap --variant=minbase --include="$PKGS" bookworm "$R" "$MIRROR" >"$IMG/debootstrap.log" 2>&1 ||
  { tail -n 30 "$IMG/debootstrap.log" >&2; exit 1; }

KVER=$(ls "$R/lib/modules" | sort -V | tail -n 1)
KPKGVER=$(chroot "$R" dpkg-query -W -f='${Version}' "linux-image-$KVER")
step "gpio-sim for $KVER ($KPKGVER)"
with_proc in_root apt-get install -y -q --no-install-recommends "linux-headers-$KVER" make >/dev/null
mkdir -p "$R/tmp/src"
with_proc in_root sh -c "cd /tmp/src && apt-get download -q linux-source-6.1=$KPKGVER >/dev/null"
dpkg-deb --fsys-tarfile "$R"/tmp/src/linux-source-6.1_*.deb | tar -x -C "$X" --wildcards './usr/src/linux-source-*.tar.xz'
tar -xJf "$X"/usr/src/linux-source-6.1.tar.xz -C "$X" \
  linux-source-6.1/drivers/gpio/gpio-sim.c linux-source-6.1/drivers/gpio/gpio-mockup.c \
  linux-source-6.1/drivers/gpio/gpiolib.h linux-source-6.1/kernel/irq/irq_sim.c
K="$R/usr/src/gpio-kmod"
mkdir -p "$K"
cp "$HERE"/gpio-kmod/{Kbuild,Makefile,irq_sim_mod.c} "$K/"
cp "$X"/linux-source-6.1/drivers/gpio/{gpio-sim.c,gpio-mockup.c,gpiolib.h} "$X"/linux-source-6.1/kernel/irq/irq_sim.c "$K/"
in_root make -s -C "/lib/modules/$KVER/build" M=/usr/src/gpio-kmod modules
for m in irq-sim gpio-sim gpio-mockup; do
  install -D -m644 "$K/$m.ko" "$R/lib/modules/$KVER/updates/$m.ko"
done
in_root depmod -a "$KVER"
with_proc in_root apt-get purge -y -q --auto-remove "linux-headers-$KVER" make >/dev/null
rm -rf "$K" "$R/tmp/src"
in_root apt-get clean
rm -rf "$R"/usr/share/doc/* "$R"/usr/share/man/*

step "configure"
echo simpi >"$R/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 simpi\n::1 localhost\n' >"$R/etc/hosts"
printf '/dev/vda / ext4 rw,relatime 0 0\n' >"$R/etc/fstab"
in_root passwd -d root >/dev/null
mkdir -p "$R/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\n' >"$R/etc/systemd/journald.conf.d/vm.conf"
for u in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer \
  e2scrub_reap.service getty@tty1.service systemd-pstore.service remote-fs.target; do
  in_root systemctl disable "$u" >/dev/null 2>&1 || true
done
install -m755 "$HERE/guest/vmtest-runner" "$R/usr/local/sbin/vmtest-runner"
install -m644 "$HERE/guest/vmtest-runner.service" "$R/etc/systemd/system/vmtest-runner.service"
in_root systemctl enable vmtest-runner.service >/dev/null 2>&1

step "initramfs and disk image"
printf 'MODULES=list\nCOMPRESS=gzip\n' >"$R/etc/initramfs-tools/conf.d/vm.conf"
printf 'virtio_pci\nvirtio_blk\next4\n' >>"$R/etc/initramfs-tools/modules"
with_proc in_root update-initramfs -u -k "$KVER" >/dev/null
cp "$R/boot/vmlinuz-$KVER" "$IMG/vmlinuz"
cp "$R/boot/initrd.img-$KVER" "$IMG/initrd.img"
rm -f "$IMG/base.img.new"
truncate -s 2G "$IMG/base.img.new"
mkfs.ext4 -q -F -L simroot -d "$R" "$IMG/base.img.new"
mv "$IMG/base.img.new" "$IMG/base.img"
rm -f "$IMG/debootstrap.log"
step "done: $IMG"
