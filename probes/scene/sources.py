"""Where motion comes from: animation (Blender 5 layered actions and the legacy path), drivers,
prescriptive constraints, kinematic rigid bodies, force fields and their targets, and handlers
(from the program text by AST, and live in `bpy.app.handlers`).

Handlers do not survive in a `.blend`, so the program scan is the only way to see them after the
fact; the live scan serves the Blender panel, where the program has just run in this process.
"""

from __future__ import annotations

import ast
from typing import Any

TRANSFORM_PATHS = {
    "location",
    "rotation_euler",
    "rotation_quaternion",
    "rotation_axis_angle",
    "scale",
    "delta_location",
    "delta_rotation_euler",
    "delta_rotation_quaternion",
    "delta_scale",
    "matrix_world",
    "matrix_basis",
    "matrix_local",
}
# Constraints that prescribe where an object is (rather than limit it).
PRESCRIPTIVE_CONSTRAINTS = {
    "FOLLOW_PATH",
    "CLAMP_TO",
    "CHILD_OF",
    "COPY_LOCATION",
    "COPY_ROTATION",
    "COPY_TRANSFORMS",
    "TRANSFORM",  # bpy 5.0 name of the Transformation constraint
    "PIVOT",
    "SHRINKWRAP",
    "ARMATURE",
    "ACTION",
    "TRACK_TO",
    "DAMPED_TRACK",
    "LOCKED_TRACK",
    "STRETCH_TO",
}
SIM_MODIFIERS = {"CLOTH", "SOFT_BODY", "FLUID", "DYNAMIC_PAINT", "OCEAN", "EXPLODE", "PARTICLE_SYSTEM"}
HANDLER_EVENTS = ("frame_change_pre", "frame_change_post", "depsgraph_update_pre", "depsgraph_update_post")
# Field types that steer rather than push like a physical medium.
ATTRACTOR_LIKE = {"GUIDE", "HARMONIC", "BOID", "CHARGE", "LENNARDJ", "MAGNET"}
MEDIUM_FIELDS = {"WIND", "TURBULENCE", "DRAG", "FLUID_FLOW", "TEXTURE", "VORTEX"}


# ---------------------------------------------------------------------------- animation
def _action_fcurves(act: Any, slot: Any) -> list[Any]:
    """F-curves of an action for one slot: layered (5.x) layers -> strips -> channelbag, else legacy."""
    out: list[Any] = []
    if act is None:
        return out
    legacy = getattr(act, "fcurves", None)
    if legacy is not None and not getattr(act, "is_action_layered", False):
        return list(legacy)
    for layer in getattr(act, "layers", []):
        for strip in layer.strips:
            try:
                cb = strip.channelbag(slot) if slot is not None else None
            except Exception:
                cb = None
            if cb is None and slot is None:
                for cb2 in getattr(strip, "channelbags", []):
                    out.extend(cb2.fcurves)
                continue
            if cb is not None:
                out.extend(cb.fcurves)
    return out


def object_fcurves(ob: Any) -> list[Any]:
    """Every animation F-curve on an object: active action and NLA strips."""
    ad = ob.animation_data
    if ad is None:
        return []
    fcs = _action_fcurves(ad.action, getattr(ad, "action_slot", None))
    for track in ad.nla_tracks:
        if track.mute:
            continue
        for st in track.strips:
            if st.action is not None and not st.mute:
                fcs.extend(_action_fcurves(st.action, getattr(st, "action_slot", None)))
    return fcs


def _fcurve_varies(fc: Any, f0: int, f1: int) -> bool:
    kp = fc.keyframe_points
    if len(kp) >= 2:
        vals = [k.co[1] for k in kp]
        if max(vals) - min(vals) > 1e-6:
            return True
    if len(fc.modifiers):
        step = max(1, (f1 - f0) // 24)
        vals = [fc.evaluate(f) for f in range(f0, f1 + 1, step)]
        return max(vals) - min(vals) > 1e-6
    return False


def motion_sources(ob: Any, scene: Any) -> dict[str, Any]:
    """What can move this object natively: animated transform channels, drivers, constraints,
    rigid body (type, kinematic and whether kinematic is animated), simulation modifiers, parent."""
    f0, f1 = scene.frame_start, scene.frame_end
    anim, kin_curve, en_curve = [], None, None
    for fc in object_fcurves(ob):
        base = fc.data_path.split(".")[-1]
        if fc.data_path == "rigid_body.kinematic":
            kin_curve = fc
        elif fc.data_path == "rigid_body.enabled":
            en_curve = fc
        elif base in TRANSFORM_PATHS and _fcurve_varies(fc, f0, f1):
            anim.append({"path": fc.data_path, "index": fc.array_index, "keys": len(fc.keyframe_points)})
    drivers = []
    if ob.animation_data is not None:
        for d in ob.animation_data.drivers:
            base = d.data_path.split(".")[-1]
            if base in TRANSFORM_PATHS or d.data_path.startswith("rigid_body"):
                drivers.append({"path": d.data_path, "index": d.array_index, "expression": d.driver.expression})
    cons = [
        {"name": c.name, "type": c.type, "target": getattr(getattr(c, "target", None), "name", None)}
        for c in ob.constraints
        if c.enabled and c.type in PRESCRIPTIVE_CONSTRAINTS and getattr(c, "influence", 1.0) > 0
    ]
    rb = ob.rigid_body
    kin_frames: list[int] = []
    # frames the solver does not move an active body: kinematic, or switched off by an animated `enabled`
    # (a body switched off stays where it is: a hold, like a kinematic one)
    if rb is not None and rb.type == "ACTIVE" and (rb.enabled or en_curve is not None):
        for f in range(f0, f1 + 1):
            kinematic = kin_curve.evaluate(f) > 0.5 if kin_curve is not None else bool(rb.kinematic)
            off = en_curve is not None and en_curve.evaluate(f) < 0.5
            if kinematic or off:
                kin_frames.append(f)
    derived = _derived_from(ob)
    sims = [m.type for m in ob.modifiers if m.type in SIM_MODIFIERS]
    if len(ob.particle_systems):
        sims.append("PARTICLE_SYSTEM")
    return {
        "animated_transforms": anim,
        "drivers": drivers,
        "constraints": cons,
        "rigid_body": None if rb is None else {"type": rb.type, "enabled": bool(rb.enabled),
                                               "kinematic": bool(rb.kinematic)},
        "kinematic_frames": kin_frames,
        "sim_modifiers": sims,
        "parent": ob.parent.name if ob.parent else None,
        "derived_from": derived,
    }


def _driver_targets(idb: Any) -> list[str]:
    out = []
    ad = getattr(idb, "animation_data", None) if idb is not None else None
    if ad is None:
        return out
    for d in ad.drivers:
        for v in d.driver.variables:
            for t in v.targets:
                if t.id is not None and getattr(t.id, "type", None) is not None and t.id.__class__.__name__ == "Object":
                    out.append(t.id.name)
    return out


def _derived_from(ob: Any) -> list[str]:
    """Objects whose motion this object's motion can follow: parent, constraint targets, driver variables
    (object, data, shape keys), deform objects of modifiers (hooks, armatures, lattices, curves...)."""
    out: list[str] = []
    if ob.parent is not None:
        out.append(ob.parent.name)
    for c in ob.constraints:
        for attr in ("target", "pole_target"):
            t = getattr(c, attr, None)
            if t is not None:
                out.append(t.name)
        for t in getattr(c, "targets", []) or []:  # armature constraint
            if getattr(t, "target", None) is not None:
                out.append(t.target.name)
    for m in ob.modifiers:
        for attr in ("object", "target", "offset_object", "mirror_object", "start_cap", "end_cap", "auxiliary_target"):
            t = getattr(m, attr, None)
            if t is not None and t.__class__.__name__ == "Object":
                out.append(t.name)
    out += _driver_targets(ob)
    out += _driver_targets(getattr(ob, "data", None))
    sk = getattr(getattr(ob, "data", None), "shape_keys", None)
    out += _driver_targets(sk)
    return list(dict.fromkeys(out))


def rigid_body_constrained(scene: Any) -> dict[str, list[dict[str, Any]]]:
    """Object name -> rigid body constraints that attach it (hinges, motors...)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for ob in scene.objects:
        c = ob.rigid_body_constraint
        if c is None or not c.enabled:
            continue
        rec = {
            "holder": ob.name,
            "type": c.type,
            "object1": c.object1.name if c.object1 else None,
            "object2": c.object2.name if c.object2 else None,
            "motor": bool(getattr(c, "use_motor_lin", False) or getattr(c, "use_motor_ang", False))
            or c.type == "MOTOR",
        }
        for n in (rec["object1"], rec["object2"]):
            if n:
                out.setdefault(n, []).append(rec)
    return out


# ---------------------------------------------------------------------------- fields
def _weights_allow(ew: Any, field_ob: Any, ftype: str) -> bool:
    if ew is None:
        return True
    if ew.collection is not None and field_ob.name not in ew.collection.all_objects:
        return False
    if ew.all == 0:
        return False
    w = getattr(ew, ftype.lower(), None)
    if ftype == "FORCE":
        w = ew.force
    elif ftype == "LENNARDJ":
        w = ew.lennardjones
    return w is None or w != 0


def fields_and_targets(scene: Any) -> list[dict[str, Any]]:
    """Every force field with the objects it can act on (rigid bodies via the rigid-body world's
    effector weights, cloth / soft body / particles via their own), respecting collections and weights."""
    fields = [ob for ob in scene.objects if ob.field is not None and ob.field.type != "NONE"]
    if not fields:
        return []
    rbw = scene.rigidbody_world
    rb_members = set(rbw.collection.all_objects.keys()) if rbw and rbw.collection else set()
    out = []
    for fob in fields:
        f = fob.field
        targets = []
        for ob in scene.objects:
            if ob is fob:
                continue
            ew = None
            if ob.name in rb_members and ob.rigid_body is not None and ob.rigid_body.type == "ACTIVE":
                ew = rbw.effector_weights
            else:
                for m in ob.modifiers:
                    if m.type == "CLOTH":
                        ew = m.settings.effector_weights
                    elif m.type == "SOFT_BODY":
                        ew = m.settings.effector_weights
                for ps in ob.particle_systems:
                    ew = ps.settings.effector_weights
                if ew is None:
                    continue
            if _weights_allow(ew, fob, f.type):
                targets.append(ob.name)
        out.append(
            {
                "field": fob.name,
                "type": f.type,
                "strength": float(f.strength),
                "shape": f.shape,
                "use_max_distance": bool(f.use_max_distance),
                "distance_max": float(f.distance_max),
                "targets": targets,
                "last_active_frame": field_last_active_frame(fob, scene),
            }
        )
    return out


def field_last_active_frame(ob: Any, scene: Any) -> int | None:
    """The last frame of the scene on which a field's strength is not zero, read from its keyframes in the active
    action; None when it is not keyframed that way (a constant, NLA or driven strength: taken to act throughout).
    A field that is off after the first frames gave an initial push, like a kinematic hand-off."""
    ad = getattr(ob, "animation_data", None)
    if ad is None or ad.action is None or len(ad.drivers) or len(ad.nla_tracks):
        return None
    try:
        from bpy_extras import anim_utils

        bag = anim_utils.action_get_channelbag_for_slot(ad.action, ad.action_slot)
    except Exception:  # noqa: BLE001 - a layout this reader does not know: treated as acting throughout
        return None
    fc = bag.fcurves.find("field.strength") if bag is not None else None
    if fc is None:
        return None
    last = None
    for f in range(int(scene.frame_start), int(scene.frame_end) + 1):
        if abs(fc.evaluate(f)) > 1e-9:
            last = f
    return last if last is not None else int(scene.frame_start) - 1


def attractor_like(field: dict[str, Any]) -> bool:
    """Fields that steer bodies toward places instead of acting like a medium or a push."""
    t = field["type"]
    return t in ATTRACTOR_LIKE or (t == "FORCE" and field["strength"] < 0)


# ---------------------------------------------------------------------------- handlers
_MOTION_ATTRS = TRANSFORM_PATHS | {"co", "keyframe_insert", "frame_set"}


def _attr_chain(node: ast.AST) -> list[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return parts[::-1]


def scan_program_handlers(text: str) -> list[dict[str, Any]]:
    """Handlers a program registers (frame-change / depsgraph) and what they write.

    Returns one record per registration: event, function, line, whether its body writes transforms
    or vertex coordinates (`moves`), the attributes written and object names it names by string.
    Unparseable text gives one record with `error` so the caller can report it, never a silent pass.
    """
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        return [{"event": None, "function": None, "line": e.lineno, "error": f"syntax error: {e.msg}", "moves": False}]
    funcs: dict[str, ast.AST] = {}
    aliases: dict[str, str] = {}  # h = bpy.app.handlers.frame_change_pre
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            funcs[node.name] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            ch = _attr_chain(node.value)
            if ch and ch[-1] in HANDLER_EVENTS:
                aliases[node.targets[0].id] = ch[-1]
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "append", "insert")):
            continue
        chain = _attr_chain(node.func.value)
        if len(chain) == 1 and chain[0] in aliases:
            chain = [aliases[chain[0]]]
        if not chain or chain[-1] not in HANDLER_EVENTS:
            continue
        arg = node.args[-1] if node.args else None
        body: ast.AST | None
        if isinstance(arg, ast.Name):
            fname, body = arg.id, funcs.get(arg.id)
        elif isinstance(arg, ast.Lambda):
            fname, body = "<lambda>", arg
        else:
            fname, body = ast.unparse(arg) if arg is not None else None, None
        writes, names = set(), set()
        if body is not None:
            for sub in ast.walk(body):
                targets = []
                if isinstance(sub, ast.Assign):
                    targets = sub.targets
                elif isinstance(sub, ast.AugAssign | ast.AnnAssign):
                    targets = [sub.target]
                for t in targets:
                    for tn in ast.walk(t):
                        if isinstance(tn, ast.Attribute) and tn.attr in _MOTION_ATTRS:
                            writes.add(tn.attr)
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _MOTION_ATTRS:
                    writes.add(sub.func.attr)
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    names.add(sub.value)
        out.append(
            {
                "event": chain[-1],
                "function": fname,
                "line": node.lineno,
                "moves": bool(writes) or body is None,
                "writes": sorted(writes),
                "names": sorted(names),
            }
        )
    return out


def live_handlers() -> list[dict[str, Any]]:
    """User handlers registered in this process on frame-change / depsgraph events (bundled add-ons skipped)."""
    import bpy

    out = []
    for ev in HANDLER_EVENTS:
        for fn in getattr(bpy.app.handlers, ev):
            mod = getattr(fn, "__module__", "") or ""
            if mod.startswith(("bl_", "bpy", "addon_utils", "rna_", "cycles", "io_", "physcodegym")):
                continue
            code = getattr(fn, "__code__", None)
            names = sorted({c for c in (code.co_consts if code else ()) if isinstance(c, str)})
            writes = sorted(set(code.co_names if code else ()) & _MOTION_ATTRS)
            out.append(
                {
                    "event": ev,
                    "function": getattr(fn, "__name__", repr(fn)),
                    "module": mod,
                    "file": code.co_filename if code else None,
                    "moves": bool(writes),
                    "writes": writes,
                    "names": names,
                }
            )
    return out
