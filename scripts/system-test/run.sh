#!/bin/bash
# npm run test:system: the appliance test on a real systemd. Builds (or reuses) a cached Debian 12
# VM image, builds the .deb, boots the VM under qemu with simulated GPIO, I2C, sound and camera,
# installs the package there and runs test/system/guest-checks.sh (see docs/system-test.md).
# Prints one timing line per step and check, ends with "system test: N passed, N failed", and
# exits non-zero when a check failed or the run broke.
#
# Environment: HOMEAGENT_SYSTEM_TEST_CACHE (image cache, default ~/.cache/homeagent-system-test),
# HOMEAGENT_SYSTEM_TEST_DEB (use this .deb instead of building one), HOMEAGENT_SYSTEM_TEST_TIMEOUT
# (seconds the VM may run, default 900), HOMEAGENT_SYSTEM_TEST_OUT (where the guest's results
# are kept, default build/system-test), MIRROR (Debian mirror for the image build).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$REPO/scripts/system-test"
T0=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
timing() { echo "system test timing: $1 $2s"; }
die() {
  echo "system test: $*" >&2
  echo "system test: 0 passed, 1 failed"
  exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot and mkfs.ext4 -d of a root file system)"
for tool in qemu-system-x86_64 debootstrap mkfs.ext4 dpkg-deb flock; do
  command -v "$tool" >/dev/null ||
    die "$tool is missing: apt-get install --no-install-recommends qemu-system-x86 qemu-utils debootstrap e2fsprogs"
done

# The image, keyed by a hash of every file that shapes it (not the package or the checks: they
# change every run and travel on the payload disk).
CACHE=${HOMEAGENT_SYSTEM_TEST_CACHE:-$HOME/.cache/homeagent-system-test}
KEY=$(cd "$HERE" && cat build-image.sh gpio-kmod/Kbuild gpio-kmod/Makefile gpio-kmod/irq_sim_mod.c \
  guest/vmtest-runner guest/vmtest-runner.service | sha256sum | cut -c1-16)
IMG="$CACHE/$KEY"
mkdir -p "$CACHE"
t=$(date +%s.%N)
(
  # Two runs starting together build the image once.
  flock 9
  if [ ! -f "$IMG/base.img" ]; then
    echo "system test: building the VM image $IMG (about 2 minutes)"
    "$HERE/build-image.sh" "$IMG"
  fi
) 9>"$CACHE/.lock" || die "the image build failed"
timing image "$(since "$t")"

WORK=$(mktemp -d /tmp/homeagent-system-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
SHARE="$WORK/share"
PAYLOAD="$WORK/payload"
mkdir -p "$SHARE/out" "$PAYLOAD"

t=$(date +%s.%N)
if [ -n "${HOMEAGENT_SYSTEM_TEST_DEB:-}" ]; then
  DEB=$HOMEAGENT_SYSTEM_TEST_DEB
else
  # gzip level 1: many times faster than the default xz, and the VM does not care about size.
  DEB=$(cd "$REPO" && npm run -s package:deb -- --out "$WORK/deb" --compression gzip --level 1 | tail -n 1) ||
    die "npm run package:deb failed"
fi
[ -f "$DEB" ] || die "no package at '$DEB'"
timing package "$(since "$t")"

t=$(date +%s.%N)
# Debian 12's nodejs is 18 and the package needs >= 20: the guest runs the host's node as
# /usr/bin/node, and an empty package named nodejs with the host node's version satisfies the
# package's "Depends: nodejs (>= 20)" (what equivs would make).
NODE=$(command -v node)
NODE_VERSION=$("$NODE" -p 'process.versions.node')
D="$WORK/nodejs-dummy"
mkdir -p "$D/DEBIAN"
cat >"$D/DEBIAN/control" <<CONTROL
Package: nodejs
Version: $NODE_VERSION-0vmtest
Architecture: all
Maintainer: HomeAgent system test <root@localhost>
Description: placeholder for the host's node binary copied to /usr/bin/node
 Only for the HomeAgent system test VM.
CONTROL
dpkg-deb --root-owner-group -Zgzip --build "$D" "$PAYLOAD/nodejs-dummy.deb" >/dev/null
install -m755 "$NODE" "$PAYLOAD/node"
cp "$DEB" "$PAYLOAD/homeagent.deb"
mkdir -p "$PAYLOAD/checks"
cp "$REPO"/test/system/*.sh "$REPO"/test/system/*.mjs "$PAYLOAD/checks/"
# The BME280 register map the emulator would show, preloaded into i2c-stub by the guest.
(cd "$REPO" && "$NODE" test/system/bme280-registers.mjs >"$PAYLOAD/checks/bme280.regs") ||
  die "could not compute the BME280 register map (is dist/ built?)"
cp "$REPO/test/system/guest-checks.sh" "$SHARE/run.sh"
SZ=$(($(du -sm "$PAYLOAD" | cut -f1) * 13 / 10 + 64))
truncate -s "${SZ}M" "$WORK/payload.img"
mkfs.ext4 -q -F -L payload -d "$PAYLOAD" "$WORK/payload.img" || die "mkfs.ext4 of the payload failed"
timing payload "$(since "$t")"

# KVM only when /dev/kvm is usable by a stock kernel: a PVM host (kvm_pvm) offers /dev/kvm but
# cannot run Debian's kernel, so software emulation it is.
# The guest learns which from the kernel command line (vmtest.tcg: allow for slow JavaScript).
if [ -w /dev/kvm ] && [ ! -e /sys/module/kvm_pvm ]; then
  ACCEL=(-accel kvm -cpu host)
  APPEND="console=ttyS0 root=/dev/vda rw quiet"
else
  ACCEL=(-accel "tcg,thread=multi,tb-size=256" -cpu max)
  APPEND="console=ttyS0 root=/dev/vda rw quiet vmtest.tcg"
fi
echo "system test: accelerator ${ACCEL[1]%%,*}"

t=$(date +%s.%N)
TIMEOUT=${HOMEAGENT_SYSTEM_TEST_TIMEOUT:-900}
timeout --foreground -k 5 "$TIMEOUT" qemu-system-x86_64 "${ACCEL[@]}" \
  -m 1024 -smp 2 -nodefaults -no-user-config -display none -no-reboot \
  -serial stdio -monitor none \
  -kernel "$IMG/vmlinuz" -initrd "$IMG/initrd.img" \
  -append "$APPEND" \
  -drive "file=$IMG/base.img,if=virtio,format=raw,snapshot=on,cache=unsafe" \
  -virtfs "local,path=$SHARE,mount_tag=host0,security_model=none,id=host0" \
  -drive "file=$WORK/payload.img,if=virtio,format=raw,readonly=on" \
  -device virtio-rng-pci </dev/null 2>&1 |
  while IFS= read -r line; do
    line=${line//$'\r'/}
    printf '[%6ss] %s\n' "$(since "$t")" "$line"
    case $line in VMTEST-BOOTED*) timing boot "$(since "$t")" ;; esac
  done
qemu_rc=${PIPESTATUS[0]}
timing vm "$(since "$t")"

OUT=${HOMEAGENT_SYSTEM_TEST_OUT:-$REPO/build/system-test}
rm -rf "$OUT" && mkdir -p "$OUT" && cp -r "$SHARE/out/." "$OUT/"
passed=$(grep -c '^CHECK pass ' "$OUT/log" 2>/dev/null)
failed=$(grep -c '^CHECK fail ' "$OUT/log" 2>/dev/null)
rc=$(cat "$OUT/rc" 2>/dev/null || echo 125)
if [ "$qemu_rc" = 124 ]; then
  echo "system test: the VM did not finish within ${TIMEOUT}s"
  rc=124
fi
grep -h '^CHECK ' "$OUT/log" 2>/dev/null | awk '{ printf "system test timing: check %s %s (%s)\n", $3, $4, $2 }'
timing total "$(since "$T0")"
[ "$rc" = 0 ] || [ "${failed:-0}" -gt 0 ] || failed=$((${failed:-0} + 1))
echo "system test: ${passed:-0} passed, ${failed:-0} failed"
[ "${failed:-0}" = 0 ] && [ "$rc" = 0 ]
