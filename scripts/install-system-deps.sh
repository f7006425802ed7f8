#!/usr/bin/env bash
# System packages the TF.js backends need and pip cannot install: Debian's Chromium
# (tfjs-webgl runs in it, headless) and Node.js with npm (tfjs-cpu/wasm, the page driver).
# Installs only what is missing; as root directly, otherwise through sudo.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "dlfuzz needs the Debian packages: ${need[*]} (run as root: apt-get install ${need[*]})" >&2
    exit 1
  fi
  sudo="sudo"
fi
echo "installing ${need[*]} with apt-get"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${need[@]}"
