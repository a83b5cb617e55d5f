"""Detectors judged by measured effect (`probes.audit.effects`): force fields (`unexplained_force_field`), colliders
that do not render (`hidden_support`), and a bake made on geometry no frame shows (`collider_mismatch`): viewport-only
geometry (re-baked as it renders), or a collider whose Collision modifier sits before modifiers that change what
renders (judged by the measured gap between the two surfaces)."""

from __future__ import annotations

import re
import time
from typing import Any

import numpy as np
from physcodegym.probes.audit.audit_base import (
    PROXY_TOL_MIN,
    PROXY_TOL_REL,
    AuditBase,
    _collision_owner,
    _is_dynamic,
    _rendered,
    _series,
)
from physcodegym.probes.scene import physics as ph
from physcodegym.probes.scene import sources as src

STACK_GAP_M = 0.02  # m: a collision surface this far from the rendered one is a surface no frame shows
MEASURED_FIELDS = 6  # force fields re-baked without them, one branch each (the rest: together, REST_FIELDS)
RENDER_SIDE = "render_side"  # the effects branch re-baked in the render configuration
MEASURED_ALONE = 4  # hidden colliders (and colliders with clear faces) re-baked without them one at a time ...
REST_COLLIDERS = "collider:+rest"  # ... the rest without all of them at once, in one more branch
REST_CLEAR = "clear:+rest"
JOINT_REACH_M = 0.05  # m: a joint's pivot farther than this from a joined body's material links them through nothing
REST_FIELDS = "field:+rest"  # the fields past MEASURED_FIELDS, re-baked without all of them at once
VARY_READS = 24  # frames a driven joint or field setting is read on (keyframed ones: every frame, from the curve)
_OBJ_PATH = re.compile(r"bpy\.data\.objects\[['\"](.+?)['\"]\]")


class FieldDetectors(AuditBase):
    # ================================================================ measured effects
    def _sim_things(self) -> list[str]:
        """Rendered simulated things a field or collider can act on: dynamic bodies, solver meshes, solver particles."""
        out = [n for n, i in self.info.items() if _rendered(i) and (
            _is_dynamic(i, self.si) or set(ph.solver_modifiers(i)) - {"PARTICLES"})]
        for key in self.s.particles:
            em, ps = key.split("/", 1)
            rec = (self.info.get(em, {}).get("physics") or {}).get(f"particles:{ps}", {})
            if rec.get("physics_type", "NEWTON") in ph.SOLVER_PARTICLES and rec.get("render_type") != "NONE":
                out.append(key)
        return out

    def hidden_collider_candidates(self) -> list[str]:
        """Collision owners that do not render, static or dynamic. Emitters and instanced drops are candidates too:
        their branch takes away only their collision (`cf_worker.decollide`), so their particles stay (before,
        they were left out, and a hidden deflector that emitted one unrendered particle was never measured). A
        dynamic one is an invisible pusher (before, left out: an unrendered ball rolled into the dominoes and
        the scene audited clean). Static ones first: they are the likelier holders."""
        out = [n for n, i in self.info.items() if i.get("type") == "MESH" and _collision_owner(i, self.si)
               and not _rendered(i)]
        return sorted(out, key=lambda n: _is_dynamic(self.info[n], self.si))

    def render_side(self) -> None:
        """The scene re-baked as it renders (`probes.scene.render_config`) moves a simulated thing otherwise: the
        physics ran on viewport-only geometry or objects the frames never show (a collider grown by a modifier
        shown in the viewport only, a body disabled in renders...): `collider_mismatch`."""
        acts = self._acts_on(RENDER_SIDE)
        unmeasured = self._unmeasured(RENDER_SIDE) if acts is None else None
        if not acts and unmeasured is None:
            return
        rows = self.si.get("render_divergences") or []
        where = sorted({m.group(1) for r in rows for m in [_OBJ_PATH.match(r.get("path", ""))] if m}
                       | {o for r in rows for o in r.get("objects", [])})
        if unmeasured is not None:  # the scene differs as it renders, and the re-bake that would say how failed
            if not any(f.kind in ("collider_mismatch", "hidden_support", "no_contact_response")
                       and set(where) & set(f.objects) for f in self.findings):
                self.add(kind="collider_mismatch", objects=where or sorted(self._sim_things())[:4],
                         frames=[int(self.frames[0]), int(self.frames[-1])],
                         message=f"the bake used the viewport's scene, which differs from what renders "
                         f"({', '.join(r['path'] for r in rows[:4])}{' ...' if len(rows) > 4 else ''}), and the "
                         f"re-bake as it renders failed ({unmeasured}): counted as changing the motion",
                         evidence={"render_divergences": rows, "unmeasured": unmeasured})
            return
        eff = self.effects[RENDER_SIDE]["effects"]  # type: ignore[index]
        measured = {t: {k: v for k, v in e.items() if k != "per_frame"} for t, e in eff.items()}
        same = [f for f in self.findings if f.kind in ("collider_mismatch", "hidden_support", "no_contact_response")
                and set(where) & set(f.objects)]
        if same:  # already named from the geometry: the re-bake is its measured evidence
            for f in same:
                f.evidence["measured_rendered_configuration"] = measured
            return
        worst = max((e.get("max_deviation_m") or e.get("particles_median_m") or 0.0) for e in eff.values() if e["acts"])
        objs = sorted({t.split("/", 1)[0] for t in acts})
        self.add(
            kind="collider_mismatch",
            objects=[*objs, *[w for w in where if w not in objs]],
            frames=[int(self.frames[0]), int(self.frames[-1])],
            value=float(worst),
            unit="m",
            message=f"the bake used the viewport's scene, which differs from what renders "
            f"({', '.join(r['path'] for r in rows[:4])}{' ...' if len(rows) > 4 else ''}); baked as it renders, "
            f"{acts} move up to {worst:.3f} m otherwise",
            evidence={"render_divergences": rows, "measured": measured},
        )

    def clear_face_colliders(self) -> list[str]:
        """Rendered, static colliders with faces whose material renders nothing (`MeshGeom.clear_tris`): those
        faces collide like a hidden collider (a clear plate in the table's mesh, a clear wall in a tray's)."""
        return [n for n, mg in self.geom.meshes.items() if mg.clear_tris and n in self.info
                and _collision_owner(self.info[n], self.si) and _rendered(self.info[n])
                and not _is_dynamic(self.info[n], self.si)]

    def start_effects(self) -> None:
        """Plan one counterfactual branch per force field and per hidden collider (one worker, one re-bake each)
        and start their worker; `measure_effects` reads it. They need only the samples, the measured visibility
        and the saved scene, so `probes.audit.audit.audit_scene` starts them before it checks the handed-in frames."""
        from physcodegym.tasks.schema import Intervention, InterventionKind

        self.effects_doc: dict[str, Any] = {"ran": False}
        self._effects_run: Any = None
        things = self._sim_things()
        if not things or self.blend is None:
            self.effects_doc["reason"] = "nothing simulated to act on" if not things else "no saved scene to re-bake"
            return
        branches = []
        for f in self.fields[:MEASURED_FIELDS]:
            o = f["field"]
            branches.append({"label": f"field:{o}",
                             "interventions": [Intervention(kind=InterventionKind.disable_field, roles=[o])],
                             "mapping": {o: o}})
        rest_fields = [f["field"] for f in self.fields[MEASURED_FIELDS:]]
        if rest_fields:  # decoy fields first must not leave the one that acts unmeasured (or credited unmeasured)
            branches.append({"label": REST_FIELDS,
                             "interventions": [Intervention(kind=InterventionKind.disable_field, roles=rest_fields)],
                             "mapping": {o: o for o in rest_fields}})
        hidden = self.hidden_collider_candidates()
        for o in hidden[:MEASURED_ALONE]:  # its collision taken away, the object kept (cf_worker.decollide)
            branches.append({"label": f"collider:{o}", "interventions": [], "decollide": [o]})
        rest = hidden[MEASURED_ALONE:]
        if rest:  # decoys first must not hide the one that acts: the rest go together in one more branch
            branches.append({"label": REST_COLLIDERS, "interventions": [], "decollide": rest})
        clear = self.clear_face_colliders()
        for o in clear[:MEASURED_ALONE]:
            branches.append({"label": f"clear:{o}", "interventions": [], "strip_clear": [o]})
        if clear[MEASURED_ALONE:]:
            branches.append({"label": REST_CLEAR, "interventions": [], "strip_clear": clear[MEASURED_ALONE:]})
        if self.si.get("render_divergences"):
            branches.append({"label": RENDER_SIDE, "interventions": [], "render_side": True})
        for kind, holders in self.joint_groups().items():  # one branch per joint type: admission is by type
            branches.append({"label": f"joint:{kind}",
                             "interventions": [Intervention(kind=InterventionKind.disable_joint, roles=holders)],
                             "mapping": {h: h for h in holders}})
        if not branches:
            self.effects_doc["reason"] = "no force field, no hidden collider (or clear faces) and no joint"
            return
        from physcodegym.probes.audit.effects import PendingEffects

        self._effects_t0 = time.perf_counter()
        self.effects_doc["planned"] = [b["label"] for b in branches]
        self._effects_run = PendingEffects(self.blend, self.s, branches, things,
                                           with_control=any("/" in x for x in things))

    def measure_effects(self) -> None:
        """Read the branches `start_effects` started (started here when it was not called)."""
        if not hasattr(self, "_effects_run"):
            self.start_effects()
        if self._effects_run is None:
            return
        t = self._effects_t0
        doc = self._effects_run.result()
        if not doc.get("ok"):
            self.effects_doc.update(ran=False, reason=doc.get("reason"))
            return
        rows = doc["branches"]
        if "control" in doc:
            self.effects_doc["control"] = doc["control"]
        self.effects = rows
        self.effects_doc.update(ran=True, seconds=round(time.perf_counter() - t, 3),
                                branches={k: {"ok": v["ok"], "errors": v["errors"],
                                              "acts_on": sorted(t_ for t_, e in v["effects"].items() if e["acts"]),
                                              "effects": {
                                                  t_: {kk: vv for kk, vv in e.items() if kk != "per_frame"}
                                                  for t_, e in v["effects"].items()}}
                                          for k, v in rows.items()})

    def joint_groups(self) -> dict[str, list[str]]:
        """Constraint type -> holders of the enabled rigid-body constraints that attach a dynamic body."""
        out: dict[str, list[str]] = {}
        for n, recs in self.constrained.items():
            if n not in self.info or not _is_dynamic(self.info[n], self.si):
                continue
            for r in recs:
                out.setdefault(r["type"], [])
                if r["holder"] not in out[r["type"]]:
                    out[r["type"]].append(r["holder"])
        return {k: sorted(v) for k, v in sorted(out.items())}

    def actuators(self) -> None:
        """What every joint type and force field measurably does (`meta["actuators"]`): the task's rubric admits
        some types (`Rubric.admitted_types`) and charges the others that act (`verifier.rubric_eval`)."""
        rows: list[dict[str, Any]] = []
        for kind, holders in self.joint_groups().items():
            joined = sorted({o for n, recs in self.constrained.items() for r in recs if r["holder"] in holders
                             for o in (r["object1"], r["object2"]) if o})
            rows.append({"what": "joint", "type": kind, "objects": holders, "joins": joined,
                         "varies": self.varying_settings(holders, "rigid_body_constraint."),
                         **self._measured(f"joint:{kind}")})
        for f in self.fields:
            rows.append({"what": "field", "type": f["type"], "objects": [f["field"]], "strength": f["strength"],
                         "targets": list(f["targets"]), "last_active_frame": f.get("last_active_frame"),
                         "start_frame": int(self.scene.frame_start),
                         "varies": self.varying_settings([f["field"]], "field."),
                         **self._measured(f"field:{f['field']}")})
        self.actuators_doc = rows

    def varying_settings(self, names: list[str], prefix: str) -> list[dict[str, Any]]:
        """Settings under `prefix` (a joint's `rigid_body_constraint.`, a field's `field.`) of the objects `names`
        that change during the run, keyed or driven: [{"path", "first", "last", "min", "max", "changes"}]. An
        actuator whose setting changes mid-run (a motor whose target velocity follows the swing, a field whose
        strength is keyed) is scripted whatever its effect: a motor that replays the free swing changes nothing a
        re-bake without it could see. Keyframes are read from their F-curves on every frame of the run; a driven
        setting is read on `VARY_READS` frames spread over it (then the scene is put back on its frame)."""
        from physcodegym.probes.scene.sources import object_fcurves

        if not len(self.frames):
            return []
        f0, f1 = int(self.frames[0]), int(self.frames[-1])
        out: list[dict[str, Any]] = []
        for n in names:
            ob = self.scene.objects.get(n)
            if ob is None or ob.animation_data is None:
                continue
            curves = [(fc, False) for fc in object_fcurves(ob)] + [(fc, True) for fc in ob.animation_data.drivers]
            seen: set[tuple[str, int]] = set()
            for fc, driven in curves:
                key = (fc.data_path, int(fc.array_index))
                if not fc.data_path.startswith(prefix) or key in seen or getattr(fc, "mute", False):
                    continue
                seen.add(key)
                if driven:
                    at = sorted({int(round(x)) for x in np.linspace(f0, f1, VARY_READS)})
                    vals = self._read_at(ob, fc.data_path, fc.array_index, at)
                else:
                    at = list(range(f0, f1 + 1))
                    vals = [float(fc.evaluate(f)) for f in at]
                a = np.asarray(vals, dtype=float)
                if len(a) < 2 or not np.all(np.isfinite(a)):
                    continue
                ch = np.nonzero(np.abs(np.diff(a)) > 1e-6 * np.maximum(1.0, np.abs(a[:-1])))[0]
                if not len(ch):
                    continue
                path = fc.data_path + (f"[{fc.array_index}]" if fc.array_index else "")
                out.append({"object": n, "path": path, "how": "driven" if driven else "keyframed",
                            "first": round(float(a[0]), 6), "last": round(float(a[-1]), 6),
                            "min": round(float(a.min()), 6), "max": round(float(a.max()), 6),
                            "changes": [int(at[ch[0] + 1]), int(at[ch[-1] + 1])]})
        return out

    def _read_at(self, ob: Any, path: str, index: int, frames: list[int]) -> list[float]:
        """The value of `ob.path[index]` on each frame (the scene is put back on the frame it was on)."""
        sc = self.scene
        keep = sc.frame_current
        vals = []
        try:
            for f in frames:
                sc.frame_set(f)
                try:
                    v = ob.evaluated_get(self.bpy.context.evaluated_depsgraph_get()).path_resolve(path)
                    vals.append(float(v[index]) if hasattr(v, "__len__") else float(v))
                except (ValueError, TypeError, IndexError, AttributeError):
                    vals.append(float("nan"))
        finally:
            sc.frame_set(keep)
        return vals

    def _measured(self, label: str) -> dict[str, Any]:
        """{"acts_on": things it changes (None: not measured), "max_effect_m": the largest change}."""
        acts = self._acts_on(label)
        if acts is None:
            why = (self.effects_doc or {}).get("reason") or "not measured (more than the measured branches)"
            return {"acts_on": None, "max_effect_m": None, "unmeasured_reason": why}
        eff = self.effects[self._branch(label)]["effects"]  # type: ignore[index]
        worst = max([e.get("max_deviation_m") or e.get("particles_median_m") or 0.0 for e in eff.values()
                     if e["acts"]], default=0.0)
        return {"acts_on": acts, "max_effect_m": round(float(worst), 5),
                **({"measured_with": REST_FIELDS} if self._branch(label) == REST_FIELDS else {})}

    def _branch(self, label: str) -> str:
        """The effects branch that measured `label`: its own, or the shared one of the fields past MEASURED_FIELDS
        (each of those is credited with what removing all of them changes)."""
        known = self.effects if self.effects is not None else (getattr(self, "effects_doc", None) or {}).get(
            "planned") or []
        if label.startswith("field:") and label not in known and REST_FIELDS in known:
            return REST_FIELDS
        return label

    def _unmeasured(self, label: str) -> str | None:
        """Why a planned effects branch has no measurement (it crashed, timed out, or the control re-bake
        failed), or None when it was measured or never planned. The caller counts such a branch as acting: a
        scene made too slow or too fragile to re-bake must not pass the checks that need a re-bake."""
        if self.effects is None:
            doc = getattr(self, "effects_doc", None) or {}
            planned = doc.get("planned") or []
            return str(doc.get("reason")) if self._branch(label) in planned and not doc.get("ran") else None
        row = self.effects.get(self._branch(label))
        if row is None or row["ok"]:
            return None
        return "; ".join(row.get("errors") or []) or "the branch produced no samples"

    def _acts_on(self, label: str) -> list[str] | None:
        """Things a field / collider measurably changes (None: not measured)."""
        label = self._branch(label)
        if self.effects is None or label not in self.effects or not self.effects[label]["ok"]:
            return None
        return sorted(t for t, e in self.effects[label]["effects"].items() if e["acts"])

    def hidden_colliders(self) -> None:
        """A collider that does not render and changes what a rigid body, cloth or particles do: `hidden_support`
        (also the faces of a rendered collider whose material renders nothing). Past the first MEASURED_ALONE,
        the candidates were measured together: one finding names them all."""
        clear = self.clear_face_colliders()
        for i, c in enumerate(clear):
            if i == MEASURED_ALONE:
                rest = clear[MEASURED_ALONE:]
                self._hidden_holder(REST_CLEAR, rest, "faces with a material that renders nothing",
                                    ("hidden_support", "collider_mismatch"), "measured_without_clear_faces",
                                    f"faces of {rest} whose material renders nothing change", 2)
                break
            n = self.geom.meshes[c].clear_tris
            self._hidden_holder(f"clear:{c}", [c], f"{n} triangles with a material that renders nothing",
                                ("hidden_support", "collider_mismatch"), "measured_without_clear_faces",
                                f"{n} triangles of {c!r} have a material that renders nothing, and they change", n)
        hidden = self.hidden_collider_candidates()
        for c in hidden[:MEASURED_ALONE]:
            how = ph.hidden_how(self.info[c])
            self._hidden_holder(f"collider:{c}", [c], how, ("hidden_support",), "measured_without_holder",
                                f"{c!r} is a collider that does not render ({how}) and changes")
        rest = hidden[MEASURED_ALONE:]
        if rest:
            how = "; ".join(f"{c}: {ph.hidden_how(self.info[c])}" for c in rest)
            self._hidden_holder(REST_COLLIDERS, rest, how, ("hidden_support",), "measured_without_holder",
                                f"colliders that do not render ({', '.join(map(repr, rest))}, measured together) "
                                "change", 2)

    def _hidden_holder(self, label: str, holders: list[str], how: str, named_by: tuple[str, ...],
                       evidence_key: str, says: str, n_parts: int = 1) -> None:
        """`hidden_support` for what the effects branch `label` measured (colliders, or parts of one, that do not
        render); where a geometry detector already named one of `holders`, the measured effect goes into its
        evidence. A branch that was planned and has no measurement (crash, timeout) counts as acting."""
        acts = self._acts_on(label)
        unmeasured = self._unmeasured(label) if acts is None else None
        if not acts and unmeasured is None:
            return
        same = [f for f in self.findings if f.kind in named_by and set(holders) & set(f.objects)]
        holder = holders[0] if len(holders) == 1 else holders
        if unmeasured is not None:
            if same:
                for f in same:
                    f.evidence[evidence_key] = {"unmeasured": unmeasured}
                return
            self.add(
                kind="hidden_support",
                objects=list(holders),
                frames=[int(self.frames[0]), int(self.frames[-1])],
                message=f"{says} the simulation as far as can be told: the re-bake without "
                f"{'them' if n_parts > 1 else 'it'} failed ({unmeasured}), and a collider that does not render "
                "counts as acting when its effect cannot be measured",
                evidence={"holder": holder, "hidden_how": how, "unmeasured": unmeasured},
            )
            return
        eff = self.effects[label]["effects"]  # type: ignore[index]
        measured = {t: {k: v for k, v in e.items() if k != "per_frame"} for t, e in eff.items()}
        if same:
            for f in same:
                f.evidence[evidence_key] = measured
            return
        worst = max((e.get("max_deviation_m") or e.get("particles_median_m") or 0.0) for e in eff.values() if e["acts"])
        self.add(
            kind="hidden_support",
            objects=[*sorted({t.split("/", 1)[0] for t in acts}), *holders],
            frames=[int(self.frames[0]), int(self.frames[-1])],
            value=float(worst),
            unit="m",
            message=f"{says} the motion of {acts} (up to {worst:.3f} m without {'them' if n_parts > 1 else 'it'})",
            evidence={"holder": holder, "hidden_how": how, "measured": measured},
        )

    def hidden_anchors(self) -> None:
        """A rendered dynamic body held by a rigid-body joint to something no frame shows, where removing that
        joint type changes its motion (or the re-bake could not say): `hidden_support`, whatever the rubric admits
        about the joint type (a HINGE is admitted, an invisible anchor or an invisible link is not). Two ways:

        - the other object does not render (a pendulum on a hinge to an invisible pivot);
        - both render, but the joint's pivot is more than `JOINT_REACH_M` from the material of one of them at the
          start (a ball hung by a point joint from a post two metres away, a block glued to a wall it does not
          touch): the link between them is nothing that renders. A joint acts at its pivot, fixed relative to
          both bodies from the first simulated frame, so the material that carries it must reach the pivot from
          both sides."""
        for n, recs in sorted(self.constrained.items()):
            info = self.info.get(n)
            if info is None or not _rendered(info) or not _is_dynamic(info, self.si):
                continue
            for r in recs:
                other = r["object2"] if r["object1"] == n else r["object1"]
                if not other or other not in self.info:
                    continue
                gap = None
                if _rendered(self.info[other]):
                    gap = self._joint_gap(r)
                    if gap is None or gap[0] <= JOINT_REACH_M:
                        continue
                label = f"joint:{r['type']}"
                acts = self._acts_on(label)
                unmeasured = self._unmeasured(label) if acts is None else None
                if not ((acts and n in acts) or unmeasured is not None):
                    continue
                if any(f.kind == "hidden_support" and n in f.objects and other in f.objects for f in self.findings):
                    continue
                eff = (self.effects or {}).get(self._branch(label), {}).get("effects", {}).get(n, {})
                measured = (f"without that joint type it moves up to {eff['max_deviation_m']:.3f} m otherwise"
                            if eff.get("max_deviation_m") is not None else
                            f"its effect could not be measured ({unmeasured}), so it counts as holding")
                ev = {"holder": r["holder"], "joint": r["type"], "anchor": other,
                      "measured": {k: v for k, v in eff.items() if k != "per_frame"} or None, "unmeasured": unmeasured}
                if gap is None:
                    how = ph.hidden_how(self.info[other])
                    message = (f"{n} is held by a {r['type']} joint ({r['holder']}) to {other!r}, which does not "
                               f"render ({how}): {measured}")
                    ev["hidden_how"] = how
                else:
                    message = (f"{n} is held by a {r['type']} joint ({r['holder']}) to {other!r} whose pivot is "
                               f"{gap[0]:.3f} m from the material of {gap[1]!r}: nothing that renders links them; "
                               + measured)
                    ev |= {"pivot_gap_m": round(gap[0], 4), "pivot_far_from": gap[1], "reach_m": JOINT_REACH_M}
                self.add(kind="hidden_support", objects=[n, other], frames=[int(self.frames[0]), int(self.frames[-1])],
                         value=eff.get("max_deviation_m") if gap is None else round(gap[0], 4),
                         unit="m" if gap is not None or eff.get("max_deviation_m") is not None else None,
                         message=message, evidence=ev)

    def _joint_gap(self, r: dict[str, Any]) -> tuple[float, str] | None:
        """(largest distance from the joint's pivot to the material of the objects it joins, that object) on the
        first sampled frame; None when the pivot or a joined mesh is not known (nothing to judge)."""
        holder, f0 = r["holder"], int(self.frames[0])
        if holder not in self.s.names:
            return None
        p = self.s.matrices[self.s.index(holder)][0][:3, 3].astype(np.float64)[None, :]
        worst: tuple[float, str] | None = None
        for o in (r["object1"], r["object2"]):
            if o not in self.geom.meshes:
                return None
            reach = 4.0 * JOINT_REACH_M + 10.0
            d = min(float(self.geom.nearest_distances(o, f0, p, reach)[0]), reach)  # farther: at least `reach`
            if self.geom.inside_depth(o, f0, p, reach)[0] > 0:
                d = 0.0
            if worst is None or d > worst[0]:
                worst = (d, o)
        return worst

    def collision_stacks(self) -> None:
        """A rendered collider whose Collision modifier is followed by modifiers that move its rendered surface
        more than `STACK_GAP_M` from the one it collides with (`probes.scene.physics.post_collision_modifiers`), or a
        rigid body whose hull or mesh shape is built from a mesh source that skips such modifiers
        (`probes.scene.physics.rigid_source_modifiers`), measured by the solvers-off worker
        (`cf_worker.collision_stack_gaps`), with a simulated thing coming within that gap of it, or the rigid body
        itself moving: the thing rests on, or sinks into, a surface no frame shows (`collider_mismatch`).
        Judged by geometry, not by a re-bake colliding as it renders: such a re-bake can be made arbitrarily slow
        (a teapot shrunk 8 cm along its normals turns inside out and took the cloth solver over 600 s)."""
        gaps = getattr(self, "stack_gaps", None) or {}
        for c, g in sorted(gaps.items()):
            gap = g.get("gap_m")
            rigid = str(g.get("how", "")).startswith("rigid")
            # a body's own hull is held to the proxy tolerance, max(1 cm, 10 % of its size): a coarse base mesh under a
            # Subdivision is a shape mismatch as a primitive proxy's would be, and a bead 2 cm across on a hidden
            # stilt 1.5 cm long stands on air
            tol = max(PROXY_TOL_MIN, PROXY_TOL_REL * ph.size(self.info.get(c, {}))) if rigid else STACK_GAP_M
            if gap is None or gap <= tol or c not in self.geom.meshes:
                continue
            g = {**g, "tolerance_m": round(tol, 5)}
            near = self._near(c, gap + STACK_GAP_M)
            if rigid and c in self.moving and _is_dynamic(self.info.get(c, {}), self.si):
                near = sorted({*near, c})  # a body that moves was moved by its collision with geometry no frame shows
            if not near:
                continue
            same = [f for f in self.findings if f.kind in ("collider_mismatch", "hidden_support") and c in f.objects]
            if same:
                for f in same:
                    f.evidence["collision_stack"] = g
                continue
            after = ", ".join(repr(a) for a in g.get("after", []))
            self.add(
                kind="collider_mismatch",
                objects=[*near, c] if c not in near else near,
                frames=[int(self.frames[0]), int(self.frames[-1])],
                value=float(gap),
                unit="m",
                message=(f"{c!r} collides as its mesh before {after}, which render"
                         + (f" ({g['how']})" if rigid else "")
                         + f": its collision surface lies up to {gap:.3f} m from the surface every frame shows, and "
                         + (f"{c!r} moves" if near == [c] else f"{near} come that close to it")),
                evidence={"collision_stack": g, "near": near, "gap_tol_m": STACK_GAP_M},
            )

    def _near(self, c: str, pad: float) -> list[str]:
        """Rendered simulated things (objects; particle systems by emitter) that come within `pad` of the world box
        of the static mesh `c` on some sampled frame."""
        box = self.geom.aabbs(c)[0]
        lo, hi = box[0] - pad, box[1] + pad
        out = []
        for t in self._sim_things():
            if "/" in t:
                p = self.s.particles.get(t)
                alive = self.s.particles_alive.get(t)
                if p is None:
                    continue
                ins = np.all((p >= lo) & (p <= hi), axis=-1)
                if alive is not None and alive.shape == ins.shape:
                    ins &= alive
                if ins.any():
                    out.append(t.split("/", 1)[0])
            elif t in self.geom.meshes and t != c and self.geom.aabb_overlap_frames(t, c, pad).any():
                out.append(t)
        return sorted(set(out))

    # ================================================================ force fields
    def force_fields(self) -> None:
        core = set(self.core)
        for f in self.fields:
            acts = self._acts_on(f"field:{f['field']}")
            if acts is not None:  # measured: a field is judged by what it changes (particles count like bodies)
                hit = sorted({t.split("/", 1)[0] for t in acts})
                if not hit or not src.attractor_like(f):
                    continue
                self._field_finding(f, hit, f"steers {acts}: without it they move differently",
                                    {"field": f, "measured": self.effects_doc.get("branches", {}).get(
                                        self._branch(f"field:{f['field']}"))})
                continue
            hit = [t for t in f["targets"] if t in core]
            if not hit or not src.attractor_like(f) or f["strength"] == 0 and f["type"] not in ("GUIDE", "BOID"):
                continue
            fl = self.s.locations(f["field"]) if f["field"] in self.s.names else None
            dist = {}
            if fl is not None:
                for t in hit:
                    dist[t] = float(np.min(np.linalg.norm(self.s.locations(t) - fl, axis=1)))
            if f["use_max_distance"]:
                hit = [t for t in hit if dist.get(t, 0.0) <= f["distance_max"]]
                if not hit:
                    continue
            ev: dict[str, Any] = {"field": f, "min_distance_m": dist}
            if fl is not None and hit:
                ev["series"] = _series(self.frames, np.linalg.norm(self.s.locations(hit[0]) - fl, axis=1),
                                       f"{hit[0]} to {f['field']}", "m")
            self._field_finding(f, hit, f"steers moving objects {hit}", ev)

    def _field_finding(self, f: dict[str, Any], hit: list[str], what: str, evidence: dict[str, Any]) -> None:
        self.add(kind="unexplained_force_field", objects=[f["field"], *hit],
                 frames=[int(self.frames[0]), int(self.frames[-1])], value=f["strength"], unit="field strength",
                 message=f"{f['type']} field {f['field']!r} (strength {f['strength']:g}) {what}", evidence=evidence)

