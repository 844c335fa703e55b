#!/bin/bash -e
# Node.js 20 or newer for HomeAgent (the package depends on nodejs >= 20). Raspberry Pi OS
# (Debian 12) ships Node 18, so it comes from one of two places:
#   - a nodejs .deb the builder dropped into files/ (nodejs_20.x.y-1nodesource1_arm64.deb, fetched
#     beforehand on a machine that can reach NodeSource, or an offline mirror); used when present;
#   - otherwise NodeSource's apt repository, added to the image so that `apt upgrade` keeps Node
#     up to date afterwards. This needs deb.nodesource.com reachable from the build machine.
# HOMEAGENT_NODE_SOURCE=local|nodesource (exported from the pi-gen config) forces one of them.
# Runs on the build host in this folder, with ROOTFS_DIR set; on_chroot runs commands inside.
set -o pipefail

NODE_MAJOR=${HOMEAGENT_NODE_MAJOR:-20}
ARCH=${ARCH:-arm64}
shopt -s nullglob
debs=(files/nodejs_*_"${ARCH}".deb)
shopt -u nullglob
node_from=${HOMEAGENT_NODE_SOURCE:-}
if [ -z "${node_from}" ]; then
	if [ "${#debs[@]}" -gt 0 ]; then node_from=local; else node_from=nodesource; fi
fi

case "${node_from}" in
local)
	if [ "${#debs[@]}" -ne 1 ]; then
		echo "stage-homeagent: put exactly one nodejs_*_${ARCH}.deb into $(pwd)/files (found ${#debs[@]})" >&2
		exit 1
	fi
	install -m 644 "${debs[0]}" "${ROOTFS_DIR}/tmp/nodejs.deb"
	on_chroot <<-EOF
		apt-get -o Acquire::Retries=3 install -y /tmp/nodejs.deb
	EOF
	rm -f "${ROOTFS_DIR}/tmp/nodejs.deb"
	;;
nodesource)
	install -d -m 755 "${ROOTFS_DIR}/etc/apt/keyrings" "${ROOTFS_DIR}/etc/apt/sources.list.d" "${ROOTFS_DIR}/etc/apt/preferences.d"
	curl -fsSL https://deb.nodesource.com/gpgkey/nodesource-repo.gpg.key |
		gpg --dearmor >"${ROOTFS_DIR}/etc/apt/keyrings/nodesource.gpg"
	chmod 644 "${ROOTFS_DIR}/etc/apt/keyrings/nodesource.gpg"
	echo "deb [signed-by=/etc/apt/keyrings/nodesource.gpg] https://deb.nodesource.com/node_${NODE_MAJOR}.x nodistro main" \
		>"${ROOTFS_DIR}/etc/apt/sources.list.d/nodesource.list"
	# NodeSource's nodejs, not Debian's older one, whatever their version numbers say.
	printf 'Package: nodejs\nPin: origin deb.nodesource.com\nPin-Priority: 600\n' \
		>"${ROOTFS_DIR}/etc/apt/preferences.d/nodesource"
	on_chroot <<-EOF
		apt-get -o Acquire::Retries=3 update
		apt-get -o Acquire::Retries=3 install -y nodejs
	EOF
	;;
*)
	echo "stage-homeagent: HOMEAGENT_NODE_SOURCE must be local or nodesource, not ${node_from}" >&2
	exit 1
	;;
esac

# A wrong Node ends the build here rather than as a service that fails on the Pi.
on_chroot <<-EOF
	node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= ${NODE_MAJOR} ? 0 : 1)' ||
		{ echo "stage-homeagent: node \$(node --version) is older than ${NODE_MAJOR}" >&2; exit 1; }
EOF
