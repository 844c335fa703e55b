#!/bin/bash -e
# pi-gen runs this before the stage's steps: start from the previous stage's root file system
# (stage2, Raspberry Pi OS Lite) unless this stage already has one (a resumed build).

if [ ! -d "${ROOTFS_DIR}" ]; then
	copy_previous
fi
