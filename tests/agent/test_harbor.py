"""Harbor export: validated with harbor's own loader (harbor needs Python >= 3.12, so it lives in its own venv),
the reward script, and the `pcg` shell tools the exported instruction documents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from physcodegym.agent.harbor_export import REWARD_PY, export_harbor
from physcodegym.core.errors import InputError

HARBOR_PY = Path(os.environ.get("PHYSCODEGYM_HARBOR_PYTHON", Path.home() / ".cache/physcodegym/harbor-venv/bin/python"))

HARBOR_CHECK = r'''
import json, sys, tomllib, warnings
from pathlib import Path
warnings.simplefilter("error", DeprecationWarning)  # no deprecated field names
from harbor.models.task.task import Task
from harbor.models.task.config import TaskConfig, PackageInfo, VerifierConfig, AgentConfig, EnvironmentConfig
d = Path(sys.argv[1])
t = Task(d)
raw = tomllib.loads((d / "task.toml").read_text())
models = {"task": PackageInfo, "verifier": VerifierConfig, "agent": AgentConfig, "environment": EnvironmentConfig}
unknown = [k for k in raw if k not in TaskConfig.model_fields]
unknown += [f"{s}.{k}" for s, m in models.items() for k in raw.get(s, {}) if k not in m.model_fields]
c = t.config
print(json.dumps({
    "name": t.name, "unknown": unknown, "instruction_len": len(t.instruction),
    "schema_version": c.schema_version, "verifier_timeout": c.verifier.timeout_sec, "agent_timeout": c.agent.timeout_sec,
    "cpus": c.environment.cpus, "memory_mb": c.environment.memory_mb, "network": c.environment.network_mode.value,
    "verifier_network": c.verifier.network_mode.value if c.verifier.network_mode else None,
    "env_dir": t.paths.environment_dir.is_dir(), "solution": t.paths.solution_dir.is_dir(),
    "test": str(t.paths.discovered_test_path_for(c.environment.os)),
    "metadata": c.metadata,
}))
'''


def test_export_validates_with_harbor_loader(tmp_path, agent_task):
    if not HARBOR_PY.is_file():
        pytest.skip(f"harbor not installed: create {HARBOR_PY.parent.parent} with python3.12 -m venv and pip install harbor==0.25.0 "
                    "(harbor needs Python >= 3.12; our venv is 3.11), or set PHYSCODEGYM_HARBOR_PYTHON")
    out = tmp_path / "harbor_task"
    doc = export_harbor(agent_task.folder, out, max_launches=12, cpus=2, memory_mb=4096)
    cp = subprocess.run([str(HARBOR_PY), "-c", HARBOR_CHECK, str(out)], capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr[-3000:]
    h = json.loads(cp.stdout.strip().splitlines()[-1])
    assert h["unknown"] == [], h["unknown"]
    assert h["name"] == doc["name"] == f"physcodegym/{agent_task.id}"
    assert (h["cpus"], h["memory_mb"], h["network"], h["verifier_network"]) == (2, 4096, "public", "no-network")
    assert h["agent_timeout"] == 3 * 3600 and h["verifier_timeout"] == 3600
    assert h["env_dir"] and h["test"].endswith("tests/test.sh") and h["instruction_len"] > 500
    assert h["metadata"]["physcodegym_task"] == agent_task.id and h["metadata"]["max_launches"] == 12

    # the agent's image holds the video and the public task, never the truth
    env = out / "environment"
    env_files = [p for p in env.rglob("*") if p.is_file()]
    assert (env / "task" / agent_task.video_path.name).is_file() and (env / "Dockerfile").is_file()
    assert not any(p.name in ("truth.py", "truth_trajectories.npz", "truth_counterfactuals.json") for p in env_files)
    assert not any("packs" in p.parts or "library" in p.parts or "submissions" in p.parts for p in env_files)
    assert not any(p.name == "task.json" for p in env_files if "physcodegym-src" in p.parts)  # no task data at all
    # every package of the product is in the image (pip install there needs them all)
    root = Path(__file__).resolve().parents[2]
    packages = {d.name for d in root.iterdir() if (d / "__init__.py").is_file() and d.name != "tests"}
    assert {p.parent.name for p in env_files if p.name == "__init__.py" and p.parent.parent.name == "physcodegym-src"} >= packages
    assert json.loads((env / "task" / "task.json").read_text())["truth"] is None
    truth = agent_task.truth_program.read_text()
    assert truth not in (out / "instruction.md").read_text()
    assert (out / "tests" / "task" / "truth.py").read_text() == truth  # the verifier has it
    test_sh = (out / "tests" / "test.sh").read_text()
    assert os.access(out / "tests" / "test.sh", os.X_OK) and "V=/logs/verifier" in test_sh and '"$V/reward.json"' in test_sh
    assert "physcodegym run" in test_sh and "physcodegym score --task /tests/task" in test_sh
    assert h["solution"] and os.access(out / "solution" / "solve.sh", os.X_OK)
    assert "PCG_MAX_LAUNCHES=12" in (env / "Dockerfile").read_text()

    with pytest.raises(InputError, match="not empty"):
        export_harbor(agent_task.folder, out)
    export_harbor(agent_task.folder, out, force=True)


def _reward(tmp_path: Path, run: dict | None, score: dict | None, finalized: int) -> dict:
    rp = tmp_path / "reward.py"
    rp.write_text(REWARD_PY)
    (tmp_path / "run.json").write_text(json.dumps(run) if run is not None else "")
    (tmp_path / "score.json").write_text(json.dumps(score) if score is not None else "{")
    subprocess.run([sys.executable, str(rp), str(tmp_path / "run.json"), str(tmp_path / "score.json"), str(finalized),
                    str(tmp_path / "reward.json"), str(tmp_path / "details.json")], check=True, timeout=60)
    return json.loads((tmp_path / "reward.json").read_text())


def test_reward_json_keys_are_numeric_and_named(tmp_path):
    score = {"metrics": {"S_ssim": 0.8, "S_lpips": None, "S_mot": 0.5, "S_val": 0.25},
             "missing": {"S_lpips": "no weights", "S_obj": "no judge"}, "S_vis": 0.8, "S_phys": 0.375, "S_tot": 0.5875}
    r = _reward(tmp_path, {"status": "ok"}, score, 1)
    assert all(isinstance(v, float) for v in r.values())
    assert r["reward"] == 0.5875 and r["S_ssim"] == 0.8 and r["finalized"] == 1.0 and r["valid_artifact"] == 1.0
    assert "S_lpips" not in r and "S_obj" not in r  # missing metrics are absent, never 0 or 1
    r = _reward(tmp_path, {"status": "failed"}, None, 0)
    assert r["reward"] == 0.0 and r["S_tot"] == 0.0 and r["valid_artifact"] == 0.0 and r["finalized"] == 0.0
    r = _reward(tmp_path, None, None, 0)  # the submission never ran at all
    assert r["reward"] == 0.0 and all(isinstance(v, float) for v in r.values())


def test_pcg_shell_tools_share_one_launch_budget(tmp_path, synth_task):
    from .scenes import FIXED

    env = {**os.environ, "PCG_STATE": str(tmp_path / "state"), "PCG_WORKSPACE": str(tmp_path / "app"),
           "PCG_VIDEO": str(synth_task.video_path), "PCG_MAX_LAUNCHES": "1"}

    def pcg(*args: str) -> tuple[int, dict]:
        cp = subprocess.run([sys.executable, "-m", "physcodegym.agent.shell_tools", *args], capture_output=True, text=True, env=env, timeout=300)
        return cp.returncode, json.loads(cp.stdout.strip().splitlines()[-1])

    rc, d = pcg("grid", "0", "8", "4")
    assert rc == 0 and len(d["images"]) == 1 and Path(d["images"][0]).is_file() and "launches left 1/1" in d["budget"]
    (tmp_path / "app").mkdir(exist_ok=True)
    (tmp_path / "app" / "scene.py").write_text(FIXED.replace("bpy.ops.render.render(animation=True)\n", ""))
    rc, d = pcg("run", "--bake-only")
    assert rc == 0 and d["status"] == "ok" and "launches left 0/1" in d["budget"]
    rc, d = pcg("preview", "5")  # a new process: the budget persisted
    assert rc == 1 and "launch budget exhausted" in d["error"]
    rc, d = pcg("finalize")
    assert rc == 1 and d["refused"]
    rc, d = pcg("budget")
    assert d["budget"]["launches_used"] == 1
