#!/usr/bin/env bash
# Installs the Debian packages LogStore builds against (liblz4-dev, libxxhash-dev) when missing.
set -euo pipefail
missing=()
for pkg in liblz4-dev libxxhash-dev pkg-config; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "bootstrap: installing ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
