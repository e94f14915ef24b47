#!/usr/bin/env bash
# The main job: builds logstore-tool and runs its demo on a store in DIR (default: a new temporary folder).
# Usage: scripts/demo.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
swift build -c release --product logstore-tool
dir="${1:-$(mktemp -d /tmp/logstore-demo-XXXXXX)}"
exec .build/release/logstore-tool demo "$dir"
