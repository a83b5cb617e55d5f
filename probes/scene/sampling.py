"""Sample a baked native scene once per frame: the one pass every probe, check and counterfactual reads.

`sample_scene` steps the frames in order (unbaked simulations only advance when stepped), reads each
object's world matrix, the evaluated world-space vertices of deforming meshes (cloth, soft body,
shape-changing modifiers) and particle positions (SPH liquids), and returns numpy arrays. Static data
(rigid-body settings, fields, constraints, modifiers) is read once. `save_npz`/`load_npz` keep the
result as a file so it is never sampled twice.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from physcodegym.probes.scene.physics import GEOMETRY_TYPES, NO_GEOMETRY_MODIFIERS
from physcodegym.samples import SceneSamples


def _rigid_body_info(ob: Any) -> dict[str, Any] | None:
    rb = ob.rigid_body
    if rb is None:
        return None
    return {
        "type": rb.type,
        "enabled": bool(rb.enabled),
        "kinematic": bool(rb.kinematic),
        "mass": float(rb.mass),
        "collision_shape": rb.collision_shape,
        # which mesh Bullet builds a hull / mesh shape from: the mesh before modifiers (BASE), after the leading
        # deform-only ones (DEFORM) or as evaluated (FINAL); only FINAL collides as the frames show it
        "mesh_source": rb.mesh_source,
        "collision_margin": float(rb.collision_margin),
        "use_margin": bool(rb.use_margin),
        "friction": float(rb.friction),
        "restitution": float(rb.restitution),
        "linear_damping": float(rb.linear_damping),
        "angular_damping": float(rb.angular_damping),
        "collision_collections": [bool(x) for x in rb.collision_collections],
        "in_world": _in_rigid_world(ob),
        # Bullet's sleep: a deactivated body stays where it is, in mid-air too, until something hits it
        "use_deactivation": bool(rb.use_deactivation),
        "use_start_deactivated": bool(rb.use_start_deactivated),
        "deactivate_linear_velocity": float(rb.deactivate_linear_velocity),
        "deactivate_angular_velocity": float(rb.deactivate_angular_velocity),
    }


def _in_rigid_world(ob: Any) -> bool:
    """Whether the object belongs to its scene's rigid-body world collection (else Bullet never sees it)."""
    for sc in ob.users_scene:
        rbw = sc.rigidbody_world
        if rbw is not None and rbw.collection is not None and ob.name in rbw.collection.all_objects:
            return True
    return False


def _material_transparent(m: Any) -> bool:
    """A material whose active surface output is fully transparent (Transparent BSDF, or Principled alpha ~0)."""
    if m is None:
        return False
    nt = getattr(m, "node_tree", None)
    if nt is None:
        return float(m.diffuse_color[3]) < 0.01
    outs = [n for n in nt.nodes if n.type == "OUTPUT_MATERIAL" and getattr(n, "is_active_output", True)]
    for out in outs:
        sock = out.inputs.get("Surface")
        if sock is None or not sock.is_linked:
            continue
        node = sock.links[0].from_node
        if node.type == "BSDF_TRANSPARENT":
            return True
        if node.type == "HOLDOUT":
            return True
        if node.type == "BSDF_PRINCIPLED":
            a = node.inputs.get("Alpha")
            if a is not None and not a.is_linked and float(a.default_value) < 0.01:
                return True
        return False
    return False


def _transparent_in_engine(ob: Any, scene: Any, slots: list[Any]) -> bool:
    """Whether every surface of `ob` is fully transparent in the scene's render engine. Workbench ignores
    material node trees: in MATERIAL colour mode it draws each material's viewport colour with its alpha
    (alpha 0 renders nothing, whatever the nodes say), in OBJECT mode the object colour's alpha; its other
    colour modes draw opaque. EEVEE and Cycles render the node tree (`_material_transparent`)."""
    engine = getattr(getattr(scene, "render", None), "engine", "")
    if engine == "BLENDER_WORKBENCH":
        ct = getattr(getattr(getattr(scene, "display", None), "shading", None), "color_type", "MATERIAL")
        if ct == "OBJECT":
            return float(ob.color[3]) < 0.01
        if ct == "MATERIAL":
            return bool(slots) and all(float(m.diffuse_color[3]) < 0.01 for m in slots)
        return False
    return bool(slots) and all(_material_transparent(m) for m in slots)


def clear_slots(ob: Any, scene: Any) -> set[int]:
    """Material slot indices of `ob` that render nothing in the scene's engine (see `_transparent_in_engine`).

    Why: transparency is per face. A rendered table whose mesh also holds a raised plate with a clear material
    collides with the plate (Bullet and the collision modifier take every face) while the frames show only the
    table; `probes.scene.geometry` drops those faces from the rendered material."""
    slots = [s.material for s in getattr(ob, "material_slots", [])]
    engine = getattr(getattr(scene, "render", None), "engine", "")
    if engine == "BLENDER_WORKBENCH":
        ct = getattr(getattr(getattr(scene, "display", None), "shading", None), "color_type", "MATERIAL")
        if ct != "MATERIAL":
            return set()  # OBJECT colour is per object (`render_visibility`); the other modes draw opaque
        return {i for i, m in enumerate(slots) if m is not None and float(m.diffuse_color[3]) < 0.01}
    return {i for i, m in enumerate(slots) if _material_transparent(m)}


def rendering_view_layers(scene: Any) -> list[Any]:
    """The view layers a render renders (`use` on): the one definition the audit reads "rendered" from."""
    return [vl for vl in getattr(scene, "view_layers", []) if getattr(vl, "use", True)]


def _render_collections(scene: Any) -> set[str]:
    """Names of collections whose objects render: in a view layer that renders (`use`), not excluded there, not
    "indirect only" (Cycles: seen in shadows and reflections, never by the camera), not hidden in renders, up the
    tree. Every rendering view layer counts, not only the first: a program can switch the first off and render
    a second from which the collection holding a collider is excluded."""
    out: set[str] = set()
    cycles = getattr(getattr(scene, "render", None), "engine", "") == "CYCLES"  # the other engines ignore the flag

    def walk(lc: Any, visible: bool) -> None:
        c = lc.collection
        vis = visible and not lc.exclude and not c.hide_render and not (cycles and getattr(lc, "indirect_only", False))
        if vis:
            out.add(c.name)
        for ch in lc.children:
            walk(ch, vis)

    for vl in rendering_view_layers(scene):
        try:
            walk(vl.layer_collection, True)
        except AttributeError:
            pass
    return out


def render_visibility(ob: Any, scene: Any, collections: set[str] | None = None) -> dict[str, Any]:
    """How an object shows in renders: hidden, holdout, fully transparent materials, or in no rendering collection."""
    cols = _render_collections(scene) if collections is None else collections
    in_cols = any(c.name in cols for c in ob.users_collection) or (
        scene.collection.name in cols and ob.name in scene.collection.objects)
    slots = [s.material for s in getattr(ob, "material_slots", []) if s.material is not None]
    transparent = _transparent_in_engine(ob, scene, slots)
    # an emitter or instancer with "show instancer for render" off renders only its particles / instances
    instancer_hidden = ((len(getattr(ob, "particle_systems", [])) > 0 or getattr(ob, "instance_type", "NONE") != "NONE")
                        and not getattr(ob, "show_instancer_for_render", True))
    return {
        "holdout": bool(getattr(ob, "is_holdout", False)),
        "transparent": transparent,
        "in_render_collection": bool(in_cols),
        "instancer_hidden": bool(instancer_hidden),
    }


# Object paths that move or simulate an object without changing how it looks (`probes.scene.sources` reads those)
_NOT_APPEARANCE = ("rigid_body", "field.", "collision.", "rigid_body_constraint.")
_SCENE_PHYSICS = ("rigidbody_world", "gravity", "use_gravity", "frame_current")


def id_curves(idb: Any) -> list[Any]:
    """Every F-curve (active action, unmuted NLA strips) and driver on one data-block."""
    from physcodegym.probes.scene.sources import _action_fcurves

    ad = getattr(idb, "animation_data", None) if idb is not None else None
    if ad is None:
        return []
    out = list(_action_fcurves(ad.action, getattr(ad, "action_slot", None)))
    for track in ad.nla_tracks:
        if not track.mute:
            for st in track.strips:
                if st.action is not None and not st.mute:
                    out.extend(_action_fcurves(st.action, getattr(st, "action_slot", None)))
    return out + list(ad.drivers)


def appearance_varies(scene: Any) -> list[str]:
    """What in the saved scene can change what renders from one frame to the next, other than where things are
    and what the solvers do (at most 8, for the evidence; empty when nothing can).

    Why: render visibility (hide_render, camera visibility, holdout, a transparent material, a collection or
    view layer that does not render) was read on one frame. A collider keyed hidden on every frame but that one,
    or a material keyed to fade after the first frame, held and steered bodies while the audit called it
    rendered. When anything here varies, visibility is read on every sampled frame (`_sample_scene`) and the
    shading probe (`probes.audit.visibility`) looks at more frames. Mechanisms, not a list of properties: any keyed or
    driven property of an object outside its transform and physics, of its data, of any material, node group,
    world, collection, texture, camera or light, and of the scene outside its physics constants; image
    sequences and movies (their pixels change per frame); geometry nodes that read the scene time; markers
    that switch the camera."""
    import bpy
    from physcodegym.probes.scene.sources import TRANSFORM_PATHS

    out: list[str] = []
    phys_mods = _PHYSICS_MODIFIERS | {"PARTICLE_SYSTEM"}
    for ob in scene.objects:
        for fc in id_curves(ob):
            p = fc.data_path
            if p.split(".")[-1] in TRANSFORM_PATHS or p.startswith(_NOT_APPEARANCE):
                continue
            if p.startswith("modifiers["):
                try:
                    if ob.path_resolve(p.split("]", 1)[0] + "]").type in phys_mods:
                        continue
                except (ValueError, AttributeError):
                    pass
            out.append(f"objects[{ob.name!r}].{p}")
        for idb in (ob.data, getattr(ob.data, "shape_keys", None)):
            out += [f"{getattr(idb, 'name', '?')}.{fc.data_path}" for fc in id_curves(idb)]
    for fc in id_curves(scene):
        if not fc.data_path.startswith(_SCENE_PHYSICS):
            out.append(f"scene.{fc.data_path}")
    for coll in (bpy.data.materials, bpy.data.node_groups, bpy.data.worlds, bpy.data.collections,
                 bpy.data.textures, bpy.data.images, bpy.data.linestyles):
        for idb in coll:
            out += [f"{idb.name}.{fc.data_path}" for fc in id_curves(idb)]
            nt = getattr(idb, "node_tree", None)
            out += [f"{idb.name}.node_tree.{fc.data_path}" for fc in id_curves(nt)]
    out += [f"image {im.name!r} ({im.source.lower()})" for im in bpy.data.images if im.source in ("SEQUENCE", "MOVIE")]
    out += [f"node group {ng.name!r} reads the scene time" for ng in bpy.data.node_groups
            if any(n.bl_idname == "GeometryNodeInputSceneTime" for n in ng.nodes)]
    out += [f"marker {m.name!r} switches the camera" for m in scene.timeline_markers if m.camera is not None]
    return list(dict.fromkeys(out))[:8]


def _shown(ob: Any, vis: dict[str, Any]) -> bool:
    """`probes.scene.physics.rendered` on live settings (one frame's `render_visibility`)."""
    return (not ob.hide_render and bool(getattr(ob, "visible_camera", True)) and vis["in_render_collection"]
            and not (vis["holdout"] or vis["transparent"] or vis["instancer_hidden"]))


def _fold_visibility(scene: Any, obs: list[Any], frame: int, worst: dict[str, dict[str, Any]],
                     hidden_at: dict[str, list[int]]) -> None:
    """One frame's render visibility of `obs` folded into `worst` (hidden on any frame wins) and `hidden_at`."""
    cols = _render_collections(scene)
    for o in obs:
        vis = render_visibility(o, scene, cols)
        cur = {"hide_render": bool(o.hide_render), "visible_camera": bool(getattr(o, "visible_camera", True)), **vis}
        w = worst.get(o.name)
        if w is None:
            worst[o.name] = cur
        else:
            for k in ("hide_render", "holdout", "transparent", "instancer_hidden"):
                w[k] = w[k] or cur[k]
            for k in ("visible_camera", "in_render_collection"):
                w[k] = w[k] and cur[k]
        if not _shown(o, vis):
            hidden_at.setdefault(o.name, []).append(int(frame))


INTRINSICS = ("lens", "sensor_width", "shift_x", "shift_y", "ortho_scale", "orthographic")


def camera_intrinsics(cam: Any) -> list[float]:
    """One frame's `INTRINSICS` of a camera's (evaluated) data: what, besides its pose, sets the picture."""
    return [float(cam.lens), float(cam.sensor_width), float(cam.shift_x), float(cam.shift_y),
            float(cam.ortho_scale), float(cam.type == "ORTHO")]


def _runs_of(hidden: list[int], frames: list[int]) -> list[list[int]]:
    """[first, last] sampled frames of each run of consecutive sampled frames in `hidden` (at most 16, for the
    evidence and for `probes.audit.detect_switches`, which reads where an object appears and vanishes)."""
    at = set(hidden)
    runs: list[list[int]] = []
    for prev, f in zip([None, *frames[:-1]], frames, strict=True):
        if f not in at:
            continue
        if runs and prev is not None and prev in at and runs[-1][1] == prev:
            runs[-1][1] = f
        else:
            runs.append([f, f])
    return runs[:16]


def object_info(ob: Any) -> dict[str, Any]:
    """Static, JSON-able description of one object (settings that do not change per frame)."""
    mats = []
    if getattr(ob, "material_slots", None):
        for s in ob.material_slots:
            if s.material is not None:
                m = s.material
                mats.append({"name": m.name, "diffuse_color": [float(c) for c in m.diffuse_color]})
    info: dict[str, Any] = {
        "type": ob.type,
        "data": ob.data.name if ob.data is not None else None,
        "parent": ob.parent.name if ob.parent else None,
        "hide_render": bool(ob.hide_render),
        "hide_viewport": bool(ob.hide_viewport),
        "display_type": ob.display_type,
        "visible_camera": bool(getattr(ob, "visible_camera", True)),
        "dimensions": [float(x) for x in ob.dimensions],
        "rigid_body": _rigid_body_info(ob),
        "modifiers": [{"name": m.name, "type": m.type, "show_render": bool(m.show_render)} for m in ob.modifiers],
        "constraints": [{"name": c.name, "type": c.type, "enabled": bool(c.enabled)} for c in ob.constraints],
        "materials": mats,
        "has_animation": bool(ob.animation_data and (ob.animation_data.action or len(ob.animation_data.drivers))),
    }
    if getattr(ob, "instance_type", "NONE") not in ("NONE", None):  # an empty drawing a collection renders too
        info["instance_type"] = ob.instance_type
    if ob.field is not None and ob.field.type != "NONE":
        f = ob.field
        info["field"] = {"type": f.type, "strength": float(f.strength), "flow": float(getattr(f, "flow", 0.0)),
                         "shape": f.shape}
    if ob.rigid_body_constraint is not None:
        c = ob.rigid_body_constraint
        info["rigid_body_constraint"] = {
            "type": c.type,
            "enabled": bool(c.enabled),
            "object1": c.object1.name if c.object1 else None,
            "object2": c.object2.name if c.object2 else None,
        }
    if ob.collision is not None and any(m.type == "COLLISION" for m in ob.modifiers):
        info["collision"] = {"thickness_outer": float(ob.collision.thickness_outer), "use": bool(ob.collision.use),
                             "use_particle_kill": bool(ob.collision.use_particle_kill)}
    return info


def _weights(ew: Any) -> dict[str, Any] | None:
    if ew is None:
        return None
    return {"gravity": float(ew.gravity), "all": float(ew.all),
            "collection": ew.collection.name if ew.collection else None}


def physics_settings(ob: Any) -> dict[str, Any]:
    """Solver parameters that decide how physical the motion is: cloth / soft body mass, gravity and
    damping, effector weights, particle physics type, mass, damping and effector weights."""
    out: dict[str, Any] = {}
    for m in ob.modifiers:
        if m.type not in ("CLOTH", "SOFT_BODY"):
            continue
        st = m.settings
        rec = {"type": m.type, "enabled": bool(m.show_viewport or m.show_render), "mass": float(st.mass)}
        if m.type == "CLOTH":
            rec.update(gravity=[float(x) for x in st.gravity], air_damping=float(st.air_damping),
                       time_scale=float(st.time_scale), quality=int(st.quality), pin_group=st.vertex_group_mass,
                       use_collision=bool(m.collision_settings.use_collision),
                       distance_min=float(m.collision_settings.distance_min))
        else:
            rec.update(gravity=float(st.gravity), friction=float(st.friction), speed=float(st.speed),
                       use_goal=bool(st.use_goal), goal_default=float(st.goal_default),
                       goal_min=float(st.goal_min), goal_max=float(st.goal_max), goal_group=st.vertex_group_goal)
        out[m.name] = rec | {"effector_weights": _weights(st.effector_weights)}
    for ps in ob.particle_systems:
        st = ps.settings
        out[f"particles:{ps.name}"] = {
            "type": "PARTICLES",
            "physics_type": st.physics_type,
            "count": int(st.count),
            "render_type": st.render_type,
            "mass": float(st.mass),
            "damping": float(getattr(st, "damping", 0.0)),
            "drag_factor": float(getattr(st, "drag_factor", 0.0)),
            "brownian_factor": float(getattr(st, "brownian_factor", 0.0)),
            "timestep": float(getattr(st, "timestep", 0.04)),
            "time_tweak": float(getattr(st, "time_tweak", 1.0)),
            "lifetime": float(st.lifetime),
            "lifetime_random": float(st.lifetime_random),
            "use_die_on_collision": bool(st.use_die_on_collision),
            "use_adaptive_subframes": bool(getattr(st, "use_adaptive_subframes", False)),
            "effector_weights": _weights(st.effector_weights),
            "instance_object": st.instance_object.name if getattr(st, "instance_object", None) else None,
        }
    return out


# Modifiers that never change the evaluated vertices (a mesh carrying only these is read once).
STATIC_MODIFIERS = NO_GEOMETRY_MODIFIERS
# Solver modifiers whose mesh is always kept as a per-frame track (the detectors treat it as deforming even
# when it stays still, e.g. a fully pinned cloth); any other mesh whose vertices never move is a rigid solid.
KEEP_TRACK_MODIFIERS = {"CLOTH", "SOFT_BODY", "DYNAMIC_PAINT", "FLUID"}


def _deforming(ob: Any) -> bool:
    """Whether the evaluated vertices of `ob` can change over time, by mechanism rather than by a list of
    "deforming" modifiers: any modifier can be keyframed or driven (Displace strength, Bevel width, a hook's
    empty), shape keys and armature / lattice parents deform without a modifier. Such meshes are sampled
    per frame, so the solvers-off test and the geometry see the deformation."""
    if ob.type != "MESH":
        return False
    if any(m.type not in STATIC_MODIFIERS for m in ob.modifiers):
        return True
    data = ob.data
    return getattr(data, "shape_keys", None) is not None or ob.parent_type in ("ARMATURE", "LATTICE")


# Properties that are physical constants of a run: they may be set to anything plausible, but a value that
# changes between frames (keyframed, driven, or set by a handler) changes the physics mid-run. Read on every
# sampled frame; `scene_info["animated_constants"]` keeps those that vary.
_RB_CONSTANTS = ("mass", "restitution", "friction", "linear_damping", "angular_damping", "collision_margin")
_CLOTH_CONSTANTS = ("mass", "time_scale", "air_damping")
_PARTICLE_CONSTANTS = ("mass", "time_tweak", "damping", "drag_factor")


def _constant_readers(scene: Any, obs: list[Any]) -> list[tuple[str, list[str], Any]]:
    """(property path, objects it governs, reader) for every physical constant of the scene's solvers."""
    out: list[tuple[str, list[str], Any]] = []
    dyn = [o.name for o in obs if o.rigid_body is not None]
    out.append(("scene.gravity", [o.name for o in obs], lambda: (*scene.gravity, float(scene.use_gravity))))
    rbw = scene.rigidbody_world
    if rbw is not None:
        out.append(("scene.rigidbody_world.enabled", dyn, lambda: float(rbw.enabled)))
        out.append(("scene.rigidbody_world.time_scale", dyn, lambda: rbw.time_scale))
        out.append(("scene.rigidbody_world.substeps_per_frame", dyn, lambda: rbw.substeps_per_frame))
        out.append(("scene.rigidbody_world.effector_weights.gravity", dyn,
                    lambda: (rbw.effector_weights.gravity, rbw.effector_weights.all)))
        out.append(("scene.rigidbody_world.point_cache.frame_start", dyn,
                    lambda: (rbw.point_cache.frame_start, rbw.point_cache.frame_end)))
    for o in obs:
        rb = o.rigid_body
        if rb is not None:
            for k in _RB_CONSTANTS:
                # a passive body's restitution or friction changes what the dynamic bodies do
                governs = list(dict.fromkeys([o.name, *dyn]))
                out.append((f"objects[{o.name!r}].rigid_body.{k}", governs, (lambda rb=rb, k=k: getattr(rb, k))))
        for m in o.modifiers:
            if m.type == "CLOTH":
                st = m.settings
                for k in _CLOTH_CONSTANTS:
                    out.append((f"objects[{o.name!r}].modifiers[{m.name!r}].settings.{k}", [o.name],
                                (lambda st=st, k=k: getattr(st, k))))
                out.append((f"objects[{o.name!r}].modifiers[{m.name!r}].settings.effector_weights.gravity", [o.name],
                            (lambda st=st: (st.effector_weights.gravity, st.effector_weights.all))))
        for ps in o.particle_systems:
            st = ps.settings
            for k in _PARTICLE_CONSTANTS:
                out.append((f"objects[{o.name!r}].particle_systems[{ps.name!r}].settings.{k}", [o.name],
                            (lambda st=st, k=k: getattr(st, k, 0.0))))
            out.append((f"objects[{o.name!r}].particle_systems[{ps.name!r}].settings.effector_weights.gravity",
                        [o.name],
                        (lambda st=st: (st.effector_weights.gravity, st.effector_weights.all))))
    return out


# Keyed or driven physics properties outside the list above (`_animated_physics_readers`), by where they live. Left
# out on purpose: rigid_body.kinematic / enabled (a hand-off, `probes.scene.sources`), field.* (judged by its measured
# effect, keyed strength included), rigid_body_constraint.* (joints and motors are actuators the rubric admits).
_PHYSICS_MODIFIERS = {"CLOTH", "SOFT_BODY", "COLLISION", "FLUID", "DYNAMIC_PAINT"}
_PARTICLE_DYNAMICS = ("mass", "damping", "drag_factor", "brownian_factor", "time_tweak", "timestep", "subframes",
                      "fluid.", "effector_weights.", "use_size_deflect", "use_die_on_collision")


def _animated_physics_readers(scene: Any, obs: list[Any], known: set[str]) -> list[tuple[str, list[str], Any]]:
    """Readers for every keyframed or driven physical property of the scene's solvers and colliders that
    `_constant_readers` does not list: found from the F-curves and drivers themselves (rigid body, collision
    settings, cloth / soft-body / collision modifiers, particle dynamics), so a cloth whose shrink is keyed, a
    collider whose thickness is driven or a soft body whose goal stiffness changes mid-run shows like a keyed mass.
    """
    from physcodegym.probes.scene.sources import _action_fcurves, object_fcurves

    out: list[tuple[str, list[str], Any]] = []
    dyn = [o.name for o in obs if o.rigid_body is not None]

    def reader(owner: Any, path: str, index: int) -> Any:
        def rd() -> Any:
            v = owner.path_resolve(path)
            try:
                return float(v[index]) if hasattr(v, "__len__") else float(v)
            except (TypeError, ValueError, IndexError):
                return 0.0
        return rd

    for o in obs:
        curves = list(object_fcurves(o))
        if o.animation_data is not None:
            curves += list(o.animation_data.drivers)
        for fc in curves:
            p = fc.data_path
            physical = p.startswith(("rigid_body.", "collision.")) and p not in ("rigid_body.kinematic",
                                                                                 "rigid_body.enabled")
            if p.startswith("modifiers["):
                try:
                    mod = o.path_resolve(p.split("]", 1)[0] + "]")
                except ValueError:
                    mod = None
                physical = getattr(mod, "type", None) in _PHYSICS_MODIFIERS
            if not physical:
                continue
            label = f"objects[{o.name!r}].{p}" + (f"[{fc.array_index}]" if fc.array_index else "")
            if label in known:
                continue
            known.add(label)
            governs = list(dict.fromkeys([o.name, *dyn])) if p.startswith(("rigid_body.", "collision.")) else [o.name]
            out.append((label, governs, reader(o, p, fc.array_index)))
        for ps in getattr(o, "particle_systems", []):
            st = ps.settings
            ad = st.animation_data
            if ad is None:
                continue
            pcs = _action_fcurves(ad.action, getattr(ad, "action_slot", None)) + list(ad.drivers)
            for fc in pcs:
                p = fc.data_path
                if not p.startswith(_PARTICLE_DYNAMICS):
                    continue
                label = (f"objects[{o.name!r}].particle_systems[{ps.name!r}].settings.{p}"
                         + (f"[{fc.array_index}]" if fc.array_index else ""))
                if label in known:
                    continue
                known.add(label)
                out.append((label, [o.name], reader(st, p, fc.array_index)))
    return out


def _read(reader: Any) -> tuple[float, ...]:
    v = reader()
    return tuple(float(x) for x in v) if isinstance(v, tuple) else (float(v),)


def _varying(tracks: dict[str, list[tuple[float, ...]]], governs: dict[str, list[str]],
             frames: list[int]) -> dict[str, Any]:
    """The constants whose value changed between sampled frames: first / last value, frames of change."""
    out: dict[str, Any] = {}
    for path, vals in tracks.items():
        a = np.array(vals, dtype=float)
        if len(a) < 2:
            continue
        ch = np.nonzero(np.any(np.abs(np.diff(a, axis=0)) > 1e-6 * np.maximum(1.0, np.abs(a[:-1])), axis=1))[0]
        if len(ch):
            out[path] = {"objects": governs[path], "first": a[0].tolist(), "last": a[-1].tolist(),
                         "min": a.min(axis=0).tolist(), "max": a.max(axis=0).tolist(),
                         "changes": [int(frames[ch[0] + 1]), int(frames[ch[-1] + 1])]}
    return out


INSTANCES_SUFFIX = "#instances"  # samples.verts key of an instancer's instance points (origin + 3 axis tips each)
INSTANCE_MAX = 500  # instances tracked per instancer


def _sample_instances(dg: Any, names: set[str], fi: int,
                      tracks: dict[str, dict[tuple[int, ...], dict[int, np.ndarray]]]) -> None:
    """Record this frame's non-particle instances: per instancer, persistent id -> (4, 3) world points."""
    for inst in dg.object_instances:
        if not inst.is_instance or inst.particle_system is not None:
            continue
        par = inst.parent
        if par is None or par.name not in names:
            continue
        m = np.array(inst.matrix_world, dtype=np.float64)
        pts = np.stack([m[:3, 3], m[:3, 3] + m[:3, 0], m[:3, 3] + m[:3, 1], m[:3, 3] + m[:3, 2]]).astype(np.float32)
        key = tuple(int(x) for x in inst.persistent_id)
        tracks.setdefault(par.name, {}).setdefault(key, {})[fi] = pts


def _changes_in_object_space(w: np.ndarray, mats: np.ndarray, eps: float = 1e-4) -> bool:
    """Whether world vertices (F, V, 3) move relative to their object (F, 4, 4) on any frame."""
    if w.shape[1] == 0:  # empty on the first frame (geometry that appears later: `info[...]["topology"]`)
        return False
    ok = np.all(np.isfinite(w.reshape(len(w), -1)), axis=1)
    if ok.sum() < 2:
        return False
    det = np.linalg.det(mats[ok][:, :3, :3].astype(np.float64))
    if np.any(np.abs(det) < 1e-12):
        # a frame at scale 0 (keyed from nothing, collapsed away) has no object space: the vertices must be
        # tracked per frame and judged like any other deformation, never dropped (and never a singular inverse)
        return True
    inv = np.linalg.inv(mats[ok])
    lo = np.einsum("fij,fvj->fvi", inv[:, :3, :3], w[ok].astype(np.float64)) + inv[:, None, :3, 3]
    return bool(np.abs(lo - lo[:1]).max() > eps)


def sample_scene(
    scene: Any = None,
    frames: range | list[int] | None = None,
    objects: list[str] | None = None,
    with_verts: bool = True,
    with_particles: bool = True,
    from_start: bool = True,
) -> SceneSamples:
    """Step through `frames` in order (default: the scene's frame range) and record every track, in the
    scene's render configuration (`probes.scene.render_config`: what the frames show, not what the viewport shows);
    `scene_info["render_divergences"]` lists what differed between the two.

    `from_start=False`: start at `frames[0]` itself instead of stepping there from the scene's first frame. For a
    cache that already holds that frame (a re-simulation restarted from the bake's own state,
    `probes.branches.resimulation.resim_plan`): stepping through the first frame would reset an outdated cache."""
    import bpy
    from physcodegym.probes.scene.render_config import render_configuration

    scene = scene or bpy.context.scene
    with render_configuration(scene) as diverged:
        samples = _sample_scene(scene, frames, objects, with_verts, with_particles, from_start)
    samples.scene_info["render_divergences"] = diverged
    return samples


def _read_deformed(o: Any, dg: Any, fi: int, n_frames: int, verts: dict[str, np.ndarray],
                   counts: dict[str, np.ndarray]) -> None:
    """A deforming mesh's evaluated world vertices on frame index `fi` into `verts` (the first topology kept; a
    later change only shows in `counts`, its vertex count per frame)."""
    F = n_frames  # noqa: N806 (the frame count, as in the caller)
    oe = o.evaluated_get(dg)
    me = oe.to_mesh()
    try:
        n = len(me.vertices)
        counts[o.name][fi] = n
        co = np.empty(n * 3, dtype=np.float32)
        me.vertices.foreach_get("co", co)
        co = co.reshape(n, 3)
        mw = np.array(oe.matrix_world, dtype=np.float64)
        w = (co.astype(np.float64) @ mw[:3, :3].T + mw[:3, 3]).astype(np.float32)
        arr = verts.get(o.name)
        if arr is None or arr.shape[1] != n:
            if arr is not None:
                # topology changed mid-sequence: keep the first topology, record the change
                return
            arr = np.full((F, n, 3), np.nan, dtype=np.float32)
            verts[o.name] = arr
        arr[fi] = w
    finally:
        oe.to_mesh_clear()


def _read_particles(ps: Any, key: str, parts: dict[str, list[np.ndarray]], alive: dict[str, list[np.ndarray]]) -> None:
    """One frame of an evaluated particle system: every particle's location and whether it is alive."""
    n = len(ps.particles)
    loc = np.empty(n * 3, dtype=np.float32)
    st = np.empty(n, dtype=np.int32)
    if n:
        ps.particles.foreach_get("location", loc)
        ps.particles.foreach_get("alive_state", st)
    parts[key].append(loc.reshape(n, 3))
    # alive_state values (measured, bpy 5.0): DEAD=1, UNBORN=2, ALIVE=3, DYING=4
    alive[key].append(st == 3 if n else np.zeros(0, bool))


def _scene_info(scene: Any, varies: bool) -> dict[str, Any]:
    """What the scene says of its solvers as a whole: gravity, the clock's remapping, the camera, the rigid-body
    world's settings and cache."""
    rbw = scene.rigidbody_world
    scene_info = {
        "appearance_varies": varies,
        "name": scene.name,
        "frame_start": scene.frame_start,
        "frame_end": scene.frame_end,
        "gravity": [float(g) for g in scene.gravity],
        "use_gravity": bool(scene.use_gravity),
        # time remapping: every solver's scene time advances frame_map_old / frame_map_new per rendered frame
        "frame_map": [int(scene.render.frame_map_old), int(scene.render.frame_map_new)],
        "camera": scene.camera.name if scene.camera else None,
        "rigidbody_world": None
        if rbw is None
        else {
            "enabled": bool(rbw.enabled),
            "substeps_per_frame": int(rbw.substeps_per_frame),
            "solver_iterations": int(rbw.solver_iterations),
            "time_scale": float(rbw.time_scale),
            "collection": rbw.collection.name if rbw.collection else None,
            "is_baked": bool(rbw.point_cache.is_baked),
            "frame_start": int(rbw.point_cache.frame_start),  # bodies rest until the world's first frame
            "effector_weights": _weights(rbw.effector_weights),
        },
    }
    return scene_info


def _padded_particles(parts: dict[str, list[np.ndarray]], alive: dict[str, list[np.ndarray]],
                      n_frames: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Particle counts can change per frame (emission): each system padded to its largest count with NaN
    locations and not-alive flags, (F, P, 3) and (F, P)."""
    F = n_frames  # noqa: N806
    pk: dict[str, np.ndarray] = {}
    ak: dict[str, np.ndarray] = {}
    for key in parts:
        n = max((a.shape[0] for a in parts[key]), default=0)
        P = np.full((F, n, 3), np.nan, dtype=np.float32)
        A = np.zeros((F, n), dtype=bool)
        for fi, (a, al) in enumerate(zip(parts[key], alive[key], strict=True)):
            P[fi, : a.shape[0]] = a
            A[fi, : al.shape[0]] = al
        pk[key], ak[key] = P, A
    return pk, ak


def _object_infos(scene: Any, obs: list[Any], frames: list[int], lens_tracks: dict[str, list[list[float]]],
                  counts: dict[str, np.ndarray], worst: dict[str, dict[str, Any]],
                  hidden_at: dict[str, list[int]]) -> dict[str, dict[str, Any]]:
    """Per object, what it is and how it renders, with what the frames showed folded in: a camera's keyed
    intrinsics, a mesh whose vertex count changed, and hidden on any sampled frame means hidden (which frames)."""
    F = len(frames)  # noqa: N806
    info = {o.name: object_info(o) for o in obs}
    for n, rows in lens_tracks.items():
        info[n]["intrinsics"] = {"columns": list(INTRINSICS), "frames": rows}
    for n, c in counts.items():
        if len(c) and (c != c[0]).any():  # geometry made or removed mid-run (a Build modifier, geometry nodes...)
            step = np.nonzero(np.diff(c))[0] + 1
            info[n]["topology"] = {"changes": [int(frames[i]) for i in step[:40]], "n_changes": int(len(step)),
                                   "vertices_min": int(c.min()), "vertices_max": int(c.max()),
                                   "empty_frames": int((c == 0).sum()), "of": F}
    cols = _render_collections(scene)
    for o in obs:
        info[o.name]["render"] = render_visibility(o, scene, cols)
        info[o.name]["physics"] = physics_settings(o)
    for n, w in worst.items():  # hidden on any sampled frame: hidden (the frames say which)
        inf = info[n]
        inf["hide_render"] = bool(inf["hide_render"] or w["hide_render"])
        inf["visible_camera"] = bool(inf["visible_camera"] and w["visible_camera"])
        r = inf["render"]
        for k in ("holdout", "transparent", "instancer_hidden"):
            r[k] = bool(r[k] or w[k])
        r["in_render_collection"] = bool(r["in_render_collection"] and w["in_render_collection"])
        if n in hidden_at:
            hf = hidden_at[n]
            r["hidden_frames"] = {"count": len(hf), "first": hf[0], "last": hf[-1], "of": len(frames),
                                  "runs": _runs_of(hf, [int(f) for f in frames])}
    return info


def _sample_scene(scene: Any, frames: range | list[int] | None, objects: list[str] | None, with_verts: bool,
                  with_particles: bool, from_start: bool = True) -> SceneSamples:
    import bpy

    if frames is None:
        frames = range(scene.frame_start, scene.frame_end + 1)
    frames = list(frames)
    obs = [o for o in scene.objects if objects is None or o.name in objects]
    names = [o.name for o in obs]
    deform = [o for o in obs if with_verts and _deforming(o)]
    psys_keys: list[tuple[Any, int, str]] = []
    if with_particles:
        for o in obs:
            for i, ps in enumerate(o.particle_systems):
                psys_keys.append((o, i, f"{o.name}/{ps.name}"))

    F, n_obj = len(frames), len(obs)
    mats = np.zeros((n_obj, F, 4, 4), dtype=np.float64)
    verts: dict[str, np.ndarray] = {}
    counts = {o.name: np.zeros(F, dtype=np.int64) for o in deform}  # evaluated vertices per sampled frame
    parts: dict[str, list[np.ndarray]] = {k: [] for _, _, k in psys_keys}
    alive: dict[str, list[np.ndarray]] = {k: [] for _, _, k in psys_keys}

    # Step from the start frame so unbaked caches simulate (stepping is the only way they advance).
    if from_start and frames and frames[0] != scene.frame_start:
        for f in range(scene.frame_start, frames[0]):
            scene.frame_set(f)
    readers = _constant_readers(scene, obs)
    readers += _animated_physics_readers(scene, obs, {p for p, _, _ in readers})
    # instances that are not particles (geometry nodes, vertex / face / collection instancing) render
    # geometry that no object matrix or mesh vertex shows: their origins and axes are sampled per instancer
    name_set = set(names)
    instancing = with_verts and any(
        o.instance_type != "NONE" or any(m.type == "NODES" for m in o.modifiers) for o in obs)
    inst_tracks: dict[str, dict[tuple[int, ...], dict[int, np.ndarray]]] = {}
    ctracks: dict[str, list[tuple[float, ...]]] = {p: [] for p, _, _ in readers}
    # cameras whose lens, sensor or shift is keyed or driven: read per frame (a zoom or shift jump is a cut)
    lens_cams = [o for o in obs if o.type == "CAMERA" and id_curves(o.data)]
    lens_tracks: dict[str, list[list[float]]] = {o.name: [] for o in lens_cams}
    # what renders can change per frame: then visibility is read on every frame, and the worst frame counts
    varies = appearance_varies(scene)
    # ... of everything that renders: geometry, and an object that instances geometry (a collection on an empty)
    seen = [o for o in obs if o.type in GEOMETRY_TYPES or o.instance_type != "NONE"] if varies else []
    worst: dict[str, dict[str, Any]] = {}
    hidden_at: dict[str, list[int]] = {}
    for fi, f in enumerate(frames):
        scene.frame_set(f)
        dg = bpy.context.evaluated_depsgraph_get()
        for path, _objs, rd in readers:
            ctracks[path].append(_read(rd))
        for o in lens_cams:
            lens_tracks[o.name].append(camera_intrinsics(o.evaluated_get(dg).data))
        if seen:
            _fold_visibility(scene, seen, f, worst, hidden_at)
        if instancing:
            _sample_instances(dg, name_set, fi, inst_tracks)
        for oi, o in enumerate(obs):
            oe = o.evaluated_get(dg)
            m = oe.matrix_world
            mats[oi, fi] = np.array(m, dtype=np.float64)
        for o in deform:
            _read_deformed(o, dg, fi, F, verts, counts)
        for o, i, key in psys_keys:
            _read_particles(o.evaluated_get(dg).particle_systems[i], key, parts, alive)

    for parent, keyed in inst_tracks.items():
        keys = sorted(keyed)[:INSTANCE_MAX]
        arr = np.full((F, 4 * len(keys), 3), np.nan, dtype=np.float32)
        for ki, k in enumerate(keys):
            for fi, pts in keyed[k].items():
                arr[fi, 4 * ki : 4 * ki + 4] = pts
        verts[parent + INSTANCES_SUFFIX] = arr
    # a mesh sampled only because it could deform (shape keys, armature, any modifier) and whose object-space
    # vertices never changed is a rigid solid: its track is dropped, so the geometry treats it as one
    for o in deform:
        if (o.name in verts and not any(m.type in KEEP_TRACK_MODIFIERS for m in o.modifiers)
            and not _changes_in_object_space(verts[o.name], mats[names.index(o.name)])):
            del verts[o.name]
    info = _object_infos(scene, obs, frames, lens_tracks, counts, worst, hidden_at)
    scene_info = _scene_info(scene, varies)
    scene_info["animated_constants"] = _varying(ctracks, {p: o for p, o, _ in readers}, frames)
    fps = scene.render.fps / scene.render.fps_base
    pk, ak = _padded_particles(parts, alive, F)
    return SceneSamples(
        frames=np.array(frames, dtype=np.int32),
        fps=float(fps),
        names=names,
        matrices=mats,
        verts=verts,
        particles=pk,
        particles_alive=ak,
        info=info,
        scene_info=scene_info,
    )
