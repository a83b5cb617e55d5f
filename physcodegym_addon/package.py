"""Build and validate the extension zip, with the wheels the add-on needs inside Blender.

Inside Blender only Blender's own numpy is guaranteed. The panel and the task schema need pydantic; the
agent's HTTP client and the CLI's progress need requests and rich: those ("core", about 5 MB) are bundled
as wheels. Scoring and role mapping need opencv, scikit-image and scipy ("scoring", about 108 MB), LPIPS
needs torch (GBs): optional, and the panel greys out what needs them with the reason.

Blender 4.2-5.0 embed Python 3.11, Blender 5.1 and later Python 3.13: the binary wheels are fetched for every
version of `--python` (default both) and all listed in one manifest; Blender installs only the wheels of its own
Python and platform (bl_pkg's wheel filter), and refuses a zip with no wheel for its Python ("This Python version
isn't compatible"). `--wheels none` is the build for a Blender whose Python packages come from its distribution
(Debian's blender with python3-pydantic & co., scripts/blender_rootfs.sh): no wheels, no Python or platform limit.

    python -m physcodegym.physcodegym_addon.package validate
    python -m physcodegym.physcodegym_addon.package build --out DIR [--wheels none|core|scoring] [--platform linux-x64]
        [--python 3.11,3.13]

The repository's manifest carries no wheel list (wheel files are not committed): `build` stages a copy
of the source, downloads the pinned wheels there with pip, adds `wheels`/`platforms` to the staged
manifest and runs Blender's extension builder on it. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Pins = the versions tested in this project's venv (numpy<2 world of bpy 5.0.1).
CORE_WHEELS = [
    "pydantic==2.14.4",
    "pydantic_core==2.50.5",
    "typing_extensions==4.16.0",
    "annotated-types==0.8.0",
    "typing-inspection==0.4.5",
    "requests==2.34.2",
    "urllib3==2.8.0",
    "idna==3.20",
    "charset-normalizer==3.5.3",
    "certifi==2026.10.19.post1",
    "rich==15.0.0",
    "markdown-it-py==4.3.0",
    "mdurl==0.1.2",
    "Pygments==2.21.0",
    "tomli_w==1.2.0",
]
SCORING_WHEELS = [
    "opencv-python-headless==4.10.0.84",
    "scikit-image==0.25.2",
    "scipy==1.17.1",
    "imageio==2.38.2",
    "tifffile==2026.3.3",
    "networkx==3.6.1",
    "lazy-loader==0.6",
    "pillow==13.0.0",
    "packaging==26.4",
]
PLATFORMS = {  # Blender platform -> pip platform tags
    "linux-x64": [
        "manylinux_2_17_x86_64",
        "manylinux2014_x86_64",
        "manylinux_2_28_x86_64",
        "manylinux1_x86_64",
        "manylinux_2_5_x86_64",
    ],
    "windows-x64": ["win_amd64"],
    "macos-arm64": ["macosx_11_0_arm64", "macosx_12_0_arm64", "macosx_14_0_arm64"],
    "macos-x64": ["macosx_10_9_x86_64", "macosx_10_13_x86_64"],
}
STAGE_IGNORE = (
    ".git",
    ".venv",
    ".venv-*",
    ".blender-rootfs*",  # scripts/blender_rootfs.sh's Debian rootfs (GBs)
    "tests",
    "benchmarks",
    "results",
    "out",
    "__pycache__",
    "*.egg-info",
    ".pytest_cache",
    ".ruff_cache",
    "*.zip",
)


def blender_ext() -> list[str]:
    """Blender's extension CLI: `blender --command extension` when a binary is known, else the builder
    script shipped inside the bpy module (no Blender binary needed)."""
    spec = importlib.util.find_spec("bpy")
    if spec is not None and spec.submodule_search_locations:
        for base in spec.submodule_search_locations:
            for cand in Path(base).glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"):
                return [sys.executable, str(cand)]
    blender = shutil.which("blender")
    if blender:
        return [blender, "--command", "extension"]
    raise RuntimeError("neither the bpy module's blender_ext.py nor a `blender` binary was found")


def validate(source: Path = ROOT) -> dict:
    p = subprocess.run([*blender_ext(), "validate", str(source)], capture_output=True, text=True)
    return {"ok": p.returncode == 0, "output": (p.stdout + p.stderr).strip()[-2000:]}


PYTHONS = ("3.11", "3.13")  # Blender 4.2-5.0, and 5.1 on


def fetch_wheels(dest: Path, pins: list[str], platform: str, pythons: tuple[str, ...] = PYTHONS) -> list[Path]:
    """Binary-only wheels of `pins` for each CPython version in `pythons` (pure wheels once: same file name)."""
    dest.mkdir(parents=True, exist_ok=True)
    for py in pythons:
        _fetch_wheels_for(dest, pins, platform, py)
    return sorted(dest.glob("*.whl"))


def _fetch_wheels_for(dest: Path, pins: list[str], platform: str, python: str) -> None:
    abi = "cp" + python.replace(".", "")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--only-binary=:all:",
        "--no-deps",
        "--python-version",
        python,
        "--implementation",
        "cp",
        "--abi",
        abi,
        "--abi",
        "abi3",
        "--abi",
        "none",
        "-d",
        str(dest),
    ]
    for tag in PLATFORMS[platform]:
        cmd += ["--platform", tag]
    p = subprocess.run(cmd + ["--platform", "any", *pins], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"pip download for Python {python} failed: {p.stderr[-1500:]}")


def staged_manifest(text: str, wheels: list[str], platform: str | None) -> str:
    """The manifest with `wheels` (and `platforms`) inserted before the first table."""
    lines = []
    if wheels:
        lines.append("wheels = [\n" + "".join(f'  "./wheels/{w}",\n' for w in wheels) + "]")
    if platform:
        lines.append(f'platforms = ["{platform}"]')
    if not lines:
        return text
    m = re.search(r"^\[", text, flags=re.M)
    at = m.start() if m else len(text)
    return text[:at] + "\n".join(lines) + "\n\n" + text[at:]


def build(out: Path, wheel_set: str = "core", platform: str = "linux-x64", pythons: tuple[str, ...] = PYTHONS) -> dict:
    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    pins = {"none": [], "core": CORE_WHEELS, "scoring": CORE_WHEELS + SCORING_WHEELS}[wheel_set]
    with tempfile.TemporaryDirectory(prefix="pcg_ext_") as tmp:
        stage = Path(tmp) / "physcodegym"
        shutil.copytree(ROOT, stage, ignore=shutil.ignore_patterns(*STAGE_IGNORE))
        wheels = fetch_wheels(stage / "wheels", pins, platform, pythons) if pins else []
        wheel_bytes = sum(w.stat().st_size for w in wheels)
        man = stage / "blender_manifest.toml"
        binary = any(not w.name.endswith("-none-any.whl") for w in wheels)
        man.write_text(staged_manifest(man.read_text(), [w.name for w in wheels], platform if binary else None))
        v = validate(stage)
        if not v["ok"]:
            raise RuntimeError(f"staged extension does not validate: {v['output']}")
        p = subprocess.run(
            [*blender_ext(), "build", "--source-dir", str(stage), "--output-dir", str(out)],
            capture_output=True,
            text=True,
        )
        if p.returncode != 0 or "FATAL" in p.stdout:
            raise RuntimeError(f"build failed: {(p.stdout + p.stderr)[-1500:]}")
    zips = sorted(out.glob("physcodegym-*.zip"), key=lambda z: z.stat().st_mtime)
    z = zips[-1]
    return {
        "zip": str(z),
        "bytes": z.stat().st_size,
        "wheels": [w.name for w in wheels],
        "wheel_bytes": wheel_bytes,
        "platform": platform if binary else "any",
        "pythons": list(pythons) if binary else "any",
        "seconds": round(time.perf_counter() - t0, 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m physcodegym.physcodegym_addon.package")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("validate")
    b = sub.add_parser("build")
    b.add_argument("--out", required=True)
    b.add_argument("--wheels", choices=("none", "core", "scoring"), default="core")
    b.add_argument("--platform", choices=sorted(PLATFORMS), default="linux-x64")
    b.add_argument("--python", default=",".join(PYTHONS), help="CPython versions of the binary wheels (comma list)")
    a = ap.parse_args(argv)
    try:
        doc = (
            validate()
            if a.cmd == "validate"
            else build(Path(a.out), a.wheels, a.platform, tuple(v.strip() for v in a.python.split(",") if v.strip()))
        )
    except RuntimeError as e:
        doc = {"ok": False, "error": str(e)}
    print(json.dumps(doc))
    return 0 if doc.get("ok", True) else 1


if __name__ == "__main__":
    sys.exit(main())
