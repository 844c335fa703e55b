#!/bin/bash -e
# The image's host name, so that the household finds the web page at http://homeagent.local:8080/
# (avahi-daemon announces <hostname>.local). pi-gen's TARGET_HOSTNAME sets it in stage1 already;
# this makes the HomeAgent image right whatever the config file says. HOMEAGENT_HOSTNAME (exported
# from the pi-gen config) picks another name; Raspberry Pi Imager's settings still win at first boot.
# Runs on the build host with ROOTFS_DIR set.

name=${HOMEAGENT_HOSTNAME:-homeagent}
# RFC 1123 label: letters, digits and inner hyphens, at most 63 characters.
if ! [[ "${name}" =~ ^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$ ]]; then
	echo "stage-homeagent: HOMEAGENT_HOSTNAME \"${name}\" is not a host name" >&2
	exit 1
fi

echo "${name}" >"${ROOTFS_DIR}/etc/hostname"
# Debian resolves its own name through the 127.0.1.1 line of /etc/hosts.
hosts="${ROOTFS_DIR}/etc/hosts"
if grep -q '^127\.0\.1\.1[[:space:]]' "${hosts}" 2>/dev/null; then
	sed -i "s/^127\.0\.1\.1[[:space:]].*/127.0.1.1\t${name}/" "${hosts}"
else
	printf '127.0.1.1\t%s\n' "${name}" >>"${hosts}"
fi
