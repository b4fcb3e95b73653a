#!/usr/bin/env bash
# Builds dist/go-cluster_<version>_<arch>.deb with nfpm (pinned), then
# checks its contents with dpkg-deb. Run from anywhere:
#   packaging/build-deb.sh [VERSION]
set -euo pipefail
cd "$(dirname "$0")/.."
export VERSION="${1:-0.0.0~$(git rev-parse --short HEAD 2>/dev/null || echo dev)}"
export GOARCH="${GOARCH:-$(go env GOARCH)}"
mkdir -p dist/build
CGO_ENABLED=0 go build -trimpath -o dist/build/go-cluster ./cmd/go-cluster
# The man page, from the help text (go-cluster help --man), made by a
# build for this machine: the package's binary may be for another GOARCH.
go run ./cmd/go-cluster help --man | gzip -9n > dist/build/go-cluster.1.gz
NFPM="${NFPM:-go run github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.43.0}"
$NFPM package --config packaging/nfpm.yaml --packager deb --target dist/
deb="$(ls -t dist/go-cluster_*.deb | head -1)"
packaging/check-deb.sh "$deb"
echo "$deb"
