#!/usr/bin/env bash
# Formats the project's Swift files with the toolchain's `swift format` and `.swift-format`.
#
#   scripts/format.sh            rewrites the files in place
#   scripts/format.sh --check    changes nothing; exits 1 and lists what differs (`make test` and CI run this)
#   scripts/format.sh FILE…      only those files
#
# Files: every tracked *.swift, except the generated ones (Sources/SoundtrackServer/OpenAPIDocument.swift,
# Sources/SoundtrackCatalog/BundledModels.swift: their generators write them).
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [[ "${1:-}" == "--check" ]]; then check=1; shift; fi
command -v swift >/dev/null || { echo "format.sh: swift is not on PATH" >&2; exit 2; }
swift format --version >/dev/null 2>&1 || { echo "format.sh: this toolchain has no 'swift format'" >&2; exit 2; }

if (( $# > 0 )); then
  files=("$@")
else
  mapfile -t files < <(git ls-files '*.swift' \
    | grep -v -x -e Sources/SoundtrackServer/OpenAPIDocument.swift -e Sources/SoundtrackCatalog/BundledModels.swift)
fi
(( ${#files[@]} > 0 )) || exit 0

if (( check )); then
  # lint --strict: every difference from the formatted text (and every rule finding) is an error.
  if ! out=$(swift format lint --strict --parallel "${files[@]}" 2>&1); then
    echo "$out" | head -50
    echo "format.sh: ${#files[@]} files checked; the ones above differ from their formatted text (run scripts/format.sh)" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files formatted as .swift-format says"
else
  swift format format --in-place --parallel "${files[@]}"
fi
