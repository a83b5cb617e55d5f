"""Physical parameters, not just the presence of physics: `non_physical_parameter` findings.

Each solver that moves something is read for the gravity it actually applies (scene gravity x
`use_gravity` x effector-weight gravity x the weight of "all"), its clock (rigid-body `time_scale`, cloth
`time_scale`, particle `time_tweak`: a faster clock with weaker gravity gives the same fall but not the same
physics) and its material parameters (restitution above 1, non-positive mass, damping no real material has,
particles pushed at random by a Brownian force).
Every finding names the property path and its value, so a reader can open the scene and see it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from physcodegym.probes.scene import physics as ph
from physcodegym.tasks.schema import FPS as VIDEO_FPS

EARTH_G = 9.81
GRAVITY_TOL_REL = 0.1  # effective gravity within 10 % of Earth's (a rubric can ask for less: earth_gravity_tolerance)
CLOCK_TOL_REL = 0.05  # solver time scale within 5 % of 1
GRAVITY_TILT_DEG = 3.0  # gravity points down the scene's -Z within this (a tilted gravity rolls a ball on a flat floor)
MAX_RESTITUTION = 1.0
MAX_LINEAR_DAMPING = 0.5  # Bullet: fraction of linear velocity lost per second
MAX_ANGULAR_DAMPING = 0.98
RIGID_DAMPING = {  # rigid-body property: (limit, message of a finding above it)
    "linear_damping": (MAX_LINEAR_DAMPING,
                       "{n} loses {v:.0%} of its speed per second to damping (no medium does that)"),
    "angular_damping": (MAX_ANGULAR_DAMPING, "{n} angular damping {v:g}"),
}
MAX_CLOTH_AIR_DAMPING = 20.0
MAX_PARTICLE_DAMPING = 0.5
MAX_BROWNIAN = 0.0  # particle brownian_factor: a random force on every particle each step, with no source a
# drop of water, a bead or a grain has (thermal motion does not show at these sizes)


def _g_scene(scene_info: dict[str, Any]) -> np.ndarray:
    g = np.array(scene_info.get("gravity", [0, 0, -EARTH_G]), dtype=float)
    return g if scene_info.get("use_gravity", True) else np.zeros(3)


def _w(ew: dict[str, Any] | None) -> float:
    if not ew:
        return 1.0
    return float(ew.get("gravity", 1.0)) * float(ew.get("all", 1.0))


def _solver_gravity(solver: str, name: str, rec: dict[str, Any], g: np.ndarray, settings: str,
                    clock: str) -> dict[str, Any]:
    """The gravity and clock of one object's cloth, soft-body or particle solver (`rec`: its physics record,
    `settings`: the property path of its settings, `clock`: the name of its clock property there)."""
    w = _w(rec.get("effector_weights"))
    return {"solver": solver, "objects": [name], "g": (g * w).tolist(), "weight": w,
            "clock": float(rec.get(clock, 1.0)),
            "paths": {"weight": f"{settings}.effector_weights.gravity * .all", "clock": f"{settings}.{clock}"}}


def time_remap(scene_info: dict[str, Any]) -> float:
    """Scene time per rendered frame from `render.frame_map_old / frame_map_new` (1 without remapping).

    Why: a remapped render is slow (or fast) motion of a real simulation: measured, with 100 -> 300 a
    dropped ball falls a third as fast on screen and nothing else in the scene says so. Every solver runs on
    that scene time, so it multiplies every clock."""
    old, new = (scene_info.get("frame_map") or [100, 100])[:2]
    return float(old) / float(new) if new else 1.0


def effective_gravity(samples: Any) -> list[dict[str, Any]]:
    """Per solver that has something to move: the gravity vector it applies and its clock factor
    (time remapping of the render included)."""
    out = _effective_gravity(samples)
    remap = time_remap(samples.scene_info)
    if abs(remap - 1.0) > 1e-9:
        old, new = samples.scene_info["frame_map"][:2]
        for sv in out:
            sv["clock"] = sv["clock"] * remap
            sv["paths"]["clock"] += f" x render.frame_map_old / frame_map_new ({old} / {new})"
    return out


def _effective_gravity(samples: Any) -> list[dict[str, Any]]:
    si = samples.scene_info
    g = _g_scene(si)
    out: list[dict[str, Any]] = []
    dyn = [n for n, i in samples.info.items() if ph.dynamic(i, si)]
    rbw = si.get("rigidbody_world")
    if dyn and rbw:
        w = _w(rbw.get("effector_weights"))
        # Bullet steps time_scale / (scene frames per second) per frame, and the video shows 30 frames a second:
        # a 60 fps scene is a half-speed clock (measured: 15 frames of free fall drop 1/4 as far)
        fps = float(getattr(samples, "fps", VIDEO_FPS) or VIDEO_FPS)
        out.append({"solver": "rigid_body", "objects": dyn, "g": (g * w).tolist(), "weight": w,
                    "clock": float(rbw.get("time_scale", 1.0)) * VIDEO_FPS / fps,
                    "paths": {"weight": "scene.rigidbody_world.effector_weights.gravity * .all",
                              "clock": "scene.rigidbody_world.time_scale"
                                       + (f" x {VIDEO_FPS} / scene frame rate {fps:g} (render.fps / fps_base)"
                                          if abs(fps - VIDEO_FPS) > 1e-6 else "")},
                    "substeps_per_frame": rbw.get("substeps_per_frame")})
    for n, info in samples.info.items():
        for key, rec in (info.get("physics") or {}).items():
            if rec.get("type") == "CLOTH" and rec.get("enabled", True):
                out.append(_solver_gravity("cloth", n, rec, g, f"objects[{n!r}].modifiers[{key!r}].settings",
                                           "time_scale"))
            elif rec.get("type") == "SOFT_BODY" and rec.get("enabled", True):
                out.append(_solver_gravity("soft_body", n, rec, g, f"objects[{n!r}].modifiers[{key!r}].settings",
                                           "speed"))
            elif rec.get("type") == "PARTICLES" and rec.get("physics_type") in ph.SOLVER_PARTICLES:
                ps = key.split(":", 1)[1]
                out.append(_solver_gravity("particles", n, rec, g, f"objects[{n!r}].particle_systems[{ps!r}].settings",
                                           "time_tweak"))
    return out


def _fmt(v: list[float]) -> str:
    return ", ".join(f"{x:g}" for x in v) if len(v) > 1 else f"{v[0]:g}"


def parameter_problems(samples: Any, gravity_tol: float = GRAVITY_TOL_REL) -> list[dict[str, Any]]:
    """Every non-physical parameter: {"objects", "path", "value", "expected", "message"}."""
    si = samples.scene_info
    probs: list[dict[str, Any]] = []
    for sv in effective_gravity(samples):
        gm = float(np.linalg.norm(sv["g"]))
        if abs(gm / EARTH_G - 1) > gravity_tol:
            src = "scene.gravity / scene.use_gravity" if abs(sv["weight"] - 1) <= 1e-6 else sv["paths"]["weight"]
            probs.append({"objects": sv["objects"], "param": "gravity", "path": src, "value": round(gm, 4),
                          "ratio": round(gm / EARTH_G, 4),
                          "expected": f"{EARTH_G} m/s^2 within {gravity_tol:.0%}",
                          "message": f"{sv['solver']} gravity is {gm:.3g} m/s^2 ({gm / EARTH_G:.2f} x Earth; {src} = "
                                     f"{sv['weight']:g}, scene gravity {np.linalg.norm(_g_scene(si)):.3g})",
                          "solver": sv})
        if gm > 1e-6:
            tilt = float(np.degrees(np.arccos(np.clip(-sv["g"][2] / gm, -1.0, 1.0))))
            if tilt > GRAVITY_TILT_DEG:
                probs.append({"objects": sv["objects"], "param": "gravity_direction", "path": "scene.gravity",
                              "value": round(tilt, 3), "expected": f"-Z within {GRAVITY_TILT_DEG:g} deg",
                              "message": f"{sv['solver']} gravity {np.round(sv['g'], 3).tolist()} is tilted "
                                         f"{tilt:.1f} deg from the scene's vertical: on a level floor it pushes bodies "
                                         "sideways (a slope nobody sees)",
                              "solver": sv})
        if abs(sv["clock"] - 1) > CLOCK_TOL_REL:
            probs.append({"objects": sv["objects"], "param": "time_scale", "path": sv["paths"]["clock"],
                          "value": sv["clock"], "expected": "1.0",
                          "message": f"{sv['solver']} runs its clock at {sv['clock']:g}x ({sv['paths']['clock']}): "
                          f"apparent gravity {float(np.linalg.norm(sv['g'])) * sv['clock'] ** 2:.3g} m/s^2 and every "
                          "other rate rescaled",
                          "solver": sv})
    for path, rec in (si.get("animated_constants") or {}).items():
        probs.append({"objects": list(rec["objects"]), "param": "animated_constant", "path": path, "value": 1.0,
                      "first": rec["first"], "last": rec["last"],
                      "min": rec["min"], "max": rec["max"], "frames_changed": rec["changes"],
                      "expected": "one value for the whole run",
                      "message": f"{path} changes during the run (from {_fmt(rec['first'])} to {_fmt(rec['last'])}, "
                                 f"frames {rec['changes'][0]}-{rec['changes'][1]}): "
                      "a physical constant that is keyframed, driven or set by a script changes the physics mid-run"})
    for n, info in samples.info.items():
        rb = info.get("rigid_body")
        if rb and ph.in_rigid_world(info, si):
            if rb["restitution"] > MAX_RESTITUTION:  # a passive body's restitution creates energy in what hits it
                dyn = [m for m, i in samples.info.items() if m != n and ph.dynamic(i, si)]
                probs.append({"objects": [n, *dyn], "param": "restitution",
                              "path": f"objects[{n!r}].rigid_body.restitution", "value": rb["restitution"],
                              "expected": "<= 1",
                              "message": f"{n} bounces with restitution {rb['restitution']:g} > 1 (creates energy)"})
            if rb["type"] == "ACTIVE" and rb["mass"] <= 0:
                probs.append({"objects": [n], "param": "mass", "path": f"objects[{n!r}].rigid_body.mass",
                              "value": rb["mass"], "expected": "> 0", "always": True,
                              "message": f"{n} has non-positive mass {rb['mass']:g} (Bullet then holds an active body "
                                         "still: a pin, not a material)"})
            for prop, (limit, text) in RIGID_DAMPING.items():
                if rb["type"] == "ACTIVE" and rb[prop] > limit:
                    probs.append({"objects": [n], "param": prop, "path": f"objects[{n!r}].rigid_body.{prop}",
                                  "value": rb[prop], "expected": f"<= {limit}",
                                  "message": text.format(n=n, v=rb[prop])})
        for key, rec in (info.get("physics") or {}).items():
            base = (f"objects[{n!r}].modifiers[{key!r}].settings" if not key.startswith("particles:")
                    else f"objects[{n!r}].particle_systems[{key.split(':', 1)[1]!r}].settings")
            if rec.get("type") in ("CLOTH", "SOFT_BODY") and rec.get("enabled", True) and rec.get("mass", 1.0) <= 0:
                probs.append({"objects": [n], "param": "mass", "path": f"{base}.mass", "value": rec["mass"],
                              "expected": "> 0", "message": f"{n} {rec['type'].lower()} mass {rec['mass']:g}"})
            if (rec.get("type") == "CLOTH" and rec.get("enabled", True)
                and rec.get("air_damping", 0.0) > MAX_CLOTH_AIR_DAMPING):
                probs.append({"objects": [n], "param": "air_damping", "path": f"{base}.air_damping",
                              "value": rec["air_damping"], "expected": f"<= {MAX_CLOTH_AIR_DAMPING}",
                              "message": f"{n} cloth air damping {rec['air_damping']:g}"})
            if rec.get("type") == "PARTICLES" and rec.get("physics_type") in ph.SOLVER_PARTICLES:
                if rec.get("mass", 1.0) <= 0:
                    probs.append({"objects": [n], "param": "mass", "path": f"{base}.mass", "value": rec["mass"],
                                  "expected": "> 0", "message": f"{n} particle mass {rec['mass']:g}"})
                if rec.get("damping", 0.0) > MAX_PARTICLE_DAMPING:
                    probs.append({"objects": [n], "param": "damping", "path": f"{base}.damping",
                                  "value": rec["damping"], "expected": f"<= {MAX_PARTICLE_DAMPING}",
                                  "message": f"{n} particles lose {rec['damping']:.0%} of their speed per step to "
                                             "damping"})
                if rec.get("brownian_factor", 0.0) > MAX_BROWNIAN:
                    probs.append({"objects": [n], "param": "brownian_factor", "path": f"{base}.brownian_factor",
                                  "value": rec["brownian_factor"], "expected": f"<= {MAX_BROWNIAN}",
                                  "message": f"{n} particles are pushed at random every step (brownian factor "
                                             f"{rec['brownian_factor']:g}): energy no liquid or grain has"})
    return probs


def detect(a: Any) -> None:
    """Audit detector: one `non_physical_parameter` finding per problem (objects that never move are skipped)."""
    frames = [int(a.frames[0]), int(a.frames[-1])] if len(a.frames) else []
    a.gravity_summary = effective_gravity(a.s)
    for p in parameter_problems(a.s):
        movers = [o for o in p["objects"] if o in a.moving or any(k.startswith(o + "/") for k in a.s.particles)]
        if p.get("always"):  # the parameter itself keeps the body from moving
            movers = list(p["objects"])
        if not movers:
            continue
        if p["param"] == "restitution" and p["objects"][0] not in movers:  # name the body that carries it first
            movers = [p["objects"][0], *movers]
        a.add(kind="non_physical_parameter", objects=movers, frames=frames, value=float(p["value"]), unit=p["param"],
              message=p["message"], evidence={k: v for k, v in p.items() if k not in ("message", "always")})
