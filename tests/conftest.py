"""Session-wide fixtures shared by every test area.

`bundled_run(config, task_id) -> Path` runs the bundled submission `submissions/<config>/<task_id>/scene.py`
once per test session through the real isolated runner (`sandbox.runner.run_program`, full 240-frame
contract) and returns its run folder (`scene.py`, `scene.blend`, `frames/0001.png … 0240.png`, `run.json`,
`run.log`). Later calls with the same arguments return the same folder, so several areas can score, audit
or inspect one real render without paying for it twice. It skips (with the reason) if that submission is
not bundled, and fails if the run is not `ok`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def bundled_run(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], Path]:
    from physcodegym.sandbox.runner import run_program

    cache: dict[tuple[str, str], Path] = {}

    def run(config: str, task_id: str) -> Path:
        key = (config, task_id)
        if key in cache:
            return cache[key]
        prog = REPO / "submissions" / config / task_id / "scene.py"
        if not prog.is_file():
            pytest.skip(f"bundled submission {prog.relative_to(REPO)} is not present")
        out = tmp_path_factory.mktemp(f"run_{config}_{task_id}")
        rec = run_program(prog, out, timeout_s=600)
        assert rec.status == "ok", f"bundled run {config}/{task_id} is {rec.status}: {rec.reason}\n{rec.log_tail}"
        cache[key] = out
        return out

    return run
