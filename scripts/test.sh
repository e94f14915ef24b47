#!/usr/bin/env bash
# The whole test suite: installs what it needs, lints, builds and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
swift format lint --strict -r Sources Tests Plugins
swift build --build-tests
swift test --skip-build --parallel --num-workers 2
