#!/usr/bin/env bash
# Idempotent set-up: creates .venv/ at the repository root with the `physcodegym` command in .venv/bin/.
#   scripts/setup.sh            core + dev tools (enough for the demo and every metric but LPIPS)
#   scripts/setup.sh test       also the LPIPS extra (torch 2.14.1 + torchvision 0.29.1, ~5.5 GB, so its
#                               plumbing tests run) and .venv-harbor/ (Python 3.12: the `harbor` package
#                               needs >= 3.12) for the Harbor-export validation test
# Re-installs only when pyproject.toml or the requested extras changed. Needs Python 3.11 and PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-core}
case "$profile" in
  core) extras="dev" ;;
  test) extras="dev,lpips" ;;
  *) echo "usage: scripts/setup.sh [core|test]" >&2; exit 2 ;;
esac
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
stamp=.venv/.physcodegym-installed
want="$(sha256sum pyproject.toml | cut -d' ' -f1) $extras"
have=$(cat "$stamp" 2>/dev/null || true)
# A test install (dev,lpips) also satisfies the core profile.
if [ -x .venv/bin/python ] && { [ "$have" = "$want" ] || { [ "$profile" = core ] && [ "${have%% *}" = "${want%% *}" ] && [ "${have#* }" = "dev,lpips" ]; }; }; then
  :
else
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[$extras]"
  echo "$want" > "$stamp"
  echo "set-up: .venv ready with extras [$extras]"
fi
find_py312() {
  # pyenv shims answer `command -v` even when that version is not active, so try each candidate for real.
  local c
  for c in ${HARBOR_PYTHON:-} python3.12 python3.13 "$(pyenv root 2>/dev/null)"/versions/3.1[2-9]*/bin/python3; do
    [ -n "$c" ] || continue
    if "$c" -c 'import sys; raise SystemExit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
      echo "$c"; return 0
    fi
  done
  return 1
}
if [ "$profile" = test ]; then
  hstamp=.venv-harbor/.installed
  if [ ! -f "$hstamp" ]; then
    if HPY=$(find_py312); then
      rm -rf .venv-harbor
      if "$HPY" -m venv .venv-harbor && .venv-harbor/bin/python -m pip install --quiet --upgrade pip \
         && .venv-harbor/bin/python -m pip install --quiet "harbor==0.25.0"; then
        echo ok > "$hstamp"
        echo "set-up: .venv-harbor ready (harbor 0.25.0 on $("$HPY" --version))"
      else
        echo "set-up: installing harbor failed: the Harbor-export validation test will be skipped with that reason" >&2
      fi
    else
      echo "set-up: no Python >= 3.12 on this machine: the Harbor-export validation test will be skipped with that reason" >&2
    fi
  fi
fi
