#!/usr/bin/env bash
# Prepares the Python oracle used by the NFCKit tests and the NDEF benchmark:
# a virtualenv at .venv (package root) with ndeflib 0.3.3 installed.
# Idempotent: does nothing when .venv/bin/python already imports ndeflib 0.3.3.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -x .venv/bin/python ] && .venv/bin/python -c 'import ndef, importlib.metadata as m; assert m.version("ndeflib") == "0.3.3"' 2>/dev/null; then
  echo "ndef-oracle: .venv already has ndeflib 0.3.3"
  exit 0
fi

if [ ! -x .venv/bin/python ]; then
  if ! python3 -m venv .venv; then
    echo "ndef-oracle: cannot create .venv: Python 3 with its venv module is needed (Debian: apt-get install python3-venv)" >&2
    rm -rf .venv
    exit 1
  fi
fi
if ! .venv/bin/pip install --disable-pip-version-check --quiet ndeflib==0.3.3; then
  echo "ndef-oracle: cannot install ndeflib 0.3.3 from PyPI into .venv" >&2
  exit 1
fi
.venv/bin/python -c 'import ndef, importlib.metadata as m; print("ndef-oracle: ndeflib", m.version("ndeflib"), "ready")'
