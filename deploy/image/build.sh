#!/usr/bin/env bash
# Copyright The otelcol-llmops Authors
# SPDX-License-Identifier: Apache-2.0

# `make image`: builds localhost/otelcol-llmops:<dist.version> and :dev on this
# machine without pulling anything (deploy/image/README.md):
#   1. a minimal Debian runtime root filesystem from this machine's suite and
#      apt sources: mmdebstrap --variant=extract with libc6, libgcc-s1,
#      ca-certificates and tzdata, finished by extract-hook.sh (non-root user,
#      CA bundle, dpkg status). Cached as a tarball outside the repository,
#      keyed by everything that goes into it, so later runs skip this step;
#   2. that tarball imported as localhost/otelcol-llmops-base:<suite>-<key>;
#   3. podman build of Containerfile on it, with the binary `make build`
#      wrote and distro/config.yaml copied in.
#
# Environment: BINARY, CONFIG (what is copied in), IMAGE (name without tag),
# IMAGE_SUITE and IMAGE_APT_SOURCES (default: this machine's Debian suite and
# apt sources file), OTELCOL_LLMOPS_IMAGE_CACHE (the tarball cache directory).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

die() {
  echo "deploy/image/build.sh: $*" >&2
  exit 1
}

BINARY=${BINARY:-$root/_build/otelcol-llmops}
CONFIG=${CONFIG:-$root/distro/config.yaml}
IMAGE=${IMAGE:-localhost/otelcol-llmops}
PACKAGES=libc6,libgcc-s1,ca-certificates,tzdata
CACHE_DIR=${OTELCOL_LLMOPS_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/otelcol-llmops/image}

for tool in podman runc mmdebstrap dpkg-deb sha256sum; do
  PATH=$PATH:/usr/sbin:/sbin command -v "$tool" >/dev/null 2>&1 ||
    die "$tool not found: install the Debian packages podman, runc and mmdebstrap (.ci/run does: apt-get install --no-install-recommends podman runc mmdebstrap)"
done
[ -x "$BINARY" ] || die "no collector binary at $BINARY: run make build (make image does)"
[ -f "$CONFIG" ] || die "no collector configuration at $CONFIG"

version=$(awk '/^dist:/ { d = 1; next } /^[^[:space:]#]/ { d = 0 } d && $1 == "version:" { print $2; exit }' "$root/builder-config.yaml")
[ -n "$version" ] || die "no dist.version in $root/builder-config.yaml"

# The Debian suite and apt sources this machine uses.
if [ -z "${IMAGE_SUITE:-}" ]; then
  os_id=$(. /etc/os-release && echo "${ID:-}")
  IMAGE_SUITE=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ "$os_id" = debian ] && [ -n "$IMAGE_SUITE" ] ||
    die "this machine is not Debian (/etc/os-release: ID=$os_id): set IMAGE_SUITE (e.g. bookworm) and IMAGE_APT_SOURCES (a Debian sources.list or .sources file)"
fi
if [ -z "${IMAGE_APT_SOURCES:-}" ]; then
  for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
    if [ -s "$f" ] && grep -qE '^[[:space:]]*(deb[[:space:]]|Types:.*\bdeb\b)' "$f"; then
      IMAGE_APT_SOURCES=$f
      break
    fi
  done
  [ -n "${IMAGE_APT_SOURCES:-}" ] ||
    die "no Debian apt sources found in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list: set IMAGE_APT_SOURCES"
fi
[ -f "$IMAGE_APT_SOURCES" ] || die "IMAGE_APT_SOURCES=$IMAGE_APT_SOURCES is not a file"

# Root cannot raise its hard limits here, and podman's defaults (nofile
# 1048576) exceed them: pass the hard limits themselves. podman also lowers
# its own RLIMIT_NPROC to kernel.pid_max when it starts, and a container
# cannot get more than podman has.
limit() { local v=$1; [ "$v" = unlimited ] && v=1048576; echo "$v"; }
nofile=$(limit "$(ulimit -Hn)")
nproc=$(limit "$(ulimit -Hu)")
pid_max=$(cat /proc/sys/kernel/pid_max 2>/dev/null || echo "$nproc")
[ "$pid_max" -lt "$nproc" ] && nproc=$pid_max
podman_flags=(--runtime runc --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")

# 1. The root filesystem, cached by what goes into it.
key=$(
  {
    echo "suite=$IMAGE_SUITE packages=$PACKAGES"
    cat "$IMAGE_APT_SOURCES" "$here/extract-hook.sh" "$here/passwd" "$here/group"
  } | sha256sum | cut -c1-16
)
rootfs=$CACHE_DIR/rootfs-$IMAGE_SUITE-$key.tar
if [ -f "$rootfs" ]; then
  echo "rootfs: cached $rootfs"
else
  echo "rootfs: mmdebstrap $IMAGE_SUITE ($PACKAGES) from $IMAGE_APT_SOURCES -> $rootfs"
  mkdir -p "$CACHE_DIR"
  tmp=$(mktemp "$CACHE_DIR/.rootfs-XXXXXX.tar")
  trap 'rm -f "$tmp"' EXIT
  mmdebstrap --variant=extract --format=tar --include="$PACKAGES" \
    --extract-hook="$here/extract-hook.sh" \
    "$IMAGE_SUITE" "$tmp" "$IMAGE_APT_SOURCES" ||
    die "mmdebstrap failed (see above): it needs the apt sources in $IMAGE_APT_SOURCES to be reachable"
  chmod 0644 "$tmp"
  mv -f "$tmp" "$rootfs"
  trap - EXIT
fi

# 2. The base image.
base=localhost/otelcol-llmops-base:$IMAGE_SUITE-$key
if podman image exists "$base"; then
  echo "base: $base exists"
else
  echo "base: podman import $rootfs -> $base"
  podman import --quiet --message "mmdebstrap --variant=extract $IMAGE_SUITE $PACKAGES" "$rootfs" "$base" >/dev/null ||
    die "podman import of $rootfs failed"
fi

# 3. The image. The build context holds only what is copied in.
ctx=$root/_build/image-context
rm -rf "$ctx"
mkdir -p "$ctx"
ln "$BINARY" "$ctx/otelcol-llmops" 2>/dev/null || cp -p "$BINARY" "$ctx/otelcol-llmops"
ln "$CONFIG" "$ctx/config.yaml" 2>/dev/null || cp -p "$CONFIG" "$ctx/config.yaml"
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
# Which binary the image holds, for the image test to tell a stale image.
binary_sha=$(sha256sum "$BINARY" | cut -d' ' -f1)
previous=$(podman image inspect --format '{{.Id}}' "$IMAGE:dev" 2>/dev/null || true)

echo "image: podman build $IMAGE:$version $IMAGE:dev"
podman build --pull=never "${podman_flags[@]}" \
  --build-arg "RUNTIME_IMAGE=$base" --build-arg "VERSION=$version" --build-arg "REVISION=$revision" \
  --label "io.llmops.binary.sha256=$binary_sha" \
  -f "$here/Containerfile" -t "$IMAGE:$version" -t "$IMAGE:dev" "$ctx" ||
  die "podman build failed (see above)"
rm -rf "$ctx"

# The image this build replaced, unless something still uses or names it.
current=$(podman image inspect --format '{{.Id}}' "$IMAGE:dev")
if [ -n "$previous" ] && [ "$previous" != "$current" ] &&
  [ "$(podman image inspect --format '{{len .RepoTags}}' "$previous" 2>/dev/null || echo 1)" = 0 ]; then
  podman rmi "$previous" >/dev/null 2>&1 || true
fi

size=$(podman image inspect --format '{{.Size}}' "$IMAGE:dev")
echo "image: $IMAGE:$version ($IMAGE:dev), $((size / 1000000)) MB"
