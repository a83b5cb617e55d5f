"""Export a task in Harbor's task format, so native coding CLIs can run it at scale (SPEC §7).

    OUT/task.toml          schema_version, [task], [metadata], [verifier], [agent], [environment]
    OUT/instruction.md     the task prompt, with the `pcg` shell tools instead of function calls
    OUT/environment/       Dockerfile, the physcodegym source (without shipped tasks or submissions),
                           the reference video and task.json (no truth), the `pcg` wrapper
    OUT/tests/test.sh      re-runs the submission in isolation, scores it, writes /logs/verifier/reward.json
    OUT/tests/task/        the full task folder (truth included: the verifier needs it; agents never see tests/)
    OUT/solution/solve.sh  oracle: submits truth.py (shipped tasks only)

Field names follow harbor 0.25's TaskConfig (checked by tests with harbor's own loader).
"""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path
from typing import Any

import tomli_w
from physcodegym.agent import prompts
from physcodegym.agent.budget import BudgetLimits
from physcodegym.core.errors import InputError
from physcodegym.tasks.loader import LoadedTask, load_task

REPO_ROOT = Path(__file__).resolve().parent.parent
HARBOR_SCHEMA_VERSION = "1.4"
# every package folder of the product goes into the image (a missing one breaks `pip install` there);
# task data never does: see _source_ignore
NOT_SOURCE = {"tests", "benchmarks", "submissions", "scripts", "results", "build", "dist"}
SOURCE_DIRS = tuple(
    sorted(d.name for d in REPO_ROOT.iterdir() if (d / "__init__.py").is_file() and d.name not in NOT_SOURCE)
)
SOURCE_FILES = ("__init__.py", "__main__.py", "pyproject.toml", "README.md", "blender_manifest.toml", "LICENSE")
TRUTH_FILES = {"truth.py", "truth_trajectories.npz", "truth_counterfactuals.json", "family.json"}
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.blend1")


def _source_ignore(dirpath: str, names: list[str]) -> set[str]:
    """What the agent's image must not hold: caches, and every task folder or truth file, wherever it sits.

    Judged by content, not by folder name: a folder holding a task.json or a truth program is task data (the
    shipped packs, the generated library, any folder added later), so no new place can leak a truth."""
    out = set(_IGNORE(dirpath, names))
    for n in names:
        p = Path(dirpath) / n
        if n in TRUTH_FILES or (p.is_dir() and ((p / "task.json").is_file() or (p / "truth.py").is_file())):
            out.add(n)
    return out

DOCKERFILE = """\
# PhysCodeGym task image: Blender as a Python module (bpy 5.0.1, Python 3.11) and the `pcg` task tools.
FROM python:3.11-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends \\
        libgl1 libegl1 libxrender1 libxi6 libxkbcommon0 libsm6 libxext6 libx11-6 libxfixes3 libxxf86vm1 libgomp1 \\
    && rm -rf /var/lib/apt/lists/*
COPY physcodegym-src/ /opt/physcodegym-src/
RUN mkdir -p /opt/physcodegym-src/tasks/packs /opt/physcodegym-src/submissions \\
    && pip install --no-cache-dir /opt/physcodegym-src
COPY task/ /opt/physcodegym/task/
COPY pcg /usr/local/bin/pcg
RUN chmod 755 /usr/local/bin/pcg && mkdir -p /app /var/lib/pcg
ENV PCG_WORKSPACE=/app PCG_STATE=/var/lib/pcg PCG_VIDEO=/opt/physcodegym/task/{video} PCG_MAX_LAUNCHES={launches}
WORKDIR /app
"""

PCG = """\
#!/bin/sh
exec python -m physcodegym.agent.shell_tools "$@"
"""

TEST_SH = """\
#!/bin/bash
# PhysCodeGym verifier: re-execute the finalized scene.py in isolation, score it, write the rewards.
set -u
V=/logs/verifier
mkdir -p "$V"
PROGRAM=/var/lib/pcg/submission/scene.py
FINALIZED=1
if [ ! -f "$PROGRAM" ]; then PROGRAM=/app/scene.py; FINALIZED=0; fi
RUN=/tmp/pcg_verify
if [ -f "$PROGRAM" ]; then
  physcodegym run "$PROGRAM" --out "$RUN" --timeout {run_timeout} --json > "$V/run.json" 2> "$V/run.stderr" || true
  physcodegym score --task /tests/task --candidate "$RUN" {metrics}--json > "$V/score.json" 2> "$V/score.stderr" || true
fi
python /tests/reward.py "$V/run.json" "$V/score.json" "$FINALIZED" "$V/reward.json" "$V/details.json"
"""

REWARD_PY = '''\
"""Turn `physcodegym score --json` into Harbor's reward.json: every key numeric and named; no artifact -> 0."""
import json
import sys
from pathlib import Path

KEYS = ("S_tot", "S_vis", "S_phys", "S_ssim", "S_lpips", "S_obj", "S_evt", "S_mot", "S_val")


def load(p):
    try:
        return json.loads(Path(p).read_text())
    except (OSError, ValueError):
        return None


run, score, finalized, out, details = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
ok = bool(run) and run.get("status") == "ok" and bool(score) and "metrics" in score
reward = {"reward": 0.0, "finalized": float(finalized), "valid_artifact": float(ok)}
if ok:
    flat = dict(score.get("metrics") or {})
    flat.update({k: score.get(k) for k in ("S_vis", "S_phys", "S_tot") if k in score})
    for k in KEYS:
        v = flat.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            reward[k] = float(v)
    reward["reward"] = reward.get("S_tot", 0.0)
else:
    reward.update({k: 0.0 for k in KEYS})
Path(out).write_text(json.dumps(reward))
Path(details).write_text(json.dumps({"run": run, "score": score, "finalized": bool(finalized)}, default=str))
'''

SOLVE_SH = """\
#!/bin/bash
# Oracle: submit the task's ground-truth program through the same tools an agent uses.
set -e
cp /solution/truth.py /app/scene.py
pcg run
pcg finalize
"""


def _instruction(loaded_task: LoadedTask, limits: BudgetLimits) -> str:
    body = prompts.task_prompt(loaded_task.task, limits)
    tools = """

## Tools (shell)

Your workspace is `/app`; write your program to `/app/scene.py`. The reference video is observed only
through these commands (each prints one JSON document; images are written under `/app/observations/`
and their paths printed, open them to look):

| command | what it does | launch? |
| --- | --- | --- |
| `pcg video-info` | duration, fps, frames, resolution | no |
| `pcg frames T [T ...]` | reference frames at times T (seconds) | no |
| `pcg grid [START END COUNT]` | one image tiling COUNT evenly spaced frames | no |
| `pcg clip START END RATE` | frames sampled at RATE fps (at most 24) | no |
| `pcg run [--bake-only]` | run /app/scene.py once in isolated Blender | **1 launch** |
| `pcg inspect` | structure of the latest saved scene.blend as JSON | **1 launch** |
| `pcg preview FRAME` | render one frame of the simulated scene | **1 launch** |
| `pcg check` | policy and output check | no |
| `pcg finalize` | submit (refused until the latest full run is of the current scene.py) | no |
| `pcg budget` | launches left | no |

Do not start Blender (or `import bpy`) yourself: every Blender process goes through `pcg`, and the
verifier re-executes your finalized scene.py from scratch.
"""
    return (
        body.replace(
            "(video_info, frame_grid, get_frames, clip)", "(pcg video-info, pcg grid, pcg frames, pcg clip)"
        ).replace(
            "call check_submission; do a final full run_scene; then call finalize",
            "run pcg check; do a final full pcg run; then pcg finalize",
        )
        + tools
    )


def _task_config(t: Any, *, max_launches: int, agent_timeout_s: float, verifier_timeout_s: float, cpus: int,
                 memory_mb: int, network_mode: str, docker_image: str | None) -> dict[str, Any]:
    """Harbor's `task.toml` for task `t` (its verifier always runs without network)."""
    env: dict[str, Any] = {
        "build_timeout_sec": 1800.0,
        "cpus": cpus,
        "memory_mb": memory_mb,
        "network_mode": network_mode,
    }
    if docker_image:
        env["docker_image"] = docker_image
    config = {
        "schema_version": HARBOR_SCHEMA_VERSION,
        "task": {
            "name": f"physcodegym/{t.id}",
            "description": t.title,
            "keywords": [
                x for x in ("physcodegym", t.category.value, t.subcategory.value if t.subcategory else None) if x
            ],
        },
        "metadata": {
            "physcodegym_task": t.id,
            "category": t.category.value,
            "subcategory": t.subcategory.value if t.subcategory else "",
            "max_launches": max_launches,
            "prompt_version": prompts.PROMPT_VERSION,
        },
        "verifier": {"timeout_sec": float(verifier_timeout_s), "network_mode": "no-network"},
        "agent": {"timeout_sec": float(agent_timeout_s)},
        "environment": env,
    }
    return config


def _write_environment(envdir: Path, loaded_task: Any, max_launches: int) -> None:
    """The agent's image: our source, the public task (no truth) and its reference video, the Dockerfile, `pcg`."""
    src = envdir / "physcodegym-src"
    src.mkdir(parents=True)
    for d in SOURCE_DIRS:
        if (REPO_ROOT / d).is_dir():
            shutil.copytree(REPO_ROOT / d, src / d, ignore=_source_ignore)
    for f in SOURCE_FILES:
        if (REPO_ROOT / f).is_file():
            shutil.copy2(REPO_ROOT / f, src / f)
    pub = envdir / "task"
    pub.mkdir()
    shutil.copy2(loaded_task.video_path, pub / loaded_task.video_path.name)
    public_task = json.loads(loaded_task.task.model_dump_json())
    public_task["truth"] = None  # the agent's image knows no ground truth
    (pub / "task.json").write_text(json.dumps(public_task, indent=2), encoding="utf-8")
    (envdir / "Dockerfile").write_text(
        DOCKERFILE.format(video=loaded_task.video_path.name, launches=max_launches), encoding="utf-8"
    )
    _write_exec(envdir / "pcg", PCG)


def export_harbor(
    task: str | Path,
    out: Path,
    *,
    force: bool = False,
    max_launches: int = 20,
    agent_timeout_s: float = 3 * 3600.0,
    verifier_timeout_s: float = 3600.0,
    run_timeout_s: float = 1800.0,
    cpus: int = 2,
    memory_mb: int = 8192,
    network_mode: str = "public",
    docker_image: str | None = None,
    metrics: str | None = None,
) -> dict[str, Any]:
    """Write one Harbor task folder for `task`; returns a summary of what was written."""
    loaded_task = load_task(task)
    if not loaded_task.video_path.is_file():
        raise InputError(
            "the task has no reference video to package", file=str(loaded_task.video_path), field="video.file"
        )
    if network_mode not in ("public", "no-network"):
        raise InputError("network mode must be 'public' or 'no-network'", field="--network-mode")
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        if not force:
            raise InputError("output folder exists and is not empty (pass --force to replace it)", file=str(out))
        shutil.rmtree(out)
    tmp = out.with_name(f".{out.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    limits = BudgetLimits(max_launches=max_launches, wall_clock_s=agent_timeout_s)
    t = loaded_task.task

    config = _task_config(t, max_launches=max_launches, agent_timeout_s=agent_timeout_s,
                          verifier_timeout_s=verifier_timeout_s, cpus=cpus, memory_mb=memory_mb,
                          network_mode=network_mode, docker_image=docker_image)
    (tmp / "task.toml").write_text(tomli_w.dumps(config), encoding="utf-8")
    (tmp / "instruction.md").write_text(_instruction(loaded_task, limits), encoding="utf-8")

    _write_environment(tmp / "environment", loaded_task, max_launches)
    tests = tmp / "tests"
    shutil.copytree(loaded_task.folder, tests / "task", ignore=_IGNORE)
    mflag = f"--metrics {metrics} " if metrics else ""
    _write_exec(tests / "test.sh", TEST_SH.format(run_timeout=int(run_timeout_s), metrics=mflag))
    (tests / "reward.py").write_text(REWARD_PY, encoding="utf-8")

    has_solution = bool(loaded_task.truth_program and loaded_task.truth_program.is_file())
    if has_solution:
        (tmp / "solution").mkdir()
        shutil.copy2(loaded_task.truth_program, tmp / "solution" / "truth.py")
        _write_exec(tmp / "solution" / "solve.sh", SOLVE_SH)
    if out.exists():
        out.rmdir()
    tmp.replace(out)
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and "physcodegym-src" not in p.parts)
    return {"task": t.id, "out": str(out), "name": config["task"]["name"], "solution": has_solution, "files": files}


def _write_exec(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
