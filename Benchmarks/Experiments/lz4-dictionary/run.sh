#!/usr/bin/env bash
# Measures LZ4 against a shared dictionary on small records: the ratio of one dictionary per store against
# one per type tag, and the cost per record of LZ4_attach_dictionary, of a copied prepared stream state and
# of LZ4_loadDict. Data: the four-schema generator here, and (given a version-2 segment of the benchmarks'
# generator as $1) the payloads of its first 200,000 puts.
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 dictionary.c -o "$work/dictionary" /usr/lib/x86_64-linux-gnu/liblz4.a
python3 mixed-records.py "$work/mixed.bin" 200000
echo "== four schemas, 200,000 records"
"$work/dictionary" "$work/mixed.bin"
if [ $# -ge 1 ]; then
    python3 extract-payloads.py "$1" 200000 "$work/generator.bin" > /dev/null
    echo "== the benchmarks' generator, 200,000 records"
    "$work/dictionary" "$work/generator.bin"
fi
