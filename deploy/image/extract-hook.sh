#!/bin/sh
# Copyright The otelcol-llmops Authors
# SPDX-License-Identifier: Apache-2.0

# mmdebstrap --extract-hook for the image's runtime root filesystem ($1).
#
# In the `extract` variant the packages are only unpacked: no maintainer
# script runs and the customize hook is skipped. So this hook does what
# their configuration would have done, and no more:
#   - /etc/passwd and /etc/group with the non-root user (uid/gid 10001);
#   - the CA bundle update-ca-certificates would have written;
#   - /etc/nsswitch.conf and /etc/ld.so.conf (libc-bin, not installed,
#     would bring the latter; the NVIDIA container toolkit runs the host's
#     ldconfig on the container's root and reads it);
#   - /var/lib/dpkg/status listing what was unpacked, so image scanners
#     (trivy, grype, syft) see the Debian packages;
#   - no manual pages, changelogs or shell completions (copyright files stay).
# Its inputs (this file, passwd, group) are part of build.sh's cache key.
set -eu

root=${1:?usage: extract-hook.sh ROOTDIR}
here=$(cd "$(dirname "$0")" && pwd)

install -m 0644 "$here/passwd" "$root/etc/passwd"
install -m 0644 "$here/group" "$root/etc/group"

printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
printf 'include /etc/ld.so.conf.d/*.conf\n' >"$root/etc/ld.so.conf"
chmod 0644 "$root/etc/nsswitch.conf" "$root/etc/ld.so.conf"

# update-ca-certificates: every certificate under /usr/share/ca-certificates
# (ca-certificates' default selects them all), each ending in a newline.
mkdir -p "$root/etc/ssl/certs"
bundle="$root/etc/ssl/certs/ca-certificates.crt"
: >"$bundle"
find "$root/usr/share/ca-certificates" -type f -name '*.crt' | LC_ALL=C sort | while read -r crt; do
  sed -e '$a\' "$crt" >>"$bundle"
done
chmod 0644 "$bundle"
grep -q 'BEGIN CERTIFICATE' "$bundle" || { echo "extract-hook: no CA certificates unpacked" >&2; exit 1; }

# dpkg status from the unpacked archives (mmdebstrap lists them, relative to
# the root, in MMDEBSTRAP_ESSENTIAL).
status="$root/var/lib/dpkg/status"
: >"$status"
for deb in ${MMDEBSTRAP_ESSENTIAL:?not run by mmdebstrap}; do
  dpkg-deb --field "$root$deb" | awk '{ print } /^Package:/ { print "Status: install ok installed" }' >>"$status"
  echo >>"$status"
done
chmod 0644 "$status"

rm -rf "$root/usr/share/man" "$root/usr/share/lintian" "$root/usr/share/bash-completion" "$root/usr/share/pixmaps"
find "$root/usr/share/doc" -type f ! -name copyright -delete
