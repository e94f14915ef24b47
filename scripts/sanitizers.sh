#!/usr/bin/env bash
# The test suite under the sanitizers: the concurrency, compaction, snapshot and beside-writer tests under
# the thread sanitizer, every other test under the address sanitizer. Each has its own build directory
# (.build-tsan, .build-asan). Exit code 0 when both are clean.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh

# Tests that run threads against one store.
threaded='ConcurrencyTests|PlainReadViewTests|CheckpointTests|CheckpointSafetyTests|IndexedModelQueryTests|IndexApplierTests|UniqueRaceTests|CompactionTests|CompactionPolicyTests|CompactionTrustTests|SnapshotTests|ReadOnlyBesideWriterTests|ReadOnlyRetryTests|DictionaryTests|ODBConcurrencyTests|IsolationTests|ReplicaTests|EncryptedReaderTests|EncryptedStoreTests|KeyRotationTests'

echo "== thread sanitizer: $threaded"
swift build --build-tests --sanitize=thread --build-path .build-tsan
TSAN_OPTIONS="halt_on_error=1" swift test --skip-build --sanitize=thread --build-path .build-tsan --filter "$threaded"

echo "== address sanitizer: every other test"
swift build --build-tests --sanitize=address --build-path .build-asan
# Leak checking is off: every leak it reports comes from Foundation's Process, FileHandle and Data on Linux
# or from the tests' own helpers (no allocation stack has a frame in Sources/).
ASAN_OPTIONS="halt_on_error=1:detect_leaks=0" swift test --skip-build --sanitize=address --build-path .build-asan \
    --skip "$threaded"
echo "sanitizers: clean"
