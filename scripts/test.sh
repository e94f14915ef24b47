#!/usr/bin/env bash
# The whole test suite: installs what it needs, lints, builds (refusing compiler warnings in the project's
# own code) and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
swift format lint --strict -r Sources Tests Plugins
build_log="$(mktemp)"
trap 'rm -f "$build_log"' EXIT
swift build --build-tests 2>&1 | tee "$build_log"
bash scripts/check-warnings.sh "$build_log"
swift test --skip-build --parallel --num-workers 2
