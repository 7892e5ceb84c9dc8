#!/usr/bin/env bash
# Installs what MUTT Lab needs on a Debian machine, then the package itself in .venv:
#   Java (METEOR 1.5 runs the official jar), Chromium (the end-to-end dashboard test),
#   WordNet (TERp's synonym matches), PostgreSQL (the pair-store tests start a throwaway server).
#   Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
# METEOR's driver is compiled by Java's source launcher, which needs the JDK's compiler module, not just a JRE.
{ command -v java >/dev/null 2>&1 && java --list-modules 2>/dev/null | grep -q '^jdk.compiler'; } || missing+=(default-jdk-headless)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -f /usr/share/wordnet/data.noun ] || missing+=(wordnet-base)
{ command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; } || missing+=(postgresql)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
# torch is pinned in pyproject.toml (2.13.0, the CPU build); an unpinned torch would pull a CUDA build.
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
# numba's kernels (TER, TERp, BADGER-like, ReVal) and TERp's paraphrase index built once now, as pip compiles
# bytecode, instead of by each of the first processes that score with them (about 45 CPU seconds each time).
.venv/bin/python scripts/prepare_caches.py \
  || echo "setup: the metrics' caches were not built now; they are built on first use"
echo "setup: ready (.venv/bin/muttlab)"
