#!/usr/bin/env bash
# Builds Paygate's container image (Containerfile at the repository's root)
# from a static binary, in a build context of its own: the binary, the
# host's CA bundle and the user files beside this script. Nothing of the
# work tree but those is sent, and nothing is pulled (FROM scratch).
#
#   deploy/image/build.sh [TAG]          TAG defaults to localhost/paygate:latest
#
# BUILDER is the command that builds: podman (default), buildah or docker,
# with any global options (CI gives podman a storage of its own). BINARY
# names a static binary to package; by default one is built from
# ./cmd/paygate with CGO_ENABLED=0 (SQLite is modernc.org/sqlite, pure Go).
# CA_BUNDLE is the CA certificates file (default: Debian's).
set -euo pipefail
cd "$(dirname "$0")/../.."

tag=${1:-localhost/paygate:latest}
builder=${BUILDER:-podman}
ca=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
mkdir "$ctx/data"
cp deploy/image/passwd deploy/image/group "$ctx/"
cp "$ca" "$ctx/ca-certificates.crt"
if [ -n "${BINARY:-}" ]; then
  cp "$BINARY" "$ctx/paygate"
else
  CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$ctx/paygate" ./cmd/paygate
fi
# shellcheck disable=SC2086 # BUILDER may carry global options
$builder build -f Containerfile -t "$tag" "$ctx"
