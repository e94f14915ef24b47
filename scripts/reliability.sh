#!/usr/bin/env bash
# Reproduces the figures of Documentation/Reliability.md: simulated power loss, I/O errors and recovery
# faults at every call of the scripted workloads, the corruption sweep over every byte, 10 million fuzz
# inputs per target, a soak (SOAK_SECONDS, default 3600) and the sanitizers. Prints the figures and keeps
# the whole output in $RELIABILITY_LOG (default reliability.log). Takes about two hours on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
soak_seconds=${SOAK_SECONDS:-3600}
log=${RELIABILITY_LOG:-reliability.log}
: > "$log"
figures='^(power loss|I/O errors|recovery faults|corruption sweep|fuzz )|✘|Test run with'

echo "== crash points, I/O errors, recovery faults and corruption sweep: every call, every byte"
swift build --build-tests
LOGSTORE_RELIABILITY=full swift test --skip-build \
    --filter 'PowerLossTests|IOErrorTests|RecoveryFaultTests|IndexSweepTests|CorruptionSweepTests' 2>&1 | tee -a "$log" | grep -E "$figures"

echo "== fuzzing: 10 million inputs per target (optimized build with testing enabled)"
swift build -c release --build-tests -Xswiftc -enable-testing --build-path .build-release-tests
LOGSTORE_FUZZ_EXECUTIONS=${FUZZ_EXECUTIONS:-10000000} swift test -c release --skip-build \
    --build-path .build-release-tests --filter 'FuzzTests|ObjectFuzzTests' 2>&1 | tee -a "$log" | grep -E "$figures"

echo "== soak: $soak_seconds s, 2 threads"
swift build -c release --product logstore-tool
soak=$(mktemp -d)
.build/release/logstore-tool stress "$soak/store" --seconds "$soak_seconds" --threads 2 2>&1 | tee -a "$log" |
    grep -vE '^ +[0-9]+ s '
rm -rf "$soak"

echo "== sanitizers"
bash scripts/sanitizers.sh 2>&1 | tee -a "$log" | grep -E '^==|Test run with|(WARNING|ERROR): (Thread|Address|Leak)Sanitizer|sanitizers:'
