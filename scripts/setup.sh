#!/usr/bin/env bash
# Idempotent set-up: creates .venv/ at the repository root with the `physcodegym` command in .venv/bin/.
# Re-installs only when pyproject.toml changed. Needs Python 3.11 and the PyPI registry.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
stamp=.venv/.physcodegym-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ -x .venv/bin/python ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev]'
echo "$want" > "$stamp"
echo "set-up done: $(.venv/bin/physcodegym --help >/dev/null && echo '.venv/bin/physcodegym ready')"
