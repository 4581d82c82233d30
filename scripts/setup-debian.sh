#!/usr/bin/env bash
# Installs the Debian packages Soundtrack builds against, if any is missing.
# Idempotent: does nothing (and needs no network) when everything is there.
set -euo pipefail
need=()
# libopenblas0-serial provides the libblas.so.3 alternative at run time: the same CBLAS API as the
# reference libblas3, about 8x faster on the scoring matrices (see docs/architecture.md).
# libcurl4-openssl-dev: URLSession's transport (the providers); tzdata: the time zones of calendar files.
# libjemalloc-dev: the soundtrack executable's malloc (Package.swift; see docs/http-api.md).
for pkg in libsqlite3-dev libblas-dev libopenblas0-serial libcurl4-openssl-dev libjemalloc-dev tzdata pkg-config; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "setup: the Swift toolchain (swift) is not on PATH" >&2; exit 1; }
