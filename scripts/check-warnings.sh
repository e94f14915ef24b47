#!/usr/bin/env bash
# Fails when a build log holds a compiler warning in the project's own sources, tests or plugins.
# A build only compiles what changed, so a clean build (as CI's fresh clone does) shows every warning.
# Usage: scripts/check-warnings.sh BUILD_LOG
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
warnings="$(grep -E "^${root}/(Sources|Tests|Plugins)/[^:]+:[0-9]+:[0-9]+: warning:" "$1" | sort -u || true)"
if [ -n "$warnings" ]; then
    echo "check-warnings: the build has compiler warnings in the project's code:" >&2
    echo "$warnings" >&2
    exit 1
fi
