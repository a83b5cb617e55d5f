"""Child process for the `inspect_scene` tool: open a saved .blend and dump its structure as JSON.

Run as `python -m physcodegym.agent.inspect_worker SCENE.blend OUT.json`; imports bpy, so the agent
harness never does. Scripts embedded in the .blend are not executed (bpy's default).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from physcodegym.core import atomic


def _r(v: Any, nd: int = 4) -> Any:
    try:
        return [round(float(x), nd) for x in v]
    except TypeError:
        f = float(v)
        return round(f, nd) if math.isfinite(f) else str(f)


def _props(obj: Any, names: tuple[str, ...]) -> dict:
    out = {}
    for n in names:
        if hasattr(obj, n):
            v = getattr(obj, n)
            if isinstance(v, bool | int | str) or v is None:
                out[n] = v
            elif isinstance(v, float):
                out[n] = _r(v)
            else:
                try:
                    out[n] = _r(v)
                except (TypeError, ValueError):
                    out[n] = getattr(v, "name", str(v))
    return out


RB = (
    "type",
    "enabled",
    "kinematic",
    "mass",
    "friction",
    "restitution",
    "collision_shape",
    "collision_margin",
    "use_margin",
    "linear_damping",
    "angular_damping",
    "mesh_source",
    "use_deactivation",
    "collision_collections",
)
CLOTH = (
    "quality",
    "mass",
    "air_damping",
    "tension_stiffness",
    "compression_stiffness",
    "bending_stiffness",
    "vertex_group_mass",
    "use_pressure",
    "uniform_pressure_force",
    "gravity",
)
COLL = (
    "thickness_outer",
    "thickness_inner",
    "cloth_friction",
    "damping",
    "use_friction",
    "friction_factor",
    "permeability",
)
SOFT = ("mass", "friction", "use_goal", "use_edges", "goal_default", "pull", "push", "damping")
PSET = (
    "type",
    "count",
    "frame_start",
    "frame_end",
    "lifetime",
    "physics_type",
    "emit_from",
    "normal_factor",
    "particle_size",
    "mass",
    "render_type",
)
FIELD = (
    "type",
    "shape",
    "strength",
    "flow",
    "noise",
    "seed",
    "falloff_type",
    "falloff_power",
    "use_max_distance",
    "distance_max",
    "use_min_distance",
    "distance_min",
    "apply_to_location",
    "apply_to_rotation",
)
CON = ("type", "name", "enabled", "breaking_threshold", "use_breaking", "disable_collisions")


def _describe_modifier(ob: Any, m: Any) -> dict[str, Any]:
    """One modifier: its type and the solver settings an agent needs to see."""
    md: dict[str, Any] = {"name": m.name, "type": m.type}
    if m.type == "CLOTH":
        md["settings"] = _props(m.settings, CLOTH)
        md["cache_frames"] = [m.point_cache.frame_start, m.point_cache.frame_end]
        md["is_baked"] = m.point_cache.is_baked
    elif m.type == "SOFT_BODY":
        md["settings"] = _props(m.settings, SOFT)
    elif m.type == "COLLISION" and ob.collision is not None:
        md["settings"] = _props(ob.collision, COLL)
    elif m.type == "PARTICLE_SYSTEM":
        ps = m.particle_system
        md["settings"] = _props(ps.settings, PSET)
        md["is_baked"] = ps.point_cache.is_baked
        if ps.settings.physics_type == "FLUID" and ps.settings.fluid is not None:
            md["fluid"] = _props(
                ps.settings.fluid,
                ("solver", "stiffness", "linear_viscosity", "rest_density", "use_initial_rest_length"),
            )
    elif m.type == "FLUID":
        md["fluid_type"] = m.fluid_type
    return md


def _describe_object(ob: Any) -> dict[str, Any]:
    """One object: transform, visibility, physics settings, animation and materials."""
    o: dict[str, Any] = {
        "name": ob.name,
        "type": ob.type,
        "parent": ob.parent.name if ob.parent else None,
        "location": _r(ob.location),
        "rotation_euler": _r(ob.rotation_euler),
        "scale": _r(ob.scale),
        "dimensions": _r(ob.dimensions),
        "hide_render": ob.hide_render,
        "display_type": ob.display_type,
    }
    if ob.type == "MESH":
        o["mesh"] = {"vertices": len(ob.data.vertices), "polygons": len(ob.data.polygons)}
    if ob.rigid_body is not None:
        o["rigid_body"] = _props(ob.rigid_body, RB[:-1])
    if ob.rigid_body_constraint is not None:
        c = ob.rigid_body_constraint
        o["rigid_body_constraint"] = {
            **_props(c, ("type", "enabled", "disable_collisions", "use_breaking", "breaking_threshold")),
            "object1": c.object1.name if c.object1 else None,
            "object2": c.object2.name if c.object2 else None,
        }
    mods = [_describe_modifier(ob, m) for m in ob.modifiers]
    if mods:
        o["modifiers"] = mods
    if ob.constraints:
        o["constraints"] = [
            {**_props(c, CON), "target": getattr(getattr(c, "target", None), "name", None)} for c in ob.constraints
        ]
    if ob.field is not None and ob.field.type != "NONE":
        o["field"] = _props(ob.field, FIELD)
    ad = ob.animation_data
    if ad is not None:
        o["animation"] = {"action": ad.action.name if ad.action else None, "drivers": len(ad.drivers)}
    if ob.type == "CAMERA":
        o["camera"] = _props(ob.data, ("type", "lens", "sensor_width", "ortho_scale", "clip_start", "clip_end"))
    if ob.type == "LIGHT":
        o["light"] = _props(ob.data, ("type", "energy", "color"))
    mats = [s.material.name for s in getattr(ob, "material_slots", []) if s.material]
    if mats:
        o["materials"] = mats
    return o


def describe(bpy: Any) -> dict:
    sc = bpy.context.scene
    doc: dict[str, Any] = {
        "scene": {
            "name": sc.name,
            "frame_start": sc.frame_start,
            "frame_end": sc.frame_end,
            "fps": sc.render.fps,
            "resolution": [sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage],
            "engine": sc.render.engine,
            "camera": sc.camera.name if sc.camera else None,
            "gravity": _r(sc.gravity),
            "use_gravity": sc.use_gravity,
            "unit_scale": _r(sc.unit_settings.scale_length),
        },
        "objects": [],
        "materials": [],
    }
    rbw = sc.rigidbody_world
    if rbw is not None:
        pc = rbw.point_cache
        doc["scene"]["rigidbody_world"] = {
            "enabled": rbw.enabled,
            "collection": rbw.collection.name if rbw.collection else None,
            "substeps_per_frame": rbw.substeps_per_frame,
            "solver_iterations": rbw.solver_iterations,
            "time_scale": _r(rbw.time_scale),
            "cache_frames": [pc.frame_start, pc.frame_end],
            "is_baked": pc.is_baked,
        }
    doc["objects"] = [_describe_object(ob) for ob in sc.objects]
    for mat in bpy.data.materials:
        if mat.users == 0:
            continue
        md = {"name": mat.name, "diffuse_color": _r(mat.diffuse_color)}
        nt = getattr(mat, "node_tree", None)
        if nt is not None:
            bsdf = next((n for n in nt.nodes if n.type == "BSDF_PRINCIPLED"), None)
            if bsdf is not None:
                for key in ("Base Color", "Roughness", "Metallic", "Alpha", "Transmission Weight"):
                    if key in bsdf.inputs:
                        md[key.lower().replace(" ", "_")] = _r(bsdf.inputs[key].default_value)
        doc["materials"].append(md)
    doc["handlers"] = {
        n: len(getattr(bpy.app.handlers, n))
        for n in ("frame_change_pre", "frame_change_post")
        if len(getattr(bpy.app.handlers, n))
    }
    return doc


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m physcodegym.agent.inspect_worker SCENE.blend OUT.json", file=sys.stderr)
        return 2
    blend, out = Path(argv[0]), Path(argv[1])
    import bpy
    from physcodegym.probes.scene.render_safety import install_load_guard

    install_load_guard()  # stored code and paths off as the file loads (docs/THREAT_MODEL.md)
    bpy.ops.wm.open_mainfile(filepath=str(blend), load_ui=False, use_scripts=False)  # Auto Run off
    doc = describe(bpy)
    atomic.write_text(out, json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    from physcodegym.core.exit import exit_child

    exit_child(main())
