"""Detectors of the dynamics themselves: `energy_gain`, cloth / soft-body `self_intersection`,
`numerical_instability`, and matter that vanishes (solver particles dying mid-run: `non_physical_parameter`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from physcodegym.probes.audit.audit_base import (
    ENERGY_FRAMES,
    ENERGY_GAIN_REL,
    ENERGY_REBOUND_REL,
    ENERGY_SCALE_FLOOR,
    EXPLODE_DIST,
    EXPLODE_SPEED,
    EXPLODE_STRETCH,
    HANDOFF_FRAMES,
    JITTER_NET,
    JITTER_PATH,
    JITTER_WINDOW,
    SELF_X_MAX_FRAMES,
    SELF_X_MIN_FRAMES,
    SELF_X_MIN_PAIRS,
    AuditBase,
    _collision_owner,
    _frange,
    _is_dynamic,
    _series,
)
from physcodegym.probes.audit.detect_fields import MEASURED_FIELDS
from physcodegym.probes.scene import kinematics as kin
from physcodegym.probes.scene import physics as ph
from physcodegym.probes.scene import sources as src

FREE_PAD_M = 0.02  # m: a body this far (plus both collision margins) from every other collider touches nothing
FREE_DV_MPS = 0.05  # m/s: a change of velocity over one frame this far from gravity's, with nothing touching ...
FREE_DV_REL = 0.02  # ... plus this share of the speed (Bullet's float steps), is a push from outside the scene
FREE_MIN_FRAMES = 1  # ... on this many frames (a knock from a helper taken away lasts one step)
VANISH_MIN = 10  # solver particles that die before the last frame: at least this many ...
VANISH_REL = 0.02  # ... and this share of those ever alive (a liquid does not vanish; a drop or two is bookkeeping)


SELF_X_STATIC_PAIRS = 1  # crossing triangle pairs that make a still cloth or soft body cross itself ...
SELF_X_STATIC_RINGS = 1  # ... among pairs more than this many edge rings apart (a tight fold is still a crossing)
APPARENT_G_SHARE = 0.6  # a free flight off gravity on this share of its free frames ...
APPARENT_G_SPREAD = 0.3  # ... by an acceleration this steady (spread over its size) falls in another gravity


def _apparent_gravity(acc: np.ndarray, g: np.ndarray, damp: np.ndarray, dt: float, ok: np.ndarray,
                      bad: np.ndarray) -> dict[str, Any] | None:
    """The steady gravity a free flight shows when it is not the saved scene's: a bake made with another gravity,
    gravity weight or time scale (then the setting was put back) falls at one other acceleration on every free
    frame, where a push lasts a frame or two. None when the departures are not such a steady offset."""
    if ok.sum() < 3 or bad.sum() < APPARENT_G_SHARE * ok.sum():
        return None
    a = (acc[ok] - damp[ok]) / (dt * dt)  # m/s^2 per free frame
    off = a - g
    mean = off.mean(axis=0)
    if np.linalg.norm(mean) < 1e-6 or np.linalg.norm(off - mean, axis=1).mean() > APPARENT_G_SPREAD * np.linalg.norm(
            mean):
        return None
    seen = g + mean
    return {"bake_mps2": round(float(np.linalg.norm(seen)), 4), "saved_mps2": round(float(np.linalg.norm(g)), 4),
            "bake_vector": [round(float(x), 4) for x in seen], "frames": int(ok.sum())}


def _boxes_meeting(world: list[str], boxes: dict[str, np.ndarray],
                   parts: dict[str, list[str]]) -> tuple[np.ndarray, dict[str, int]]:
    """Which boxes meet, frame by frame, all pairs at once: (N, N, F), a body never meeting itself or its own
    parts; and the row of each body."""
    B = np.stack([boxes[n] for n in world])  # (N, F, 2, 3)
    meet = np.all((B[:, None, :, 0] <= B[None, :, :, 1]) & (B[None, :, :, 0] <= B[:, None, :, 1]), axis=-1)
    idx = {n: i for i, n in enumerate(world)}
    for n in world:
        meet[idx[n], idx[n]] = False
        for k in parts.get(n, []):
            meet[idx[n], idx[k]] = False
    return meet, idx


class DynamicsDetectors(AuditBase):
    # ================================================================ matter
    def vanishing_particles(self) -> None:
        """Solver particles (a liquid, grains) that die while the run goes on: water does not vanish, so matter that
        disappears is removed by a setting, not by physics: a lifetime shorter than the run, "die on hit", or a
        collider that kills particles (a drip tray that swallows the water that would pool in it). Judged on the
        sampled alive states (a particle alive on one frame and not on a later one died; none is reborn), then
        the settings that can kill are named with their property paths: `non_physical_parameter`."""
        kills = sorted(n for n, i in self.info.items() if (i.get("collision") or {}).get("use_particle_kill")
                       and _collision_owner(i, self.si))
        for key, alive in sorted(self.s.particles_alive.items()):
            em, ps = key.split("/", 1)
            rec = (self.info.get(em, {}).get("physics") or {}).get(f"particles:{ps}", {})
            if rec.get("physics_type", "NEWTON") not in ph.SOLVER_PARTICLES or rec.get("render_type") == "NONE":
                continue
            if alive.ndim != 2 or alive.shape[0] < 2 or not alive.shape[1]:
                continue
            F = alive.shape[0]
            ever = alive.any(axis=0)
            last = F - 1 - np.argmax(alive[::-1], axis=0)  # last frame index each particle is alive
            died = ever & (last < F - 1)
            n_died, n_ever = int(died.sum()), int(ever.sum())
            if n_died < max(VANISH_MIN, VANISH_REL * n_ever):
                continue
            base = f"objects[{em!r}].particle_systems[{ps!r}].settings"
            causes = []
            if rec.get("lifetime") is not None and rec["lifetime"] < float(self.frames[-1] - self.frames[0]):
                causes.append({"path": f"{base}.lifetime", "value": rec["lifetime"],
                               "lifetime_random": rec.get("lifetime_random", 0.0)})
            if rec.get("use_die_on_collision"):
                causes.append({"path": f"{base}.use_die_on_collision", "value": True})
            causes += [{"path": f"objects[{k!r}].collision.use_particle_kill", "value": True} for k in kills]
            per_frame = np.bincount(last[died] + 1, minlength=F)[:F]
            first = int(np.argmax(per_frame > 0))
            says = ", ".join(f"{c['path']} = {c['value']}" for c in causes) or "no setting found that kills them"
            self.add(
                kind="non_physical_parameter",
                objects=[em, *[k for k in kills if k != em]],
                frames=[int(self.frames[first]), int(self.frames[-1])],
                value=float(n_died),
                unit="particles",
                message=(f"{n_died} of the {n_ever} particles of {key} vanish before the run ends (matter a solver "
                         f"keeps does not disappear): {says}"),
                evidence={"param": "particle_death", "particles": key, "died": n_died, "ever_alive": n_ever,
                          "causes": causes,
                          "series": _series(self.frames, np.cumsum(per_frame).astype(float),
                                            f"{key} particles vanished so far", "particles")},
            )


    # ================================================================ energy
    def _free_flight_boxes(self, world: list[str]) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
        """Per body in the rigid world: its box on every frame (a primitive shape's own extent where Bullet sizes
        it from the bounds), padded by its margin and swept over the frames on either side; a compound's box
        holds its parts'. Returns (boxes (F, 2, 3) by name, a compound's parts by the compound's name)."""
        boxes = {}
        for n in world:
            rb = self.info[n]["rigid_body"]
            b = self.geom.aabbs(n).copy()
            shape = rb.get("collision_shape")
            if shape not in ("CONVEX_HULL", "MESH"):  # a primitive sized from the bounds, centred on the origin
                dims = np.asarray(self.info[n].get("dimensions", [0, 0, 0]), dtype=float)
                if shape == "SPHERE":
                    half = np.full(3, dims.max() / 2)
                elif shape in ("CAPSULE", "CYLINDER", "CONE"):
                    half = np.array([max(dims[0], dims[1]) / 2] * 2 + [dims[2] / 2])
                else:
                    half = dims / 2
                m = self.s.matrices[self.s.index(n)].astype(np.float64)  # (F, 4, 4)
                r = m[:, :3, :3] / np.maximum(np.linalg.norm(m[:, :3, :3], axis=1, keepdims=True), 1e-12)
                ext = np.abs(r) @ half  # (F, 3): the world half extents of the rotated primitive
                b[:, 0] = np.minimum(b[:, 0], m[:, :3, 3] - ext)
                b[:, 1] = np.maximum(b[:, 1], m[:, :3, 3] + ext)
            grow = float(rb.get("collision_margin", 0.0)) + FREE_PAD_M / 2
            b[:, 0] -= grow
            b[:, 1] += grow
            sw = b.copy()  # swept over the frame before and after (the contact may fall between samples)
            sw[1:, 0] = np.minimum(sw[1:, 0], b[:-1, 0])
            sw[:-1, 0] = np.minimum(sw[:-1, 0], b[1:, 0])
            sw[1:, 1] = np.maximum(sw[1:, 1], b[:-1, 1])
            sw[:-1, 1] = np.maximum(sw[:-1, 1], b[1:, 1])
            boxes[n] = sw
        # a compound's parts are one body with it: its box holds theirs, and they are not its contacts
        parts: dict[str, list[str]] = {}
        for n in world:
            par = self.info[n].get("parent")
            if par in boxes and (self.info[par]["rigid_body"] or {}).get("collision_shape") == "COMPOUND":
                parts.setdefault(par, []).append(n)
        for par, kids in parts.items():
            for k in kids:
                boxes[par][:, 0] = np.minimum(boxes[par][:, 0], boxes[k][:, 0])
                boxes[par][:, 1] = np.maximum(boxes[par][:, 1], boxes[k][:, 1])
        return boxes, parts

    def free_flight(self) -> None:
        """A rigid body in free flight moves as gravity (and its damping) say, frame by frame: Bullet's stepping is
        exact for that, so the second difference of its origin is g * dt^2. A body that touches nothing (its
        box, padded by the collision margins and swept over three frames, meets no other collider's), is held by
        no joint and steered by no field that measurably acts on it, and still changes its velocity otherwise,
        was pushed by something that is not in the saved scene: a helper removed after the bake, a handler or a
        script writing the cache, a support taken away (it hangs in the air). Read on every frame, so a change
        of a few frames is seen wherever it falls, where the restarted runs (`resimulated`) see it only with
        some chance. `scripted_motion`, naming the frames and the velocity change."""
        from physcodegym.probes.audit.params import effective_gravity

        rbw = self.si.get("rigidbody_world") or {}
        fps = float(getattr(self.s, "fps", 0.0) or 0.0)
        if not rbw or fps <= 0 or len(self.frames) < 5 or not rbw.get("enabled", True):
            return
        if np.any(np.diff(self.frames) != 1):
            return  # the second difference needs consecutive frames
        old, new = (self.si.get("frame_map") or [100, 100])[:2]
        if old != new:
            return  # a remapped clock: `non_physical_parameter` names it
        dt = float(rbw.get("time_scale", 1.0)) / fps
        rigid = [sv for sv in effective_gravity(self.s) if sv["solver"] == "rigid_body"]
        if not rigid:
            return  # no dynamic body
        g = np.asarray(rigid[0]["g"], dtype=float)  # the gravity Bullet applies (scene x world effector weights)
        world = [n for n, i in self.info.items() if (i.get("rigid_body") or {}).get("in_world")]
        if any(n not in self.geom.meshes for n in world):
            return  # a collider without geometry to bound it
        boxes, parts = self._free_flight_boxes(world)
        part_of = {k: par for par, kids in parts.items() for k in kids}
        meet, idx = _boxes_meeting(world, boxes, parts)
        acting = set()
        for f in self.fields:
            acts = self._acts_on(f"field:{f['field']}")
            acting |= set(f["targets"]) if acts is None else {t.split("/", 1)[0] for t in acts}
        for n in world:
            info = self.info[n]
            if not _is_dynamic(info, self.si) or n in acting:
                continue
            if n in self.constrained or any(f.kind == "scripted_motion" and n in f.objects for f in self.findings):
                continue  # a joint's forces; or already named
            if n in part_of:
                continue  # a part of a compound moves with it: no free body of its own
            kin_frames = set((self.sources.get(n) or {}).get("kinematic_frames") or [])
            free = ~meet[idx[n]].any(axis=0)
            p = self.s.locations(n).astype(np.float64)
            acc = p[2:] - 2 * p[1:-1] + p[:-2]  # at the middle frame
            v = (p[2:] - p[:-2]) / (2 * dt)
            lin = float(info["rigid_body"].get("linear_damping", 0.0))
            damp = np.log(max(1.0 - lin, 1e-6)) * v * dt * dt
            dv = np.linalg.norm(acc - g * dt * dt - damp, axis=1) / dt
            speed = np.linalg.norm(v, axis=1)
            ok = free[1:-1] & free[:-2] & free[2:] & np.all(np.isfinite(acc), axis=1)
            ok &= ~np.isin(self.frames[1:-1], list(kin_frames | {f + 1 for f in kin_frames}))
            ok[0] = False  # the first step: a hand-off or initial velocity is an admitted initial condition
            bad = ok & (dv > FREE_DV_MPS + FREE_DV_REL * speed)
            if bad.sum() < FREE_MIN_FRAMES:
                continue
            mid = self.frames[1:-1]
            k = int(np.argmax(np.where(bad, dv, -1.0)))
            apparent = _apparent_gravity(acc, g, damp, dt, ok, bad)
            self.add(
                kind="scripted_motion",
                objects=[n],
                frames=_frange(mid, bad),
                value=round(float(dv[k]), 4),
                unit="m/s",
                message=(f"{n} changes its velocity by up to {dv[k]:.2f} m/s in one frame (frame {int(mid[k])}; on "
                         f"{int(bad.sum())} frames) while it touches nothing, no joint holds it and no field acts on "
                         "it: gravity alone would not; a push from nothing any frame shows (a helper taken away after "
                         "the bake, collision geometry that does not render, a script writing the cache)"),
                evidence={"free_frames_checked": int(ok.sum()), "bad_frames": [int(x) for x in mid[bad]][:50],
                          **({"apparent_gravity": apparent} if apparent else {}),
                          "gravity_per_frame_mps": round(float(np.linalg.norm(g)) * dt, 4),
                          "tolerance_mps": f"{FREE_DV_MPS} + {FREE_DV_REL} x speed",
                          "series": _series(mid, np.where(ok, dv, np.nan), f"{n} velocity change off gravity",
                                            "m/s", FREE_DV_MPS)},
            )

    def energy(self) -> None:
        dyn = [n for n in self.s.names if n in self.info and _is_dynamic(self.info[n], self.si) and n in self.moving]
        if not dyn:
            return
        kin_last = -1
        for n in dyn:
            kf = set(self.sources.get(n, {}).get("kinematic_frames", []))
            for fi, f in enumerate(self.frames):
                if int(f) in kf:
                    kin_last = max(kin_last, fi)
        # a field keyed off within the hand-off window gave the initial velocity: energy is judged after it
        start = int(self.scene.frame_start)
        for f in self.fields:
            last = f.get("last_active_frame")
            if last is not None and last < start + HANDOFF_FRAMES:
                kin_last = max(kin_last, int(np.searchsorted(self.frames, last)))
        s0 = kin_last + 2
        if len(self.frames) - s0 < 10:
            return
        e = kin.mechanical_energy(self.s, dyn, self.g_rb)
        total = kin.median_filter(e["total"][s0:])
        fr = self.frames[s0:]
        masses = [float(self.info[n]["rigid_body"]["mass"]) for n in dyn]
        gn = float(np.linalg.norm(self.g_rb))
        zr = [np.ptp(self.s.locations(n) @ (self.g_rb / gn if gn else np.array([0, 0, 1.0]))) for n in dyn]
        scale = max(float(np.max(e["kinetic"][s0:] + e["rotational"][s0:])),
                    sum(m * gn * z for m, z in zip(masses, zr, strict=True)), 1e-9)
        e0 = float(np.max(total[:3]))
        if kin_last < 0 and self._starts_at_rest():
            # Blender gives a rigid body no initial velocity: with no hand-off, every body starts at rest, so the
            # scene starts with its potential energy only. A kick inside the first frames (collision shapes that
            # overlap where the rendered meshes do not, launching a body on the first step) is energy from
            # nowhere, which max(total[:3]) would count as the starting energy.
            e0 = min(e0, float(e["potential"][0]))
        gain = total - e0
        runmin = np.minimum.accumulate(total)
        rebound = total - runmin
        # a gain is judged against the energy the scene has exchanged so far (not less than a tenth of the whole
        # run's): a body that later falls off the stage for 200 m must not hide the kick that launched it
        zrun = np.sum([m * gn * (np.maximum.accumulate(z) - np.minimum.accumulate(z))
                       for m, z in zip(masses, self._heights(dyn, s0), strict=True)], axis=0)
        so_far = np.maximum.accumulate(np.maximum(e["kinetic"][s0:] + e["rotational"][s0:], zrun))
        gain_scale = np.maximum(so_far, ENERGY_SCALE_FLOOR * scale)
        over = gain > ENERGY_GAIN_REL * gain_scale
        over_r = rebound > ENERGY_REBOUND_REL * scale
        flag = over.sum() >= ENERGY_FRAMES or over_r.sum() >= ENERGY_FRAMES
        admitted = self._work_sources(dyn, rise=(s0, e0, float(total.max())))
        self.energy_summary = {"bodies": dyn, "scale_J": scale, "initial_J": e0, "max_gain_J": float(gain.max()),
                               "admitted_sources": admitted, "rises": bool(flag)}
        if not flag or admitted:
            return
        mask = over if over.sum() >= ENERGY_FRAMES else over_r
        val = float(gain.max()) if over.sum() >= ENERGY_FRAMES else float(rebound.max())
        wit = int(np.argmax(gain if over.sum() >= ENERGY_FRAMES else rebound))
        pushers = [f["field"] for f in self.fields if set(f["targets"]) & set(dyn)]
        self.add(
            kind="energy_gain",
            objects=dyn,
            frames=_frange(fr, mask),
            value=val,
            unit="J",
            message=f"passive mechanical energy rises {val:.4g} J above its "
            f"{'initial value' if over.sum() >= ENERGY_FRAMES else 'earlier minimum'} (energy scale "
            f"{float(gain_scale[wit]) if over.sum() >= ENERGY_FRAMES else scale:.4g} J) with no "
            f"admitted work source; witness frame {int(fr[wit])}"
            + (f"; fields acting: {pushers}" if pushers else ""),
            evidence={
                "initial_J": e0,
                "witness_frame": int(fr[wit]),
                "witness_J": float(total[wit]),
                "scale_J": scale,
                "fields_acting": pushers,
                "scale_so_far_J": float(gain_scale[wit]),
                "series": _series(fr, total, "mechanical energy (KE + rotational + PE)", "J",
                                  e0 + ENERGY_GAIN_REL * float(gain_scale[wit])),
            },
        )

    def _heights(self, dyn: list[str], s0: int) -> list[np.ndarray]:
        """Per body, its height along -gravity on the judged frames."""
        gn = float(np.linalg.norm(self.g_rb))
        up = -self.g_rb / gn if gn else np.array([0.0, 0.0, 1.0])
        return [self.s.locations(n)[s0:] @ up for n in dyn]

    def _starts_at_rest(self) -> bool:
        """The samples begin on the rigid-body world's first simulated frame (before it, bodies are at rest too)."""
        rbw = self.si.get("rigidbody_world") or {}
        first = rbw.get("frame_start", self.scene.frame_start)
        return len(self.frames) > 0 and int(self.frames[0]) <= int(first)

    def _supplied(self, label: str, dyn: list[str], rise: tuple[int, float, float]) -> bool:
        """Whether the re-bake without the field(s) of effects branch `label` loses at least half of the energy the
        bodies gain in the bake (`rise`: first judged frame, starting energy, highest energy). A field is credited
        for the energy it supplies, not for moving the bodies: removing any effector changes the order of
        Bullet's force sums, and in a chaotic scene (a ball thrown about by a hidden pump) that alone moves the
        bodies by more than the displacement threshold (measured: each of seven wind fields 30 m away "acted").
        Fields past MEASURED_FIELDS share one branch; a medium field measured with a non-medium one is not credited.
        """
        s0, e0, top = rise
        branch = self._branch(label)
        if branch != label and any(f["type"] not in src.MEDIUM_FIELDS for f in self.fields[MEASURED_FIELDS:]):
            return False  # measured only together with a field that is not a medium: which one supplied it is unknown
        row = (self.effects or {}).get(branch) or {}
        sm = row.get("samples")
        if sm is None or top <= e0:
            return False
        nf = min(len(sm.frames), len(self.frames))
        if nf <= s0 + 2 or any(n not in sm.names for n in dyn):
            return False
        e = kin.mechanical_energy(sm, dyn, self.g_rb)
        without = float(kin.median_filter(e["total"][s0:nf]).max())
        return without - e0 <= 0.5 * (top - e0)

    def _work_sources(self, dyn: list[str], rise: tuple[int, float, float] | None = None) -> list[str]:
        """Admitted work: motors, moving animated colliders (actuators), medium-like fields (wind...). With `rise`
        (the energy check's), a field measured by a re-bake is admitted only if it supplied the rise
        (`_supplied`), and one whose re-bake failed is not admitted (physics that cannot be verified is not
        credited); an unmeasured field (no saved scene to re-bake) is admitted by its targets."""
        out = []
        for n, recs in self.constrained.items():
            if n in dyn and any(r["motor"] for r in recs):
                out.append(f"motor on {n}")
        for n in self.moving:
            sv = self.sources.get(n, {})
            if n not in dyn and _collision_owner(self.info.get(n, {}), self.si) and (
                sv.get("animated_transforms") or sv.get("drivers")):
                out.append(f"actuator {n}")
        for f in self.fields:
            label = f"field:{f['field']}"
            acts = self._acts_on(label)
            if acts is None and self._unmeasured(label) is not None:
                continue
            # a field that touches nothing explains nothing
            touches = set(f["targets"]) & set(dyn) if acts is None else set(acts) & set(dyn)
            if touches and f["type"] in src.MEDIUM_FIELDS and (f["strength"] != 0 or acts is not None):
                if acts is not None and rise is not None and not self._supplied(label, dyn, rise):
                    continue
                out.append(f"{f['type'].lower()} field {f['field']}")
        return out

    # ================================================================ cloth / soft body
    def self_intersection(self) -> None:
        for n, mg in self.geom.meshes.items():
            mods = {m["type"] for m in self.info[n]["modifiers"]}
            if not mods & {"CLOTH", "SOFT_BODY"}:
                continue
            if not mg.deforming or n not in self.moving:
                # a cloth or soft body that never moves (pinned, or held by its goals) still must not cross itself.
                # Its mesh is the modelled one, with no solver noise: one crossing of triangles that share no vertex
                # (`SELF_X_STATIC_RINGS`) is a crossing, where a moving cloth needs a few on a few frames
                pairs = (self.geom.self_intersections(n, int(self.frames[0]), rings=SELF_X_STATIC_RINGS)
                         if len(self.frames) else np.zeros((0, 2)))
                if len(pairs) >= SELF_X_STATIC_PAIRS:
                    self.add(kind="self_intersection", objects=[n], frames=[int(self.frames[0]), int(self.frames[-1])],
                             value=float(len(pairs)),
                             unit="triangle pairs",
                             message=(f"{n} crosses itself: {len(pairs)} nonadjacent triangle pairs intersect (static "
                                      "mesh, every frame)"),
                             evidence={"static": True,
                                       "witness": {"frame": int(self.frames[0]),
                                                   "triangles": [int(x) for x in pairs[0]]}})
                continue
            counts = np.zeros(len(self.frames), dtype=np.int64)
            witness = None
            v = self.s.verts[n]
            check = np.unique(np.linspace(0, len(self.frames) - 1,
                                          num=min(SELF_X_MAX_FRAMES, len(self.frames))).astype(int))
            for fi in check:
                f = self.frames[fi]
                if not np.all(np.isfinite(v[fi])):
                    continue
                pairs = self.geom.self_intersections(n, int(f))
                counts[fi] = len(pairs)
                if witness is None and len(pairs):
                    witness = {"frame": int(f), "triangles": [int(x) for x in pairs[0]]}
            bad = counts >= SELF_X_MIN_PAIRS
            if bad.sum() < SELF_X_MIN_FRAMES:
                continue
            self.add(
                kind="self_intersection",
                objects=[n],
                frames=_frange(self.frames, bad),
                value=float(counts.max()),
                unit="triangle pairs",
                message=f"{n} crosses itself: up to {int(counts.max())} nonadjacent triangle pairs intersect (on "
                f"{int(bad.sum())} frames, pairs within 2 edge rings excluded)",
                evidence={
                    "max_frame": int(self.frames[int(np.argmax(counts))]),
                    "witness": witness,
                    "frames_checked": len(check),
                    "series": _series(self.frames[check], counts[check], f"{n} crossing pairs", "pairs"),
                },
            )

    # ================================================================ numerical
    def numerical(self) -> None:
        s = self.s
        for n in s.names:
            m = s.matrices[s.index(n)]
            bad = ~np.all(np.isfinite(m.reshape(len(self.frames), -1)), axis=1)
            if n in s.verts:
                bad |= ~np.all(np.isfinite(s.verts[n].reshape(len(self.frames), -1)), axis=1) & np.any(
                    np.isfinite(s.verts[n].reshape(len(self.frames), -1)), axis=1)
            if bad.any():
                self.add(kind="numerical_instability", objects=[n], frames=_frange(self.frames, bad),
                         value=float(bad.sum()), unit="frames",
                         message=f"{n} has NaN/inf state on {int(bad.sum())} frames", evidence={"cause": "nan"})
                continue
            if n not in self.moving:
                continue
            x = m[:, :3, 3]
            v = np.linalg.norm(kin.linear_velocity(s, n), axis=1)
            far = np.linalg.norm(x, axis=1) > EXPLODE_DIST
            fast = v > EXPLODE_SPEED
            if (far | fast).any():
                self.add(kind="numerical_instability", objects=[n], frames=_frange(self.frames, far | fast),
                         value=float(v.max()), unit="m/s",
                         message=f"{n} explodes: speed up to {v.max():.1f} m/s" + (
                             f", {np.linalg.norm(x, axis=1).max():.0f} m from the origin" if far.any() else ""),
                         evidence={"cause": "explosion",
                                   "series": _series(self.frames, v, f"{n} speed", "m/s", EXPLODE_SPEED)})
                continue
            if n in s.verts and n in self.geom.meshes:
                mg = self.geom.meshes[n]
                e = np.unique(np.sort(np.concatenate([mg.tris[:, [0, 1]], mg.tris[:, [1, 2]], mg.tris[:, [2, 0]]]),
                                      axis=1), axis=0)
                vv = s.verts[n]
                d = vv[:, e[:, 0]] - vv[:, e[:, 1]]
                ln2 = np.einsum("fej,fej->fe", d, d).max(axis=1)  # squared, no norm per edge: a cloth has 15k edges
                r = np.sqrt(ln2 / max(float(ln2[0]), 1e-18))
                if (r > EXPLODE_STRETCH).any():
                    self.add(kind="numerical_instability", objects=[n],
                             frames=_frange(self.frames, r > EXPLODE_STRETCH), value=float(r.max()),
                             unit="stretch ratio",
                             message=f"{n} explodes: an edge stretches to {r.max():.1f}x its first-frame length",
                             evidence={"cause": "explosion",
                                       "series": _series(self.frames, r, f"{n} max edge stretch", "ratio",
                                                         EXPLODE_STRETCH)})
                    continue
            if _is_dynamic(self.info[n], self.si) and len(x) > JITTER_WINDOW:
                step = np.linalg.norm(np.diff(x, axis=0), axis=1)
                W = JITTER_WINDOW
                path = np.convolve(step, np.ones(W - 1), mode="valid")  # path over W frames
                win = np.lib.stride_tricks.sliding_window_view(x, W, axis=0)  # (F-W+1, 3, W)
                net = np.linalg.norm(win.max(axis=2) - win.min(axis=2), axis=1)
                jit = (net < JITTER_NET) & (path[: len(net)] > JITTER_PATH)
                if jit.any():
                    i0 = int(np.argmax(jit))
                    self.add(kind="numerical_instability", objects=[n],
                             frames=[int(self.frames[i0]), int(self.frames[min(len(self.frames) - 1, i0 + W - 1)])],
                             value=float(path[: len(net)][jit].max()), unit="m per window",
                             message=(f"{n} jitters at rest: {path[: len(net)][jit].max():.3f} m of motion within a "
                                      f"{net[jit].min() * 1000:.1f} mm region over {W} frames"),
                             evidence={"cause": "jitter", "window_frames": W})


