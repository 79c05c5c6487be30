#!/usr/bin/env bash
# Builds the image docker/Dockerfile starts from (its BASE_IMAGE) without any container registry:
# a minimal Debian bookworm from a Debian mirror (debootstrap), the Node.js release the
# repository pins (the root package.json's `node` devDependency) and the npm it names in
# `packageManager`, imported into the local Docker image store (`docker import`).
#
#   sudo docker/build-base-image.sh                       # → tracewell-base:node24-bookworm
#   sudo docker/build-base-image.sh --ca-file proxy.pem   # behind a TLS-inspecting proxy
#
# Options (or the environment variables in brackets):
#   --tag NAME        the image to create [BASE_TAG]          default tracewell-base:node24-bookworm
#   --mirror URL      a Debian mirror or proxy [DEBIAN_MIRROR]   default: debootstrap's (Debian's own)
#   --ca-file FILE    PEM certificates to trust besides Debian's, e.g. a proxy's that re-signs the
#                     npm registry's TLS; npm in the image build needs them [EXTRA_CA_FILE]
#
# Needs root (debootstrap and chroot), debootstrap and a running Docker daemon. Node.js comes from
# node_modules/node after `npm ci` when it is the pinned version for this machine's architecture,
# otherwise from the npm registry (`npm pack node-linux-<arch>@<version>`, the package the `node`
# devDependency installs); npm comes from the npm registry. Nothing else is downloaded.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tag=${BASE_TAG:-tracewell-base:node24-bookworm}
mirror=${DEBIAN_MIRROR:-}
ca_file=${EXTRA_CA_FILE:-}
suite=bookworm

while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag=$2; shift 2 ;;
    --mirror) mirror=$2; shift 2 ;;
    --ca-file) ca_file=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-base-image.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

fail() { echo "build-base-image.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "run as root (debootstrap and chroot need it)"
command -v debootstrap > /dev/null || fail "debootstrap is not installed (apt-get install debootstrap)"
docker info > /dev/null 2>&1 || fail "no Docker daemon answers"
[ -z "$ca_file" ] || [ -r "$ca_file" ] || fail "cannot read --ca-file $ca_file"

# The versions the repository pins, read without Node (the host may not have it yet).
node_version=$(sed -nE 's/^[[:space:]]*"node": "([0-9]+\.[0-9]+\.[0-9]+)",?$/\1/p' "$repo_root/package.json" | head -n1)
npm_version=$(sed -nE 's/^[[:space:]]*"packageManager": "npm@([0-9]+\.[0-9]+\.[0-9]+)",?$/\1/p' "$repo_root/package.json")
[ -n "$node_version" ] || fail "no exact \"node\" devDependency in package.json"
[ -n "$npm_version" ] || fail "no \"packageManager\": \"npm@<version>\" in package.json"

case "$(uname -m)" in
  x86_64) node_arch=x64 debian_arch=amd64 ;;
  aarch64) node_arch=arm64 debian_arch=arm64 ;;
  *) fail "no Node.js package for $(uname -m)" ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/tracewell-base.XXXXXX")
trap 'rm -rf "$work"' EXIT
rootfs=$work/rootfs

# An npm tarball's contents (its `package/` folder) into a directory.
unpack_npm_package() {
  local spec=$1 target=$2 tarball
  tarball=$(cd "$work" && npm pack --silent "$spec" | tail -n1)
  mkdir -p "$target"
  tar -xzf "$work/$tarball" -C "$target" --strip-components=1
}

echo "==> Debian $suite ($debian_arch) from ${mirror:-the default mirror}"
# minbase: only the Essential packages and apt; ca-certificates for npm's TLS to the registry.
# Without a mirror argument debootstrap uses Debian's own.
debootstrap --variant=minbase --arch="$debian_arch" --include=ca-certificates "$suite" "$rootfs" ${mirror:+"$mirror"}

echo "==> Node.js $node_version"
node_package=$repo_root/node_modules/node/node_modules/node-linux-$node_arch
if [ -f "$node_package/package.json" ] && grep -q "\"version\": \"$node_version\"" "$node_package/package.json"; then
  echo "    from $node_package"
else
  command -v npm > /dev/null || fail "node_modules has no Node.js $node_version for $node_arch and there is no npm to fetch it"
  echo "    from the npm registry (node-linux-$node_arch@$node_version)"
  node_package=$work/node
  unpack_npm_package "node-linux-$node_arch@$node_version" "$node_package"
fi
# Only the executable: the headers (include/) serve native add-on builds, which the image never
# does (its installs run with --ignore-scripts and there is no compiler).
install -m 0755 "$node_package/bin/node" "$rootfs/usr/local/bin/node"
[ "$(chroot "$rootfs" /usr/local/bin/node --version)" = "v$node_version" ] || fail "the Node.js binary does not run in the new root"

echo "==> npm $npm_version"
unpack_npm_package "npm@$npm_version" "$rootfs/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
# npm's global config (<prefix>/etc/npmrc). Node ships its own CA list and ignores the system's;
# pointing npm at Debian's bundle lets --ca-file (and any certificate added to the image later
# with update-ca-certificates) reach the registry. Only npm reads this file: the services open
# no TLS connection to the internet.
mkdir -p "$rootfs/usr/local/etc"
printf 'cafile=/etc/ssl/certs/ca-certificates.crt\nupdate-notifier=false\nfund=false\naudit=false\n' > "$rootfs/usr/local/etc/npmrc"

if [ -n "$ca_file" ]; then
  echo "==> trusting the certificates in $ca_file"
  install -m 0644 "$ca_file" "$rootfs/usr/local/share/ca-certificates/tracewell-extra.crt"
  # Its rehash step warns about the bundle file itself on every run; only a failure matters.
  chroot "$rootfs" update-ca-certificates > /dev/null 2>&1 || fail "update-ca-certificates failed for $ca_file"
fi

# The same unprivileged user as the official Node.js images (uid and gid 1000): the Kubernetes
# manifests name it by number (runAsUser: 1000).
chroot "$rootfs" groupadd --gid 1000 node
chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node

# What a container never needs: package lists and caches, documentation, and debootstrap's logs.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/var/cache/debconf/*-old \
  "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/var/log/* \
  "$rootfs"/debootstrap
# Mounted by the container runtime.
rm -rf "$rootfs"/dev/* "$rootfs"/proc/* "$rootfs"/sys/* "$rootfs"/tmp/* "$rootfs"/run/*

echo "==> docker import as $tag"
tar --numeric-owner --xattrs -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$node_version" \
  --change "LABEL org.opencontainers.image.description=\"Debian $suite (debootstrap) with Node.js $node_version and npm $npm_version\"" \
  --change 'CMD ["node"]' \
  - "$tag"
docker run --rm "$tag" node -e "console.log('Node.js ' + process.version + ', ' + process.arch)"
docker image ls "$tag"
