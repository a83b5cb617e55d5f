#!/usr/bin/env bash
# Build once a Debian 13 (trixie) root file system holding a full Blender (4.3.2, Python 3.13) with Xvfb and the
# X tools the window tests use, plus the Python packages the extension imports, taken from Debian (Blender's
# Python there is Debian's python3, so Debian's python3-* packages are what it can import; pip wheels are not
# needed). Used by `make blender`, scripts/blender (the bwrap launcher) and tests/window.
#
#   bash scripts/blender_rootfs.sh            # build if absent or half-built; prints the root path
#   PHYSCODEGYM_BLENDER_ROOTFS=DIR bash ...    # another place (default: <repo>/.blender-rootfs, git-ignored)
#
# Idempotent and resumable: the rootfs is built in DIR.partial and renamed to DIR only when complete, with a stamp
# file DIR/.physcodegym-rootfs naming the package list; a DIR.partial left by an interrupted run, or a DIR without
# the stamp, is removed and rebuilt; a complete DIR stamped with another package list gets the missing packages
# with apt-get inside it (rebuilt if that fails). bubblewrap is inside too: the panel's audit runs the scene in the
# sandbox wall (sandbox.isolation), nested in the launcher's. Measured: 8 min 12 s, 2.4 GB (2 busy cores).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="${PHYSCODEGYM_BLENDER_ROOTFS:-$REPO/.blender-rootfs}"
SUITE=trixie
PACKAGES=(
  blender xvfb xauth x11-apps xdotool bubblewrap
  python3-pydantic python3-numpy python3-opencv python3-skimage python3-scipy python3-requests python3-rich
  python3-matplotlib python3-tomli-w
)
WANT="suite=$SUITE packages=${PACKAGES[*]}"
STAMP="$ROOT/.physcodegym-rootfs"

ready() { [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" && -x "$ROOT/usr/bin/blender" ]]; }
if ready; then
  echo "$ROOT"
  exit 0
fi
# one builder at a time (parallel test workers may all ask); the second finds it ready
mkdir -p "$(dirname "$ROOT")"
exec 9>"$ROOT.lock"
flock 9
if ready; then
  echo "$ROOT"
  exit 0
fi

need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v bwrap >/dev/null || need+=(bubblewrap)
if ((${#need[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "blender_rootfs: needs ${need[*]} (apt-get install ${need[*]}) and root for debootstrap" >&2
    exit 2
  fi
  apt-get -o DPkg::Lock::Timeout=900 update -qq >&2  # a fresh machine has no package lists yet
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -q "${need[@]}" >&2
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "blender_rootfs: debootstrap needs root" >&2
  exit 2
fi

# The mirror apt already uses (a deb822 sources file or a one-line sources.list), else Debian's CDN.
MIRROR=""
if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
  MIRROR=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
elif [[ -f /etc/apt/sources.list ]]; then
  MIRROR=$(awk '$1=="deb"{print $2; exit}' /etc/apt/sources.list)
fi
MIRROR="${MIRROR:-http://deb.debian.org/debian}"

in_root() { bwrap --bind "$ROOT" / --proc /proc --dev /dev --tmpfs /run --tmpfs /tmp --setenv HOME /root "$@"; }
if [[ -f "$STAMP" && -x "$ROOT/usr/bin/blender" ]]; then
  echo "blender_rootfs: adding packages to $ROOT ($(cat "$STAMP") -> $WANT)" >&2
  if in_root /usr/bin/env DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends ${PACKAGES[*]} && apt-get clean" >&2; then
    echo "$WANT" >"$STAMP"
    echo "$ROOT"
    exit 0
  fi
  echo "blender_rootfs: apt-get inside the rootfs failed; rebuilding it" >&2
fi

PART="$ROOT.partial"
if [[ -e "$ROOT" ]]; then
  echo "blender_rootfs: $ROOT is incomplete or built for another package list; rebuilding" >&2
  rm -rf --one-file-system "$ROOT"
fi
if [[ -e "$PART" ]]; then
  echo "blender_rootfs: removing a half-built $PART" >&2
  rm -rf --one-file-system "$PART"
fi
mkdir -p "$(dirname "$ROOT")"
t0=$(date +%s)
IFS=, include="${PACKAGES[*]}"
unset IFS
echo "blender_rootfs: debootstrap $SUITE into $PART from $MIRROR (a few minutes, ~1.8 GB)" >&2
unmount_inside() { # debootstrap can leave its /proc (and others) mounted in the target: never leave a host mount
  findmnt -rn -o TARGET | awk -v p="$1/" 'index($0, p) == 1' | sort -r | xargs -r -n1 umount -l
}
trap 'unmount_inside "$PART"' EXIT
debootstrap --variant=minbase --include="$include" "$SUITE" "$PART" "$MIRROR" >&2
unmount_inside "$PART"
# Smaller: apt's package cache is not needed to run.
rm -rf "$PART"/var/cache/apt/archives/*.deb
mkdir -p "$PART/work" "$PART/scratch"
bwrap --bind "$PART" / --proc /proc --dev /dev --tmpfs /run --setenv HOME /root \
  /usr/bin/blender -b --factory-startup --python-expr "import bpy, pydantic, numpy; print('blender', bpy.app.version_string)" >&2
echo "$WANT" >"$PART/.physcodegym-rootfs"
mv "$PART" "$ROOT"
echo "blender_rootfs: built in $(($(date +%s) - t0)) s, $(du -sh --one-file-system "$ROOT" | cut -f1)" >&2
echo "$ROOT"
