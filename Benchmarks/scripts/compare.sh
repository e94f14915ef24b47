#!/usr/bin/env bash
# LogStore, SQLite (through GRDB), LMDB, RocksDB and LevelDB side by side: installs the Debian packages
# it needs when missing (liblz4-dev, libxxhash-dev and pkg-config for LogStore; liblmdb-dev,
# librocksdb-dev and libleveldb-dev for the peers), builds the
# Comparison program in release mode and runs it. Results: Benchmarks/results/comparison.{md,json,svg}.
#
#   Benchmarks/scripts/compare.sh              # the published run (~16 minutes on 2 cores)
#   Benchmarks/scripts/compare.sh --quick      # a small run, to try it (~10 s)
#   Benchmarks/scripts/compare.sh --only-queries --runs 3 --output results/queries   # the task rows alone
#
# Any argument is passed on to the program (see Sources/Comparison/main.swift for the options).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ../scripts/bootstrap.sh
missing=()
for package in liblmdb-dev librocksdb-dev libleveldb-dev; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "compare: installing ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
swift build -c release --product Comparison
output=(--output results)
for argument in "$@"; do
    if [ "$argument" = "--quick" ]; then output=(--output results/quick); fi
done
# An --output of the caller's wins (the program takes the first it is given).
for argument in "$@"; do
    if [ "$argument" = "--output" ]; then output=(); fi
done
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain -- .. 2>/dev/null)" ]; then commit="$commit+changes"; fi
.build/release/Comparison "${output[@]}" --commit "$commit" "$@"
