"""Counterfactual branches: baseline vs intervened vs control, in a fresh bpy worker process.

The parent never imports bpy: the branches run in `python -m physcodegym.probes.rebake.cf_worker` (one
process for intervened + control, each re-opening the saved `.blend`, which stays untouched). The baseline is taken from
samples the audit already has when given (never baked twice). Before a response is read, the intervention must have
taken effect: its property was read back in the child, and where the change is measurable on the
trajectories (a shifted release, a set velocity, a removed object) it is measured here.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from physcodegym.core import launch
from physcodegym.core.limits import start_limited
from physcodegym.samples import SceneSamples
from physcodegym.tasks.schema import ExpectedResponse, Intervention, InterventionKind

WORKER_TIMEOUT_S = 600.0  # per branch; PHYSCODEGYM_BRANCH_TIMEOUT_S overrides it (a server with heavy scenes)
WORKER_STOPPED = "worker stopped: "  # a branch's worker hit its time or memory limit (the reason follows)
CRASHED_EVERY_TRY = "the branch crashed a fresh worker three times, in three memory layouts"
FIRST_JOB_TRIES = 3  # fresh workers a branch that crashes as their first job is given, each in another layout
LAYOUT_VAR = "PHYSCODEGYM_WORKER_LAYOUT"  # padding in a restarted worker's environment: another memory layout
WORKER_MEMORY_MB = 8192  # address space of one worker (clamped to a limited parent's own limit)


def scene_stopped_the_worker(reason: str) -> bool:
    """Whether a branch failed because re-simulating the scene outran the worker's limits (time, memory) or
    crashed Blender twice, as opposed to a fault of the check itself: such a branch cannot be verified, and a
    scene must not pass a check by being too slow or too fragile to re-simulate."""
    return WORKER_STOPPED in reason or CRASHED_EVERY_TRY in reason


def branch_timeout_s() -> float:
    """Seconds one branch may take: PHYSCODEGYM_BRANCH_TIMEOUT_S when set to a positive number, else
    WORKER_TIMEOUT_S. Read from the trusted process's environment, which a program never sets. A branch past it
    is recorded as failed, and the audit counts what that branch was to measure as acting."""
    raw = os.environ.get("PHYSCODEGYM_BRANCH_TIMEOUT_S", "")
    try:
        v = float(raw)
    except ValueError:
        return WORKER_TIMEOUT_S
    return v if v > 0 else WORKER_TIMEOUT_S


def run_branches(blend: Path, jobs: list[dict[str, Any]], mapping: dict[str, str] | None = None,
                 timeout_s: float | None = None) -> list[tuple[SceneSamples | None, dict[str, Any]]]:
    """Run several branches in ONE worker process (each re-opens `blend`); returns (samples or None, record) per job.

    A job is {"out": Path, "interventions": [Intervention], "frames": (s, e), "defect": kind, "save_blend": Path,
    "solvers_off": bool, "force_rebake": bool (free the program's bake and simulate again with nothing changed),
    "to_rest": bool (with force_rebake: read from the bake itself what to simulate again, `resimulation.resim_plan`),
    "runs": [(first, last)] (with force_rebake, a scene of cloth and particles only: simulate those frames again,
    each run from the bake's own state at its first frame, `cf_worker.resimulate_runs`),
    "reseed": int (shift every particle system's seed by it: another microstate of the same physics),
    "strip_clear": [object names] (delete their faces whose material renders nothing: what those faces do),
    "decollide": [object names] (take away their collision, keep the objects: `cf_worker.decollide`),
    "render_side": bool (switch the scene to its render configuration, then re-bake: what the viewport-only
    differences did), "stack_gaps": [object names] (record how far each one's collision surface lies from its
    rendered one, `cf_worker.collision_stack_gaps`; nothing is changed)}.
    """
    return start_branches(blend, jobs, mapping, timeout_s).result()


class BranchRun:
    """Branches whose first worker was started by `start_branches`; `result()` waits and resumes after a crash.

    Why a crash is resumed: Blender can segfault after a branch that left its scene inconsistent (the
    self-test's keyframed pendulum bob, removed while its hinge still named it: fixed at its cause,
    `interventions.drop_joints`). A crash must not lose the branches that had not run yet, so the jobs without a
    record go to a fresh worker. A job that crashes `FIRST_JOB_TRIES` fresh workers as their first job is
    recorded as failed (with the signal) and the rest go on; a timeout or a SIGKILL is not retried (it would
    cost the same again). Records of branches run after a crash say `worker_crashes` and `worker_layout`.

    Why each fresh worker gets another memory layout: a simulating worker runs with address randomisation off
    (`core.determinism`), so a crash that depends on the heap's layout repeats in every retry. CI saw exactly
    that: the pendulum branch crashed both its workers, where no developer run ever crashed. A restarted worker
    has `LAYOUT_VAR` padding in its environment, which moves its heap (measured on that branch before its fix:
    the crash came and went with the padding: 1 to 4 layouts of 8 crashed at each of five run folders).
    """

    def __init__(self, blend: Path, jobs: list[dict[str, Any]], mapping: dict[str, str] | None,
                 timeout_s: float | None, pinned: bool = True) -> None:
        self.blend, self.jobs, self.mapping, self.pinned = Path(blend), jobs, mapping or {}, pinned
        self.timeout_s = branch_timeout_s() if timeout_s is None else timeout_s
        self.spec = [
            {
                "out": str(j["out"]),
                "interventions": [iv.model_dump(mode="json") for iv in j.get("interventions") or []],
                "frames": list(j["frames"]) if j.get("frames") else None,
                "defect": j.get("defect"),
                "save_blend": str(j["save_blend"]) if j.get("save_blend") else None,
                "solvers_off": bool(j.get("solvers_off")),
                "force_rebake": bool(j.get("force_rebake")),
                "to_rest": bool(j.get("to_rest")),
                "runs": [[int(a), int(b)] for a, b in j.get("runs") or []],
                "reseed": int(j.get("reseed") or 0),
                "strip_clear": list(j.get("strip_clear") or []),
                "decollide": list(j.get("decollide") or []),
                "render_side": bool(j.get("render_side")),
                "stack_gaps": list(j.get("stack_gaps") or []),
            }
            for j in jobs
        ]
        self._res: list[tuple[SceneSamples | None, dict[str, Any]]] | None = None
        self._worker = None
        self._pending: list[int] = []
        if not jobs:
            return
        first = Path(jobs[0]["out"])
        first.parent.mkdir(parents=True, exist_ok=True)
        self.jobs_file = first.with_name(first.stem + "_jobs.json")
        for j in jobs:  # a record left by an earlier run would pass for this one's
            Path(j["out"]).with_suffix(".json").unlink(missing_ok=True)
        self._pending = list(range(len(jobs)))
        self._worker = self._start(self._pending)

    def _start(self, pending: list[int], layout: int = 0) -> Any:
        self.jobs_file.write_text(json.dumps([self.spec[i] for i in pending]))
        args = ["--blend", str(self.blend), "--jobs", str(self.jobs_file), "--mapping", json.dumps(self.mapping)]
        cmd = launch.module_argv("physcodegym.probes.rebake.cf_worker", args)
        # a trusted child with a time and memory limit; its whole process group goes with it
        # re-bakes repeat the sandbox's bakes: same environment, one CPU, fixed layout (core.determinism);
        # a worker restarted after a crash gets another layout (class docstring)
        env = dict(os.environ, **{LAYOUT_VAR: "." * (4099 * layout)}) if layout else None
        return start_limited(cmd, timeout_s=self.timeout_s * len(pending), memory_mb=WORKER_MEMORY_MB,
                             simulation=True, pinned=self.pinned, env=env)

    def cancel(self) -> None:
        """Kill a worker whose branches nobody will read (its whole group); `result()` then records them failed."""
        if self._res is None and self._worker is not None:
            self._worker.kill()

    def _has_record(self, i: int) -> bool:
        return Path(self.jobs[i]["out"]).with_suffix(".json").is_file()

    def result(self) -> list[tuple[SceneSamples | None, dict[str, Any]]]:
        if self._res is not None:
            return self._res
        failed: dict[int, str] = {}  # job index -> why it has no record
        first_crashes: dict[int, int] = {}  # job index -> fresh workers it crashed as their first job
        crashes: dict[int, list[str]] = {}  # job index -> the crashes of the workers before the one it ran in
        pending, worker = self._pending, self._worker
        layout = dict.fromkeys(pending, 0)  # job index -> the layout of the last worker it was queued in
        restarts = 0
        while pending:
            p = worker.wait()
            err = None
            if p.killed_reason:
                err = f"{WORKER_STOPPED}{p.killed_reason}"
            elif p.returncode not in (0, 1):
                err = f"worker exited {p.returncode}: {p.stderr[-800:]}"
            left = [i for i in pending if not self._has_record(i)]
            crashed = err is not None and not p.timed_out and p.returncode is not None and p.returncode < 0 \
                and p.returncode != -9  # SIGKILL: the memory limit or an outside kill, not a Blender crash
            if not left or not crashed:
                for i in left:
                    failed[i] = err or "worker wrote no record"
                break
            if left[0] == pending[0]:  # the first job of a fresh worker crashed it: that job may be the cause
                first_crashes[left[0]] = first_crashes.get(left[0], 0) + 1
                if first_crashes[left[0]] >= FIRST_JOB_TRIES:
                    failed[left[0]] = f"{err} ({CRASHED_EVERY_TRY})"
                    left = left[1:]
            for i in left:  # said on their records: they ran in a worker started after a crash
                crashes.setdefault(i, []).append(err)
            pending = left
            if pending:
                restarts += 1
                layout.update(dict.fromkeys(pending, restarts))
                worker = self._start(pending, layout=restarts)
        res = []
        for i, j in enumerate(self.jobs):
            out = Path(j["out"])
            rec_path = out.with_suffix(".json")
            rec = json.loads(rec_path.read_text()) if rec_path.is_file() else {
                "ok": False, "errors": [failed.get(i, "worker wrote no record")]}
            if crashes.get(i):
                rec["worker_crashes"] = crashes[i]
                rec["worker_layout"] = layout.get(i, 0)
            samples = SceneSamples.load_npz(out) if out.is_file() and rec.get("ok") else None
            res.append((samples, rec))
        self._res = res
        return res


def start_branches(blend: Path, jobs: list[dict[str, Any]], mapping: dict[str, str] | None = None,
                   timeout_s: float | None = None, pinned: bool = True) -> BranchRun:
    """Start the worker of `run_branches` and return at once: the caller works on while it bakes (the second
    core); `.result()` gives what `run_branches` returns. `pinned=False`: the worker may use every CPU
    (`core.limits.start_limited`), only for scenes whose bakes repeat with any number of threads."""
    return BranchRun(blend, jobs, mapping, timeout_s, pinned)


def run_branch(
    blend: Path,
    out: Path,
    interventions: list[Intervention] | None = None,
    mapping: dict[str, str] | None = None,
    frames: tuple[int, int] | None = None,
    defect: str | None = None,
    save_blend: Path | None = None,
    timeout_s: float | None = None,
) -> tuple[SceneSamples | None, dict[str, Any]]:
    """Run one worker; returns (samples or None, record)."""
    job = {"out": out, "interventions": interventions, "frames": frames, "defect": defect, "save_blend": save_blend}
    return run_branches(blend, [job], mapping, timeout_s)[0]


# ---------------------------------------------------------------- measurements (pure numpy)


def track(samples: SceneSamples, name: str) -> np.ndarray | None:
    """(F, 3) world track of an object: vertex centroid for deforming meshes, else its origin."""
    if name in samples.verts:
        return np.nanmean(samples.verts[name].astype(np.float64), axis=1)
    if name in samples.names:
        return samples.locations(name)
    return None


def alive_particles(samples: SceneSamples, key: str, fi: int) -> np.ndarray:
    """(N, 3) positions of live particles at sample index fi.

    The per-frame alive mask is trusted: on a frame where no particle is alive (before the first is born, after
    the last died) there is nothing. Unborn particles wait at the emitter with finite positions, and counting
    them once made a `contacts` criterion pass on frame 1 for any emitter near its target (garden_fountain's
    water "reached" the bowl before a drop was born). Only a system whose mask is empty on EVERY frame, as a
    sampler wrote it before it read `alive_state` right (bpy 5.0 reports ALIVE as 3), falls back to the
    finite positions.
    """
    P = samples.particles[key][fi]
    mask = samples.particles_alive[key]
    if not mask.any():
        return P[np.all(np.isfinite(P), axis=1)]
    return P[mask[fi]]


def frame_index(samples: SceneSamples, at_s: float | None) -> int:
    if at_s is None:
        return len(samples.frames) - 1
    f = int(round(at_s * samples.fps)) + 1
    return int(np.clip(f - int(samples.frames[0]), 0, len(samples.frames) - 1))


def _aabb(samples: SceneSamples, name: str, fi: int) -> tuple[np.ndarray, np.ndarray] | None:
    info = samples.info.get(name)
    if info is None or name not in samples.names:
        return None
    c = samples.locations(name)[fi]
    half = np.asarray(info["dimensions"], dtype=np.float64) / 2.0
    return c - half, c + half


def measure(samples: SceneSamples, exp: ExpectedResponse, mapping: dict[str, str],
            baseline: SceneSamples | None = None) -> dict[str, Any]:
    """Value of `exp.measure` for `exp.role` on these samples (metres unless the measure says otherwise)."""
    name = mapping.get(exp.role)
    if name is None:
        return {"value": None, "reason": f"role {exp.role!r} unmapped"}
    fi = frame_index(samples, exp.at_s)
    m = exp.measure
    if m == "particles_inside":
        box = _aabb(samples, name, fi)
        if box is None:
            return {"value": None, "reason": f"container {name!r} absent"}
        lo, hi = box
        tot = ins = 0
        for key in samples.particles:
            p = alive_particles(samples, key, fi)
            tot += len(p)
            ins += int(np.all((p >= lo) & (p <= hi), axis=1).sum())
        return {"value": ins / tot if tot else None, "unit": "fraction", "frame": int(samples.frames[fi]),
                "particles": tot}
    if m == "vertex_displacement":
        if name not in samples.verts:
            return {"value": None, "reason": f"{name!r} has no deforming vertices"}
        v = samples.verts[name].astype(np.float64)
        d = np.linalg.norm(v[fi] - v[0], axis=1)
        return {"value": float(np.nanmean(d)), "unit": "m", "frame": int(samples.frames[fi])}
    tr = track(samples, name)
    if tr is None:
        return {"value": None, "reason": f"object {name!r} absent from the scene"}
    if m == "displacement":
        val = float(np.linalg.norm(tr[fi] - tr[0]))
    elif m == "max_displacement":
        val = float(np.max(np.linalg.norm(tr[: fi + 1] - tr[0], axis=1)))
    elif m == "final_height":
        val = float(tr[fi, 2])
    elif m == "min_height":
        val = float(np.min(tr[: fi + 1, 2]))
    elif m == "path_deviation":
        if baseline is None:
            return {"value": None, "reason": "path_deviation needs a baseline"}
        bt = track(baseline, name)
        if bt is None:
            return {"value": None, "reason": f"{name!r} absent from the baseline"}
        n = min(fi + 1, len(bt))
        val = float(np.max(np.linalg.norm(tr[:n] - bt[:n], axis=1)))
    else:  # pragma: no cover
        return {"value": None, "reason": f"unknown measure {m}"}
    return {"value": val, "unit": "m", "frame": int(samples.frames[fi])}


def compare(value: float, op: str, ref: float) -> bool:
    return {"lt": value < ref, "le": value <= ref, "gt": value > ref, "ge": value >= ref}[op]


def preserved(samples: SceneSamples, baseline: SceneSamples, roles: list[str], mapping: dict[str, str],
              until_s: float | None, tol: float) -> dict[str, Any]:
    """Max deviation from baseline of each preserved role up to `until_s`."""
    out: dict[str, Any] = {}
    fi = frame_index(samples, until_s)
    for r in roles:
        n = mapping.get(r)
        a = track(samples, n) if n else None
        b = track(baseline, n) if n else None
        if a is None or b is None:
            out[r] = {"deviation_m": None, "ok": False, "reason": "role unmapped or absent"}
            continue
        k = min(fi + 1, len(a), len(b))
        dev = float(np.max(np.linalg.norm(a[:k] - b[:k], axis=1)))
        out[r] = {"deviation_m": round(dev, 5), "ok": dev <= tol}
    return out


def _measured_effect(iv: Intervention, samples: SceneSamples, baseline: SceneSamples,
                     mapping: dict[str, str]) -> tuple[bool, str]:
    k = iv.kind
    names = [mapping.get(r) for r in iv.roles]
    if k in (InterventionKind.remove_object, InterventionKind.remove_support):
        gone = all(n not in samples.names for n in names)
        return gone, "object absent from the intervened scene" if gone else "object still present"
    if k is InterventionKind.shift_release and names:
        a, b = track(samples, names[0]), track(baseline, names[0])
        off = np.asarray(iv.params.get("offset", [0, 0, 0]), dtype=np.float64)
        d = float(np.linalg.norm((a[0] - b[0]) - off)) if a is not None and b is not None else 1e9
        return d < 1e-3, f"first-frame shift error {d:.4f} m"
    if k is InterventionKind.set_velocity and names:
        a = track(samples, names[0])
        if a is None or len(a) < 3:
            return False, "object absent"
        v = (a[2] - a[1]) * samples.fps
        tgt = np.asarray(iv.params.get("velocity", [0, 0, 0]), dtype=np.float64)
        err = float(np.linalg.norm(v - tgt))
        return err < 0.05 * max(1.0, float(np.linalg.norm(tgt))), (f"measured early velocity {np.round(v, 3).tolist()} "
                                                                   "m/s")
    return True, "property read back in the intervened scene"


def run_counterfactual(
    blend: Path,
    intervention: Intervention,
    mapping: dict[str, str],
    frames: tuple[int, int] | None = None,
    control: Intervention | None = None,
    expected: ExpectedResponse | None = None,
    baseline: SceneSamples | Path | None = None,
    work_dir: Path | None = None,
) -> dict[str, Any]:
    """Baseline vs intervened (vs control) summary, `took_effect`, and the expected-response verdict inputs."""
    return start_counterfactual(blend, intervention, mapping, frames, control, expected, baseline, work_dir).result()


class PendingCounterfactual:
    """`run_counterfactual` whose branch worker is started at once (`start_counterfactual`, same arguments);
    `result()` waits and judges, giving its document (once, then kept); `cancel()` stops a worker whose result
    nobody will read.

    Why: the rubric's branches need only the saved scene, the role mapping and the baseline samples, so they can
    bake on the second core while the audit is still busy (`verifier.rubric_eval.prefetch_counterfactuals`)."""

    def __init__(self, blend: Path, intervention: Intervention, mapping: dict[str, str],
                 frames: tuple[int, int] | None = None, control: Intervention | None = None,
                 expected: ExpectedResponse | None = None, baseline: SceneSamples | Path | None = None,
                 work_dir: Path | None = None) -> None:
        self.blend = Path(blend)
        self.intervention, self.mapping, self.control, self.expected = intervention, mapping, control, expected
        self._tmp = tempfile.TemporaryDirectory(prefix="pcg_cf_") if work_dir is None else None
        self.wd = Path(work_dir) if work_dir is not None else Path(self._tmp.name)
        self.wd.mkdir(parents=True, exist_ok=True)
        self.run: BranchRun | None = None
        self._final: dict[str, Any] | None = None
        self.doc: dict[str, Any] = {"blend": str(self.blend), "intervention": intervention.model_dump(mode="json"),
                                    "mapping": mapping}
        try:
            if isinstance(baseline, (str, Path)):
                baseline = SceneSamples.load_npz(baseline)
            if frames is None and expected is not None:
                hi = max(x for x in (expected.at_s, expected.preserved_until_s, 0.0) if x is not None)
                frames = (1, min(240, int(round(hi * 30)) + 2)) if hi > 0 else None
            if baseline is None:
                baseline, brec = run_branch(self.blend, self.wd / "baseline.npz", [], mapping, frames)
                self.doc["baseline_run"] = brec
                if baseline is None:
                    self.doc.update(ok=False, reason="baseline branch failed: " + "; ".join(brec.get("errors", [])))
                    self._finish()
                    return
                self.doc["baseline_source"] = "fresh"
            else:
                self.doc["baseline_source"] = "reused"
            if frames is None:
                frames = (int(baseline.frames[0]), int(baseline.frames[-1]))
            self.baseline, self.frames = baseline, frames
            jobs = [{"out": self.wd / "intervened.npz", "interventions": [intervention], "frames": frames}]
            if control is not None:  # both branches in one worker: one bpy start-up, each re-opens the file
                jobs.append({"out": self.wd / "control.npz", "interventions": [intervention, control],
                             "frames": frames})
            # a scene without particles re-bakes alike on any number of threads (`core.limits.start_limited`)
            self.run = start_branches(self.blend, jobs, mapping, pinned=bool(baseline.particles))
        except BaseException:
            self._cleanup()
            raise

    def _finish(self) -> dict[str, Any]:
        self._final = self.doc
        self._cleanup()
        return self.doc

    def release(self) -> None:
        """Remove the branch files once every reader has its document (the samples stay in memory)."""
        self._cleanup()

    def _cleanup(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def cancel(self) -> None:
        """Stop the worker (if it still runs) and remove the branch files; `result()` then says it was cancelled."""
        if self._final is None:
            if self.run is not None:
                self.run.cancel()
            self.doc.update(ok=False, reason="cancelled: its result was not needed")
            self._finish()

    def result(self) -> dict[str, Any]:
        if self._final is not None:
            return self._final
        try:
            return self._judge(self.doc, self.expected, self.frames)
        finally:
            self._finish()

    def judge(self, expected: ExpectedResponse | None, frames: tuple[int, int]) -> dict[str, Any]:
        """The document of another request served by this branch: the same intervention and control, an
        expected response of its own, read on the branch's frames up to `frames[1]` (the branch was baked at
        least that far). Rigid bodies and cloth re-simulate bit for bit, so a shorter bake of the same branch
        is the prefix of this one; one bake then answers every criterion that asks for it."""
        if self._final is not None and "_samples" not in self._final:
            return dict(self._final)  # failed or cancelled: the same for every reader
        doc = {k: v for k, v in self.doc.items() if k not in ("verdict", "_samples")}
        return self._judge(doc, expected, frames)

    def _branches(self) -> list[tuple[SceneSamples | None, dict[str, Any]]]:
        if not hasattr(self, "_got"):
            self._got = self.run.result()
        return self._got

    def _judge(self, doc: dict[str, Any], expected: ExpectedResponse | None,
               frames: tuple[int, int]) -> dict[str, Any]:
        mapping = self.mapping
        last = int(frames[1])
        baseline = self.baseline  # whole, as for a branch baked to exactly these frames
        branches = self._branches()
        inter, irec = branches[0]
        doc["intervened_run"] = {k: v for k, v in irec.items() if k != "traceback"}
        if inter is None:
            doc.update(ok=False, took_effect=False,
                       reason="intervened branch failed: " + "; ".join(irec.get("errors", [])))
            return doc
        inter = inter.head(last)
        ivs = irec.get("interventions", [])
        static_ok = all(r.get("verified") for r in ivs) and bool(ivs)
        meas_ok, meas_msg = _measured_effect(self.intervention, inter, baseline, mapping)
        doc["took_effect"] = bool(static_ok and meas_ok)
        doc["took_effect_evidence"] = {"read_back": static_ok, "measured": meas_msg}
        doc["frames"] = [int(frames[0]), last]
        doc["trajectories"] = _summaries(baseline, inter, mapping)
        doc["_samples"] = {"baseline": baseline, "intervened": inter}
        if self.control is not None:
            ctrl, crec = branches[1]
            doc["control_run"] = {k: v for k, v in crec.items() if k != "traceback"}
            doc["_samples"]["control"] = ctrl.head(last) if ctrl is not None else None
        if expected is not None:
            doc["verdict"] = verdict(expected, doc, mapping)
        doc["ok"] = True
        return doc


start_counterfactual = PendingCounterfactual


def _summaries(base: SceneSamples, inter: SceneSamples, mapping: dict[str, str]) -> dict[str, Any]:
    """Per role (and per other moving object, keyed by its name): displacement and deviation from baseline."""
    out = {}
    items = [(r, n) for r, n in mapping.items() if not r.startswith("__")]
    mapped = {n for _, n in items}
    for n in base.names:
        tr = track(base, n)
        if n not in mapped and tr is not None and float(np.max(np.linalg.norm(tr - tr[0], axis=1))) > 1e-3:
            items.append((n, n))
    for role, name in items:
        a, b = track(base, name), track(inter, name)
        if a is None:
            continue
        row: dict[str, Any] = {"object": name, "baseline_displacement_m": round(float(np.linalg.norm(a[-1] - a[0])), 5)}
        if b is None:
            row["intervened"] = "absent"
        else:
            k = min(len(a), len(b))
            row["intervened_displacement_m"] = round(float(np.linalg.norm(b[k - 1] - b[0])), 5)
            row["max_deviation_m"] = round(float(np.max(np.linalg.norm(a[:k] - b[:k], axis=1))), 5)
        out[role] = row
    return out


def verdict(exp: ExpectedResponse, doc: dict[str, Any], mapping: dict[str, str]) -> dict[str, Any]:
    """passed True/False, or None when the failure cannot be established (no effect, unresponsive control)."""
    s = doc["_samples"]
    base, inter, ctrl = s["baseline"], s["intervened"], s.get("control")
    if not doc.get("took_effect"):
        return {"passed": None, "reason": "intervention did not take effect: " + str(doc.get("took_effect_evidence"))}
    mi = measure(inter, exp, mapping, base)
    out: dict[str, Any] = {"measure": exp.measure, "role": exp.role, "at_s": exp.at_s, "op": exp.op.value,
                           "expected": exp.value, "intervened": mi}
    if mi.get("value") is None:
        return {**out, "passed": None, "reason": mi.get("reason")}
    val = mi["value"]
    if exp.relative_to_baseline:
        mb = measure(base, exp, mapping, base)
        out["baseline"] = mb
        if not mb.get("value"):
            return {**out, "passed": None, "reason": "baseline measure is zero or missing; ratio undefined"}
        val = val / mb["value"]
        out["ratio"] = round(val, 5)
    ok = compare(val, exp.op.value, exp.value)
    pres = (preserved(inter, base, exp.preserved_roles, mapping, exp.preserved_until_s, exp.preserve_tolerance_m)
            if exp.preserved_roles else {})
    out["preserved"] = pres
    pres_ok = all(p["ok"] for p in pres.values())
    passed = bool(ok and pres_ok)
    out["response_ok"] = bool(ok)
    if ctrl is not None:
        mc = measure(ctrl, exp, mapping, base)
        cv = mc.get("value")
        if cv is not None and exp.relative_to_baseline and out.get("baseline", {}).get("value"):
            cv = cv / out["baseline"]["value"]
        out["control"] = mc
        # A responsive control (same geometry, operative collider) shows the expected response, so the
        # measurement can see it and a failure of the intervened branch is the candidate's, not ours.
        out["control_responsive"] = bool(cv is not None and compare(cv, exp.op.value, exp.value))
        if not passed and not out["control_responsive"]:
            return {**out, "passed": None,
                    "reason": "failure not established: the matched control did not respond either"}
    out["passed"] = passed
    if not passed:
        why = [] if ok else [f"{exp.measure} of {exp.role} = {val:.4f} not {exp.op.value} {exp.value}"]
        why += [f"{r} motion not preserved ({p['deviation_m']} m)" for r, p in pres.items() if not p["ok"]]
        out["reason"] = "; ".join(why)
    return out


def public(doc: dict[str, Any]) -> dict[str, Any]:
    """The JSON-able part of a run_counterfactual document."""
    return {k: v for k, v in doc.items() if not k.startswith("_")}
