"""The code base stays ruff-clean (the configuration lives in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_ruff_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    p = subprocess.run([ruff, "check", "--output-format", "concise", str(REPO)], capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 0, p.stdout + p.stderr
