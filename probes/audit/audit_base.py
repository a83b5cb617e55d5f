"""Shared state of one audit (`AuditBase`: one sampling, one geometry, the motion statistics) and every
threshold the detectors use, as module constants so users can see exactly what is tolerated."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from physcodegym.probes.audit.findings import Finding
from physcodegym.probes.scene import kinematics as kin
from physcodegym.probes.scene import physics as ph
from physcodegym.probes.scene import sources as src
from physcodegym.probes.scene.geometry import SceneGeometry
from physcodegym.probes.scene.sampling import SceneSamples

MOVE_TRANSLATION = ph.MOVE_TRANSLATION  # m: an object "moves" beyond this displacement from its first-frame pose
MOVE_ROTATION = ph.MOVE_ROTATION  # rad
MOVE_SCALE = ph.MOVE_SCALE  # relative change of any axis scale
HANDOFF_FRAMES = 15  # a kinematic prefix this short is an initial-condition hand-off, not scripting
PEN_MIN = 0.015  # m: penetration below max(PEN_MIN, PEN_REL * size, margins) is contact noise / modelling slop
PEN_REL = 0.08
PEN_FRAMES = 3  # penetration must persist this many frames (impacts overlap for one)
PARTICLE_CROSS_MIN = 50  # particle steps through a collider-less solid before it counts (a few tunnel anyway)
PARTICLE_CROSS_FRAC = 0.02  # ... and this fraction of the particle steps that came near it
SUPPORT_MIN_RUN = 8  # frames a body must be held against gravity to count as supported
SUPPORT_VZ = 0.05  # m/s
SUPPORT_AZ = 0.3  # fraction of |g|
SUPPORT_SAMPLES = 6  # frames per body where the material under it is measured
SUPPORT_TOL = 0.01  # m, plus effective collision margins and 3 % of the body size
PROXY_TOL_MIN, PROXY_TOL_REL = 0.01, 0.1  # collider vs mesh: max(1 cm, 10 % of the smallest dimension)
SHELL_MIN, SHELL_REL = 0.05, 0.2  # a hull margin / collision thickness beyond max(5 cm, 20 % of the smallest dimension)
ENERGY_GAIN_REL = 0.05  # of the scene's mechanical energy scale, over the initial energy
ENERGY_REBOUND_REL = 0.2  # rise above the running minimum
ENERGY_SCALE_FLOOR = 0.1  # a gain is judged against the energy exchanged so far, at least this share of the run's
ENERGY_FRAMES = 5
SELF_X_MIN_PAIRS, SELF_X_MIN_FRAMES = 2, 2
SELF_X_MAX_FRAMES = 60  # cloth frames checked exhaustively (evenly spaced, always including the last)
EXPLODE_SPEED = 100.0  # m/s
EXPLODE_DIST = 1e4  # m
EXPLODE_STRETCH = 10.0  # cloth edge length over its first-frame length
JITTER_WINDOW, JITTER_NET, JITTER_PATH = 30, 0.005, 0.05  # frames, m, m

SOLVER_SHAPES_WITH_OUTER_MARGIN = ph.SOLVER_SHAPES_WITH_OUTER_MARGIN


# ============================================================================ helpers
# One definition each (probes.scene.physics); these names are kept for the detectors below.
def _is_dynamic(info: dict[str, Any], scene_info: dict[str, Any] | None = None) -> bool:
    return ph.dynamic(info, scene_info)


def _collision_owner(info: dict[str, Any], scene_info: dict[str, Any] | None = None) -> bool:
    return ph.collision_owner(info, scene_info)


_rendered = ph.rendered
_size = ph.size
_margin = ph.margin
_margin_eff = ph.margin_eff


def _frange(frames: np.ndarray, mask: np.ndarray) -> list[int]:
    idx = np.nonzero(mask)[0]
    return [] if len(idx) == 0 else [int(frames[idx[0]]), int(frames[idx[-1]])]


def _series(frames: np.ndarray, values: np.ndarray, label: str, unit: str, threshold: float | None = None) -> dict:
    v = np.asarray(values, dtype=float)
    return {
        "x": [int(f) for f in frames],
        "y": [None if not np.isfinite(y) else round(float(y), 6) for y in v],
        "label": label,
        "unit": unit,
        "threshold": threshold,
    }


class AuditBase:
    """State shared by the detectors of one audit (one sampling, one geometry)."""

    def __init__(self, scene: Any, samples: SceneSamples, program_text: str | None, core: list[str] | None,
                 owner: dict[str, Any] | None = None) -> None:
        import bpy

        self.bpy = bpy
        self.scene = scene
        self.s = samples
        self.frames = samples.frames
        self.info = samples.info
        self.si = samples.scene_info
        self.owner = owner  # probes.branches.ownership.compare of the solvers-off re-evaluation (None: not run)
        self.blend: Path | None = None  # the saved scene the counterfactual measurements copy
        # probes.audit.effects rows: {"field:X" | "collider:X": row}
        self.effects: dict[str, dict[str, Any]] | None = None
        self.program_text = program_text
        self.findings: list[Finding] = []
        self.timings: dict[str, float] = {}
        t = time.perf_counter()
        self.geom = SceneGeometry.from_scene(samples, scene)
        self.timings["geometry"] = time.perf_counter() - t
        g = np.array(samples.scene_info.get("gravity", [0, 0, -9.81]), dtype=float)
        if not samples.scene_info.get("use_gravity", True):
            g = np.zeros(3)
        rbw = scene.rigidbody_world
        self.g_rb = g * (rbw.effector_weights.gravity * rbw.effector_weights.all if rbw else 1.0)
        self.sources = {n: src.motion_sources(scene.objects[n], scene) for n in samples.names if n in scene.objects}
        self.constrained = src.rigid_body_constrained(scene)
        self.fields = src.fields_and_targets(scene)
        self._motion_stats()
        self.core = list(core) if core is not None else [
            n for n in self.moving if self.info[n]["type"] not in ("CAMERA", "LIGHT")]

    # ---------------------------------------------------------------- motion stats
    def _motion_stats(self) -> None:
        s = self.s
        self.moving: dict[str, dict[str, Any]] = {}
        self.step_moving: dict[str, np.ndarray] = {}
        for n in s.names:
            m = s.matrices[s.index(n)]
            if not np.all(np.isfinite(m)):
                self.moving[n] = {"translation": float("nan"), "rotation": float("nan"), "scale": 0.0, "deform": 0.0}
                self.step_moving[n] = np.ones(len(self.frames), bool)
                continue
            x = m[:, :3, 3]
            tr = float(np.max(np.linalg.norm(x - x[0], axis=1))) if len(x) else 0.0
            r = kin.rotations(s, n)
            sc = np.linalg.norm(m[:, :3, :3], axis=1)  # (F, 3) column norms = axis scales
            r = ph.steady_rotations(r, sc)  # zero scale: no rotation can be read
            cos = np.clip((np.einsum("fij,ij->f", r, r[0]) - 1) / 2, -1, 1)
            rot = float(np.max(np.arccos(cos))) if len(r) else 0.0
            scl = ph.scale_change(sc)
            dfm = 0.0
            step = np.zeros(len(self.frames), bool)
            if len(x) > 1:
                step[1:] = np.linalg.norm(np.diff(x, axis=0), axis=1) > 1e-4
                c2 = np.clip((np.einsum("fij,fij->f", r[1:], r[:-1]) - 1) / 2, -1, 1)
                step[1:] |= np.arccos(c2) > 1e-4
                step[1:] |= np.abs(np.diff(sc, axis=0)).max(axis=1) > 1e-4
            if n in s.verts:
                v = s.verts[n]
                dv = np.linalg.norm(v - v[:1], axis=2)
                dfm = float(np.nanmax(dv)) if dv.size else 0.0
                if len(v) > 1:
                    step[1:] |= np.nanmax(np.linalg.norm(np.diff(v, axis=0), axis=2), axis=1) > 1e-4
            if tr > MOVE_TRANSLATION or rot > MOVE_ROTATION or dfm > MOVE_TRANSLATION or scl > MOVE_SCALE:
                self.moving[n] = {"translation": tr, "rotation": rot, "scale": scl, "deform": dfm}
                self.step_moving[n] = step

    def _steps(self, n: str) -> np.ndarray:
        """Frames on which `n` moved; a core object given by the task that never moved has none."""
        return self.step_moving.get(n, np.zeros(len(self.frames), bool))

    def _motion_value(self, n: str) -> tuple[float, str]:
        st = self.moving.get(n, {"translation": 0.0, "rotation": 0.0, "scale": 0.0, "deform": 0.0})
        if st["translation"] > MOVE_TRANSLATION:
            return float(st["translation"]), "m"
        if st["rotation"] > MOVE_ROTATION:
            return float(st["rotation"]), "rad"
        if st.get("scale", 0) > MOVE_SCALE:
            return float(st["scale"]), "relative scale"
        return float(st["deform"]), "m"

    def _motion_text(self, n: str) -> str:
        st = self.moving.get(n, {"translation": 0.0, "rotation": 0.0, "scale": 0.0, "deform": 0.0})
        parts = []
        if st["translation"] > MOVE_TRANSLATION:
            parts.append(f"moves {st['translation']:.3f} m")
        if st["rotation"] > MOVE_ROTATION:
            parts.append(f"turns {np.degrees(st['rotation']):.0f} deg")
        if st.get("scale", 0) > MOVE_SCALE:
            parts.append(f"scales by {st['scale']:.0%}")
        if st["deform"] > MOVE_TRANSLATION:
            parts.append(f"deforms {st['deform']:.3f} m")
        return " and ".join(parts) or "moves"

    def add(self, **kw: Any) -> None:
        self.findings.append(Finding(**kw))

    def solids(self) -> list[str]:
        """Rendered, rigid-shaped mesh objects (cloth and soft bodies are checked on their own). A liquid's surface
        derived from its particles (`derived_surfaces`, checked against them by probes.audit.derived) is liquid,
        not solid material: a stone lying in the water is immersed, not sunk into a collider-less solid (a fused
        surface read on one frame looked like a static solid, and an honest stone in a tank was charged
        `no_contact_response`)."""
        liquid = getattr(self, "derived_surfaces", ())
        return [n for n in self.geom.meshes
                if not self.geom.meshes[n].deforming and _rendered(self.info[n]) and n not in liquid]
