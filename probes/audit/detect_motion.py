"""Detectors of who owns the motion: `scripted_motion` (the solvers-off universal test, listed sources, derived motion,
handlers) and `not_simulated`."""

from __future__ import annotations

from typing import Any

import numpy as np
from physcodegym.probes.audit.audit_base import (
    HANDOFF_FRAMES,
    MOVE_TRANSLATION,
    AuditBase,
    _collision_owner,
    _frange,
    _is_dynamic,
    _rendered,
    _series,
)
from physcodegym.probes.audit.detect_switches import draws
from physcodegym.probes.scene import physics as ph
from physcodegym.probes.scene import sources as src


class MotionDetectors(AuditBase):
    # ================================================================ scripted motion / not simulated
    def _in_view(self, name: str) -> bool:
        """The object is in the render camera's view on some sampled frame (`probes.scene.screen.in_camera_view`)."""
        from physcodegym.probes.scene.screen import in_camera_view

        return in_camera_view(self.scene, self.s, self.geom, name)

    def scripted(self) -> None:
        """Scripted motion by mechanism. The solvers-off re-evaluation (`probes.branches.ownership`) is the universal
        test: a rendered object that still moves with every solver and field off is scripted, whatever moved
        it. The listed sources (keyframes, drivers, prescriptive constraints, kinematic bodies) name the
        mechanism; motion that follows another object needs a rendered, simulated owner."""
        scripted: dict[str, list[str]] = {}
        self.sim_moved: set[str] = set()
        owner = self.owner or {}
        # everything that renders is judged: geometry, and an empty that draws an instanced collection
        rendered_movers = [n for n in self.moving if draws(self, n) and _rendered(self.info[n])]
        # an emitter of rendered particles places where they are born, rendered or not: its motion is judged too
        emitters = [n for n in self.moving if self._emits_rendered(n)]
        # ... and one, moving or not, whose rendered particles move with no solver (placed or steered by rules)
        emitters += [k.split("/", 1)[0] for k in self.s.particles if self._placed_particles_move(k)]
        cands = list(dict.fromkeys([*self.core, *rendered_movers, *emitters,
                                    *[n for n in owner if _rendered(self.info.get(n, {}))]]))
        order = sorted(cands, key=lambda n: self._depth(n))
        derived: list[str] = []
        for n in order:
            sv = self.sources.get(n)
            if sv is None:
                continue
            info = self.info[n]
            dyn = _is_dynamic(info, self.si)
            reasons = self._scripted_reasons(n, sv, info, owner, emitters, scripted)
            orec = owner.get(n, {})
            solver_mods = ph.solver_modifiers(info)
            st = self.moving.get(n, {})
            solver_deforms = (bool(set(solver_mods) - {"PARTICLES"}) and st.get("deform", 0.0) > MOVE_TRANSLATION
                              and "deform" not in orec)
            if not reasons and (dyn or solver_deforms):
                self.sim_moved.add(n)
            elif not reasons and n in self.moving:
                derived.append(n)
            if reasons:
                scripted[n] = reasons
        self._scripted_followers(derived, scripted)
        for n, reasons in scripted.items():
            self._report_scripted(n, reasons, owner)
        self._handlers(scripted)
        self.scripted_objects = scripted

    def _scripted_reasons(self, n: str, sv: dict[str, Any], info: dict[str, Any], owner: dict[str, Any],
                          emitters: list[str], scripted: dict[str, list[str]]) -> list[str]:
        """Why `n` moves by prescription, one reason per mechanism found (kinematic frames past a hand-off,
        keyed transforms, drivers, prescriptive constraints, a scripted parent, motion that survives the
        solvers-off run, particles placed by rules); empty when nothing says so."""
        dyn = _is_dynamic(info, self.si)
        reasons: list[str] = []
        kin_moving: list[int] = []
        if dyn and sv["kinematic_frames"]:
            kf = set(sv["kinematic_frames"])
            kin_moving = [int(f) for f, st in zip(self.frames, self._steps(n), strict=True) if st and int(f) in kf]
            if len(kin_moving) > HANDOFF_FRAMES:
                reasons.append(f"animated kinematic rigid body moves on {len(kin_moving)} frames")
        if sv["animated_transforms"] and (not dyn or len(sv["kinematic_frames"]) > HANDOFF_FRAMES) and (
            n in owner or self.owner is None):
            paths = sorted({a["path"] for a in sv["animated_transforms"]})
            reasons.append(f"keyframed transform channels {paths}")
        if sv["drivers"] and (n in owner or self.owner is None):
            reasons.append(f"drivers on {[d['path'] for d in sv['drivers']]}")
        if sv["constraints"] and (n in owner or self.owner is None):
            reasons.append(f"constraints that prescribe motion {[c['type'] for c in sv['constraints']]}")
        if sv["parent"] and sv["parent"] in scripted:
            reasons.append(f"parented to scripted object {sv['parent']!r}")
        orec = owner.get(n, {})
        if "transform" in orec:
            t = orec["transform"]
            reasons.append(
                f"still moves with every solver and field switched off ({t['steps']} frames, "
                f"{t['translation_m']:.3f} m, {np.degrees(t['rotation_rad']):.0f} deg): its motion is not produced "
                "by a simulation"
            )
        if "deform" in orec:
            d = orec["deform"]
            reasons.append(f"still deforms {d['deform_m']:.3f} m with every solver and field switched off "
                           f"({d['steps']} frames)")
        if "instances" in orec:
            d = orec["instances"]
            reasons.append(f"its {d['instances']} rendered instance(s) still move {d['deform_m']:.3f} m with every "
                           f"solver and field switched off ({d['steps']} frames)")
        for key, rec in (info.get("physics") or {}).items():
            if (key.startswith("particles:") and rec.get("physics_type") in ph.PLACED_PARTICLES
                and self._particles_move(n, key.split(":", 1)[1])):
                reasons.append(f"particle system {key.split(':', 1)[1]!r} moves with {rec['physics_type']} physics "
                               f"({ph.PLACED_PARTICLES[rec['physics_type']]}, not simulated)")
        if reasons and n in emitters and n in self.moving and not _rendered(info):
            reasons.append("it does not render, but it emits rendered particles: where they are born follows it")
        return reasons

    def _scripted_followers(self, derived: list[str], scripted: dict[str, list[str]]) -> None:
        """Motion that follows another object (parent, constraint target, driver variable, deform object) is
        simulated only through a rendered, simulated owner: a follower with none is added to `scripted`."""
        for n in derived:
            sv = self.sources[n]
            owners = [o for o in sv.get("derived_from", []) if o != n]
            # an owner must be seen: rendered, and in the camera's view on some frame (a simulated twin far
            # off-screen "explains" a follower as little as a hidden one)
            unseen = {
                o for o in owners if o in self.moving and _rendered(self.info.get(o, {})) and not self._in_view(o)}
            good = [o for o in owners if o in self.sim_moved and _rendered(self.info.get(o, {})) and o not in unseen]
            if good:
                self.sim_moved.add(n)
                continue
            info = self.info[n]
            if owners:
                moving_owners = [o for o in owners if o in self.moving]
                if self.owner is None and not moving_owners:
                    continue
                hidden = [o for o in moving_owners if not _rendered(self.info.get(o, {}))] + sorted(unseen)
                why = (
                    f"follows {moving_owners or owners}"
                    + (f" (not rendered or never in the camera's view: {hidden})" if hidden else "")
                    + ", none of which is a rendered simulated body"
                )
                scripted[n] = [why]
            elif info.get("rigid_body") is None or self.owner is not None:
                scripted[n] = ["moves with no native motion source (a handler or script moved it)"]

    def _report_scripted(self, n: str, reasons: list[str], owner: dict[str, Any]) -> None:
        """The scripted_motion finding of `n`: the frames it moves on (or its placed particles, or the frames the
        solvers-off run saw), its motion, its sources and the solvers-off evidence."""
        info = self.info[n]
        sv = self.sources.get(n, {})
        kf = set(sv.get("kinematic_frames", []))
        kin_moving = ([int(f) for f, st_ in zip(self.frames, self._steps(n), strict=True) if st_ and int(f) in kf]
                      if _is_dynamic(info, self.si) else [])
        mask = self._steps(n)
        orec = owner.get(n, {})
        placed = [k for k in self.s.particles if k.split("/", 1)[0] == n and self._placed_particles_move(k)]
        if not mask.any() and placed:  # a still emitter: the frames its unsimulated particles move on
            mask = np.zeros(len(self.frames), bool)
            for k in placed:
                d = np.abs(np.diff(self.s.particles[k], axis=0))
                mask[1:] |= np.nanmax(np.where(np.isfinite(d), d, 0.0), axis=(1, 2), initial=0.0) > 1e-3
        if not mask.any() and orec:
            mask = np.zeros(len(self.frames), bool)
            fr = (orec.get("transform") or orec.get("deform") or orec.get("instances"))["frames"]
            mask[(self.frames >= fr[0]) & (self.frames <= fr[-1])] = True
        value, unit = self._motion_value(n)
        disp = np.linalg.norm(self.s.locations(n) - self.s.locations(n)[0], axis=1)
        what = "emits particles that move" if placed and n not in self.moving else self._motion_text(n)
        self.add(
            kind="scripted_motion",
            objects=[n],
            frames=_frange(self.frames, mask),
            value=value,
            unit=unit,
            message=f"{n} {what} by prescribed motion: " + "; ".join(reasons),
            evidence={
                "sources": sv,
                "reasons": reasons,
                "collision_owner": _collision_owner(info, self.si),
                "solvers_off": {
                    k: {kk: vv for kk, vv in v.items() if kk != "displacement"} for k, v in orec.items()},
                "kinematic_moving_frames": _frange(np.array(kin_moving),
                                                   np.ones(len(kin_moving), bool)) if kin_moving else [],
                "series": _series(self.frames, disp, f"{n} displacement", "m"),
            },
        )

    def _emits_rendered(self, n: str) -> bool:
        """`n` emits particles that render (its own surface may not): where they are born is on screen."""
        return any(key.split("/", 1)[0] == n and ph.emits_rendered(self.info.get(n, {}), key.split("/", 1)[1])
                   for key in self.s.particles)

    def _placed_particles_move(self, key: str) -> bool:
        """Particles `key` ("emitter/system") render and move with physics that is no solver (`ph.PLACED_PARTICLES`)."""
        em, ps = key.split("/", 1)
        rec = (self.info.get(em, {}).get("physics") or {}).get(f"particles:{ps}") or {}
        return (rec.get("physics_type") in ph.PLACED_PARTICLES and ph.emits_rendered(self.info.get(em, {}), ps)
                and self._particles_move(em, ps))

    def _solver_particles_move(self) -> bool:
        """Rendered particles with solver physics (Newtonian, SPH) that move: a simulation that shows."""
        for key in self.s.particles:
            em, ps = key.split("/", 1)
            rec = (self.info.get(em, {}).get("physics") or {}).get(f"particles:{ps}")
            if rec is not None and (
                rec.get("physics_type") not in ph.SOLVER_PARTICLES or rec.get("render_type") == "NONE"):
                continue
            if self._particles_move(em, ps):
                return True
        return False

    def _particles_move(self, emitter: str, psys: str) -> bool:
        P = self.s.particles.get(f"{emitter}/{psys}")
        if P is None or not P.shape[1] or len(P) < 2:
            return False
        d = np.abs(np.diff(P, axis=0))
        return bool(np.nanmax(np.where(np.isfinite(d), d, 0.0), initial=0.0) > 1e-3)

    def _depth(self, n: str) -> int:
        d, p = 0, self.info.get(n, {}).get("parent")
        while p and d < 32:
            d, p = d + 1, self.info.get(p, {}).get("parent")
        return d

    def _handlers(self, scripted: dict[str, list[str]]) -> None:
        recs: list[dict[str, Any]] = []
        if self.program_text is not None:
            recs += [dict(r, origin="program") for r in src.scan_program_handlers(self.program_text)]
        recs += [dict(r, origin="live") for r in src.live_handlers()]
        self.handler_records = recs
        for r in recs:
            if r.get("error"):
                continue
            if not r["moves"]:
                continue
            objs = [n for n in r.get("names", []) if n in self.info]
            frames: list[int] = []
            for o in objs:
                if o in self.step_moving:
                    frames = _frange(self.frames, self.step_moving[o])
            where = f"line {r['line']}" if r.get("line") else r.get("file")
            self.add(
                kind="scripted_motion",
                objects=objs,
                frames=frames,
                value=None,
                unit=None,
                message=(f"{r['event']} handler {r['function']!r} ({r['origin']}, {where}) writes "
                         f"{r['writes'] or 'scene state'}")
                + (f" and names {objs}" if objs else ""),
                evidence={"handler": r},
            )

    def resimulation_doc(self) -> dict[str, Any]:
        """The re-simulation's comparison (`probes.audit.audit._Resimulation`; waits for its worker), or why none
        ran."""
        r = getattr(self, "resimulation", None)
        if r is None:
            return {"ran": False, "reason": "not run"}
        return r if isinstance(r, dict) else r.doc()

    def resimulated(self) -> None:
        """Baked motion the saved scene does not simulate (`probes.branches.resimulation`): the bake was made from
        another scene (a helper deleted, gravity or a setting changed after baking), so the motion on screen
        was not produced by the physics the scene hands in: `stale_cache` (re-bake it), naming what changed where
        the audit can find it (the program's edits after its bake call, the gravity the free flight shows).
        A `free_flight` finding on an object the re-simulation finds departing is the same stale bake seen frame
        by frame: it becomes `stale_cache` too. Objects already found scripted are not repeated."""
        from physcodegym.probes.branches.resimulation import RESIM_NOISE_FACTOR, RESIM_YOUNG_AGES, edits_after_bake

        doc = self.resimulation_doc()
        done = set(getattr(self, "scripted_objects", {}) or {})
        frames = (np.asarray(doc["frame_numbers"]) if doc.get("frame_numbers") is not None
                  else self.frames[: int(doc.get("frames", 0))])
        how = ("from its first frame" if not doc.get("runs") else
               "in runs restarted from the bake's own state (frames "
               + ", ".join(f"{a}-{b}" for a, b in doc["runs"]) + ")")
        departs = doc.get("departs") or {}
        edits = edits_after_bake(self.program_text) if departs else []
        for key, rec in departs.items():
            particles = key in doc.get("particles", {})
            obj = key.split("/", 1)[0] if particles else key
            if obj in done:
                continue
            d, thr = rec["per_frame"], rec["per_frame_threshold"]
            over = d > thr
            if particles and rec.get("young", {}).get("departs") and rec["young"].get("median_m") is None:
                what = (f"particle system {key!r}: the bake holds another number of particles than the saved scene "
                        "emits (the emission was changed after the bake)")
                value = rec["bulk_max_m"]
            elif particles and rec.get("young", {}).get("departs"):
                what = (f"particle system {key!r}: in their first {RESIM_YOUNG_AGES} frames after birth, before the "
                        "liquid's own chaos has grown, its particles depart from the same particles re-simulated by "
                        f"{rec['young']['median_m']:.3f} m (median)")
                value = rec["young"]["median_m"]
            elif particles:
                what = (f"particle system {key!r}: the bulk of its live particles (their quartiles) departs "
                        f"{rec['bulk_max_m']:.3f} m (frame {rec['bulk_at_frame']}) and its live count by "
                        f"{100 * rec['count_max_rel']:.0f} % "
                        f"({rec['count_baked']} baked vs {rec['count_resimulated']} re-simulated at frame "
                        f"{rec['count_at_frame']})")
                value = rec["bulk_max_m"]
                if rec.get("noise"):
                    nz = rec["noise"]
                    what += (f", over {RESIM_NOISE_FACTOR:g}x what {nz['simulations']} simulations of the saved "
                             f"scene with other particle seeds differ among each other ({nz['spread_max_m']:.3f} m: "
                             "the liquid's own chaos)")
            else:
                what = f"{key}'s baked motion departs {rec['max_m']:.3f} m from it (frame {rec['at_frame']})"
                value = rec["max_m"]
            flight = [f for f in self.findings if f.kind == "scripted_motion" and obj in f.objects
                      and "free_frames_checked" in f.evidence]
            named = self._stale_settings(edits, flight)
            for f in flight:  # the same departure, seen on the frames it flies free
                f.kind = "stale_cache"
                f.message = ("stale cache: " + f.message + "; simulating the saved scene again departs from the "
                             "bake too: the cache was baked before the scene was changed (re-bake it)")
                f.evidence["resimulation_departs_m"] = value
            self.add(
                kind="stale_cache",
                objects=[obj],
                frames=_frange(frames, over) or [rec["first_frame_over"], int(frames[-1])],
                value=value,
                unit="m",
                message=(f"stale cache: the bake is not the saved scene's physics: simulating the saved scene again "
                         f"{how} with nothing changed, {what}; the cache was baked and the scene changed afterwards "
                         f"({named or 'a helper removed or a setting changed; the audit cannot tell which'}): "
                         "re-bake it"),
                evidence={"resimulation": {k: v for k, v in rec.items() if not k.startswith("per_frame")},
                          "changed_after_bake": edits,
                          **({"apparent_gravity": flight[0].evidence["apparent_gravity"]}
                             if flight and flight[0].evidence.get("apparent_gravity") else {}),
                          "series": _series(frames, d, f"{key} bake vs re-simulation", "m", float(np.min(thr)))},
            )
            done.add(obj)

    def _stale_settings(self, edits: list[str], flight: list[Any]) -> str:
        """The settings a stale bake was made with that the saved scene no longer has, in words ('' unknown)."""
        parts = []
        if edits:
            parts.append("the program changes after its bake: " + "; ".join(edits[:4])
                         + (f" (+{len(edits) - 4} more)" if len(edits) > 4 else ""))
        ag = next((f.evidence.get("apparent_gravity") for f in flight if f.evidence.get("apparent_gravity")), None)
        if ag:
            parts.append(f"gravity: the bake falls at {ag['bake_mps2']:.2f} m/s^2 where the saved scene applies "
                         f"{ag['saved_mps2']:.2f} m/s^2 (scene.gravity, the rigid-body world's gravity weight or "
                         "time scale)")
        return "; ".join(parts)

    def not_simulated(self) -> None:
        movers = list(dict.fromkeys([n for n in self.core if self.info[n]["type"] not in ("CAMERA", "LIGHT")]
                                    + [n for n in self.moving if draws(self, n)
                                       and _rendered(self.info[n])]))
        particles_move = self._solver_particles_move()
        # rendered particles that move with no solver (placed, steered) are motion, none of it simulated
        movers += [k.split("/", 1)[0] for k in self.s.particles
                   if self._placed_particles_move(k) and k.split("/", 1)[0] not in movers]
        simulated_any = any(_is_dynamic(i, self.si) for i in self.info.values()) or any(
            ph.solver_modifiers(i) for i in self.info.values())
        if not movers and not particles_move:
            if simulated_any:
                return  # bodies simulated to rest in equilibrium (stacking): nothing to flag
            self.add(
                kind="not_simulated",
                objects=[],
                frames=[int(self.frames[0]), int(self.frames[-1])] if len(self.frames) else [],
                value=0.0,
                unit="m",
                message="nothing moves: the scene is static over the whole frame range",
                evidence={"moving_objects": []},
            )
            return
        if not (set(movers) & self.sim_moved) and not particles_move:
            self.add(
                kind="not_simulated",
                objects=movers,
                frames=[int(self.frames[0]), int(self.frames[-1])],
                value=None,
                unit=None,
                message=(f"no moving object is moved by a simulation ({', '.join(movers)} move only by prescribed "
                         "motion)"),
                evidence={"moving_objects": movers, "scripted": self.scripted_objects},
            )

