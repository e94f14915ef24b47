#!/usr/bin/env bash
# Compiles the ```swift blocks of README.md and Documentation/*.md (and only what they need): a block
# that does not compile is reported at its line in the Markdown file. `scripts/test.sh` does the same as
# part of the whole build. Fences: ```swift (compiled), ```swift with name: Type, … (values the block
# uses without declaring them), ```swift alternative (declarations later blocks do not see),
# ```swift no-compile (left out; keep it for what no target can compile, such as Package.swift excerpts).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --target DocSnippetTests
