#!/usr/bin/env bash
# Cross-compiles static release binaries of orchestrator for Linux, macOS
# and FreeBSD on amd64 and arm64, with the version stamped in, and writes
# their SHA-256 checksums.
#
# Usage: scripts/release.sh VERSION [OUTDIR]     e.g. scripts/release.sh v1.2.0
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: scripts/release.sh VERSION [OUTDIR]}
out=${2:-dist}
mkdir -p "$out"
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
for os in linux darwin freebsd; do
  for arch in amd64 arm64; do
    name="orchestrator-$version-$os-$arch"
    echo "building $name"
    CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
      -ldflags "-s -w -X main.version=$version -X main.commit=$commit" -o "$out/$name" ./cmd/orchestrator
  done
done
(cd "$out" && sha256sum orchestrator-"$version"-* > "SHA256SUMS-$version")
echo "built from commit $commit into $out:"
cat "$out/SHA256SUMS-$version"
