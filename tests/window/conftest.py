"""Fixtures of the real-window tests: the Debian rootfs with Blender 4.3.2 (built here when absent, never skipped),
the extension zip installed with Blender's own `extension install-file`, and a run's scene made by the runner with
`PHYSCODEGYM_BLENDER` pointing at the launcher. Run them with `make test-blender` (docs/BLENDER.md)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from realblender import KEYED_BALL_PROGRAM, LAUNCHER, REPO, install  # noqa: E402


@pytest.fixture(scope="session")
def rootfs() -> Path:
    """The rootfs, built now if absent or half-built (scripts/blender_rootfs.sh: about 8 minutes the first time)."""
    t0 = time.monotonic()
    p = subprocess.run(["bash", str(REPO / "scripts" / "blender_rootfs.sh")], capture_output=True, text=True)
    assert p.returncode == 0, f"building the Blender rootfs failed:\n{p.stderr[-3000:]}"
    root = Path(p.stdout.strip().splitlines()[-1])
    print(f"rootfs ready in {time.monotonic() - t0:.1f} s: {root}")
    return root


@pytest.fixture(scope="session")
def extension_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extension zip without wheels: Debian's Blender imports Debian's python3-pydantic & co."""
    from physcodegym.physcodegym_addon import package

    doc = package.build(tmp_path_factory.mktemp("zip"), wheel_set="none")
    return Path(doc["zip"])


@pytest.fixture(scope="session")
def installed_user(rootfs: Path, extension_zip: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Blender user folder with the extension installed and enabled (its preferences saved there)."""
    user = tmp_path_factory.mktemp("blender_user")
    p = install(extension_zip, user)
    assert p.returncode == 0 and 'Installed "physcodegym"' in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
    return user


@pytest.fixture(scope="session")
def keyed_ball_run(rootfs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder made by the runner with the real Blender (PHYSCODEGYM_BLENDER = the launcher, bake only)."""
    from physcodegym.sandbox import runner

    work = tmp_path_factory.mktemp("keyed_ball")
    program = work / "scene.py"
    program.write_text(KEYED_BALL_PROGRAM)
    rec = runner.run_program(
        program, work / "run", timeout_s=300, mode="bake_only", blender_binary=str(LAUNCHER), isolation="none"
    )
    assert rec.status == "ok", f"{rec.status}: {rec.reason}\n{rec.log_tail}"
    assert rec.bpy_version == "4.3.2"
    return work / "run"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The window tests need the Blender rootfs (about 8 minutes and 2.4 GB to build once): they run under
    `make test-blender` (PHYSCODEGYM_WINDOW_TESTS=1) or when tests/window is named on the command line, not in the
    whole-suite `make test` (CI's time budget; docs/BLENDER.md). Never skipped when asked for: the rootfs is built."""
    if os.environ.get("PHYSCODEGYM_WINDOW_TESTS") == "1" or any("tests/window" in str(a) for a in config.args):
        return None
    return True if collection_path.name.startswith("test_") else None
