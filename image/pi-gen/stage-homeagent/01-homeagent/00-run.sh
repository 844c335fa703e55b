#!/bin/bash -e
# HomeAgent itself: the Debian package from files/ (its postinst creates the homeagent user and
# groups and enables homeagent.service; in the chroot nothing is started), the image's
# configuration (the web page reachable from the household's network), and the first-boot notice
# that shows the web page's address and admin password on the console.
# Runs on the build host in this folder, with ROOTFS_DIR set; on_chroot runs commands inside.

ARCH=${ARCH:-arm64}

# The package's system user is "homeagent"; a login user of that name would take its place.
if [ "${FIRST_USER_NAME:-}" = homeagent ]; then
	echo "stage-homeagent: FIRST_USER_NAME must not be homeagent (the service's own user); pick another name" >&2
	exit 1
fi

shopt -s nullglob
debs=(files/homeagent_*.deb)
shopt -u nullglob
if [ "${#debs[@]}" -ne 1 ]; then
	echo "stage-homeagent: put exactly one homeagent_<version>_${ARCH}.deb into $(pwd)/files (found ${#debs[@]})" >&2
	exit 1
fi
deb_arch=$(dpkg-deb --field "${debs[0]}" Architecture)
if [ "${deb_arch}" != "${ARCH}" ]; then
	echo "stage-homeagent: ${debs[0]} is built for ${deb_arch}, the image is ${ARCH}; build the package on a Pi or another ${ARCH} machine" >&2
	exit 1
fi

install -m 644 "${debs[0]}" "${ROOTFS_DIR}/tmp/homeagent.deb"
on_chroot <<-EOF
	apt-get -o Acquire::Retries=3 install -y /tmp/homeagent.deb
EOF
rm -f "${ROOTFS_DIR}/tmp/homeagent.deb"

# Readable by the service's group only: the file may later hold an LLM API key.
install -d -m 755 "${ROOTFS_DIR}/etc/homeagent"
install -m 640 files/config.yaml "${ROOTFS_DIR}/etc/homeagent/config.yaml"

# The group exists only inside the image (the package's sysusers.d file made it there).
on_chroot <<-EOF
	chown root:homeagent /etc/homeagent/config.yaml
	systemctl enable homeagent.service
	test -x /usr/libexec/homeagent/homeagent-firstboot ||
		{ echo "stage-homeagent: the package has no first-boot notice; rebuild it from a newer checkout" >&2; exit 1; }
	systemctl enable homeagent-firstboot.service homeagent-firstboot.path
	if id -u "${FIRST_USER_NAME:-}" >/dev/null 2>&1; then usermod -a -G homeagent "${FIRST_USER_NAME}"; fi
EOF
