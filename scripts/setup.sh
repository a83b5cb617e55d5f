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
say() { echo "set-up: $*" >&2; }
# pip, quiet: progress lines are ours. Two kinds of noise are dropped, every other line (real warnings, errors) is
# kept and pip's exit status is returned: this machine's pip config names an extra index folder that may not exist,
# and pip then prints one "WARNING: Location '...' is ignored" line per package looked up; and setuptools' 11-line
# informational notice that an editable install is one ("BuildBackendWarning: Editable installation." ... at most
# 14 lines, up to its "with strategy, WheelFile" line).
pipq() {
  local py=$1; shift
  "$py" -m pip --quiet --disable-pip-version-check "$@" 2>&1 | awk '
    /^WARNING: Location .* is ignored/ { next }
    /BuildBackendWarning: Editable installation\./ { skip = 14; next }
    skip > 0 { skip--; if ($0 ~ /with strategy, WheelFile/) skip = 0; next }
    { print; fflush() }' >&2
  return "${PIPESTATUS[0]}"
}
# Installs go through uv (PyPI; pinned below) when it is there: the same pinned wheels as pip, from uv's own cache
# (measured from a clean clone: make test's set-up ~60 s against ~150 s with pip). Without uv (its own install
# failed), pip does the same work.
UV_PIN="uv==0.13.10"
UV=.venv/bin/uv
inst() {
  local py=$1; shift
  # --compile-bytecode: the .pyc files pip writes too; without them Blender 5.2 writes __pycache__ beside its own
  # modules at run time, and an installed environment must be the same whichever installer made it
  if [ -x "$UV" ]; then "$UV" pip install --quiet --compile-bytecode --python "$py" "$@"; else pipq "$py" install "$@"; fi
}
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
stamp=.venv/.physcodegym-installed
want="$(sha256sum pyproject.toml | cut -d' ' -f1) $extras"
have=$(cat "$stamp" 2>/dev/null || true)
# A test install (dev,lpips) also satisfies the core profile.
if [ -x .venv/bin/python ] && { [ "$have" = "$want" ] || { [ "$profile" = core ] && [ "${have%% *}" = "${want%% *}" ] && [ "${have#* }" = "dev,lpips" ]; }; }; then
  :
else
  t0=$SECONDS
  if [ ! -x .venv/bin/python ]; then say "creating .venv with $("$PY" --version 2>&1)"; "$PY" -m venv .venv; fi
  say "installing physcodegym and its dependencies [$extras] into .venv (first time: several minutes, bpy alone is ~400 MB) ..."
  pipq .venv/bin/python install --upgrade pip "$UV_PIN" || say "installing $UV_PIN failed: pip installs the rest"
  inst .venv/bin/python -e ".[$extras]"
  echo "$want" > "$stamp"
  say ".venv ready with extras [$extras] ($((SECONDS - t0)) s)"
fi
# The sandbox's operating-system wall is bubblewrap (`run` refuses without it unless --unsafe-no-isolation).
if ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing bubblewrap (the sandbox wall) ..."
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; } >.venv/apt-bubblewrap.log 2>&1 \
      && say "bubblewrap ready ($(bwrap --version 2>/dev/null))" \
      || say "installing bubblewrap failed (log: .venv/apt-bubblewrap.log): 'run' will refuse until it is installed"
  else
    say "bubblewrap (bwrap) is missing and this is not root: ask an administrator for the Debian package 'bubblewrap'; until then 'run' refuses (or pass --unsafe-no-isolation for trusted programs only)"
  fi
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
      say "installing harbor 0.25.0 into .venv-harbor ..."
      if "$HPY" -m venv .venv-harbor && inst .venv-harbor/bin/python "harbor==0.25.0"; then
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
if [ "$profile" = test ]; then
  # The report's browser test opens the generated report in headless Chromium (Debian package `chromium`,
  # driven by playwright with executable_path; playwright downloads no browser).
  if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      say "installing Debian chromium for the report's browser test ..."
      if { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >.venv/apt-chromium.log 2>&1; then
        say "chromium ready ($(chromium --version 2>/dev/null | head -1))"
      else
        say "installing chromium failed (log: .venv/apt-chromium.log): the report's browser test will fail with that reason"
      fi
    else
      say "no chromium and not root: install the Debian package 'chromium' for the report's browser test"
    fi
  fi
fi
if [ "$profile" = test ]; then
  # A second Blender for the tests: bpy 5.2.3 LTS, which exists only for Python 3.13 (Blender 5.1+ embed 3.13),
  # in .venv-bpy52/; the package is found through a .pth naming .venv-bpy52/pkgroot/physcodegym -> this checkout.
  # tests/core/test_other_blender.py runs a shipped truth and its audit there. Pins: the set measured together.
  bstamp=.venv-bpy52/.installed
  bwant="bpy==5.2.3 set 1"  # raise the set number when the pins below change
  if [ "$(cat "$bstamp" 2>/dev/null)" != "$bwant" ]; then
    B313=""
    for c in ${BPY52_PYTHON:-} python3.13 "$(pyenv root 2>/dev/null)"/versions/3.13*/bin/python3; do
      [ -n "$c" ] || continue
      if "$c" -c 'import sys; raise SystemExit(sys.version_info[:2] != (3, 13))' >/dev/null 2>&1; then B313=$c; break; fi
    done
    if [ -n "$B313" ]; then
      t0=$SECONDS
      rm -rf .venv-bpy52
      say "installing bpy 5.2.3 (Python 3.13) into .venv-bpy52 for the second-Blender test ..."
      if "$B313" -m venv .venv-bpy52 && inst .venv-bpy52/bin/python \
           "bpy==5.2.3" "pydantic==2.14.4" "requests==2.34.2" "rich==15.0.0" "tomli_w==1.2.0" \
           "opencv-python-headless==5.1.0.95" "scikit-image==0.26.0" "matplotlib==3.11.2" "scipy==1.18.1"; then
        mkdir -p .venv-bpy52/pkgroot && ln -sfn "$PWD" .venv-bpy52/pkgroot/physcodegym
        echo "$PWD/.venv-bpy52/pkgroot" > "$(.venv-bpy52/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/physcodegym-src.pth"
        echo "$bwant" > "$bstamp"
        say ".venv-bpy52 ready ($((SECONDS - t0)) s)"
      else
        say "installing bpy 5.2.3 failed: the second-Blender test will fail with that reason"
      fi
    else
      say "no Python 3.13 on this machine: the second-Blender test will fail (it needs bpy 5.2.3, which is 3.13 only)"
    fi
  fi
fi
