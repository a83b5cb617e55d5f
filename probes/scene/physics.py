"""The one physics vocabulary of the probes: what renders, what a solver simulates, what collides, what moves.

Every detector of the audit (`probes.audit.audit`, `probes.detectors`) and the rubric's task-independent scan
(`verifier.checks.scan_findings`) read these definitions, so a collider, a rendered object or a
dynamic body means the same thing everywhere. They read the static `info` records of
`probes.scene.sampling.object_info` (plus `render` / `physics` added by `sample_scene`) and the scene record.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Object types that put geometry in a render.
GEOMETRY_TYPES = {"MESH", "CURVE", "SURFACE", "META", "FONT", "CURVES", "POINTCLOUD", "VOLUME", "GREASEPENCIL"}
# Modifiers whose motion comes from a solver (switched off in the solvers-off re-evaluation).
SOLVER_MODIFIERS = {"CLOTH", "SOFT_BODY", "FLUID", "DYNAMIC_PAINT"}
# Particle physics types that are solvers; NO and KEYED particles are placed, BOIDS ones steered by rules (flight,
# goals, flocking), none of them simulated.
SOLVER_PARTICLES = {"NEWTON", "FLUID"}
PLACED_PARTICLES = {"NO": "placed", "KEYED": "placed", "BOIDS": "steered by boid rules"}
SOLVER_SHAPES_WITH_OUTER_MARGIN = {"CONVEX_HULL", "MESH", "COMPOUND"}

MOVE_TRANSLATION = 0.01  # m: an object "moves" beyond this displacement from its first-frame pose
MOVE_ROTATION = 0.05  # rad
MOVE_SCALE = 0.01  # relative change of any axis scale
STEP_EPS = 1e-4  # m / rad: a per-frame change below this is no step


def rendered(info: dict[str, Any], own_surface: bool = True) -> bool:
    """Does the object put anything in the rendered frames?

    Viewport display (WIRE / BOUNDS) does not change a render, so it is not looked at. Hidden in renders,
    invisible to the camera, holdout, fully transparent materials or a collection that does not render all
    mean the object is not seen, and so does a collider that covers nothing when rendered alone
    (`measured_invisible`, set by `probes.audit.visibility`). `own_surface=False` asks whether what the object
    carries (its particles, its instances) can render: an emitter's own material, holdout and "show instancer"
    do not hide those.
    """
    if info.get("hide_render") or not info.get("visible_camera", True):
        return False
    r = info.get("render") or {}
    if own_surface and (r.get("holdout") or r.get("transparent") or r.get("instancer_hidden")
                        or r.get("measured_invisible")):
        return False
    return bool(r.get("in_render_collection", True))


def emits_rendered(info: dict[str, Any], psys: str) -> bool:
    """Does the object's particle system `psys` put particles in the frames (its own surface may not render)?"""
    rec = (info.get("physics") or {}).get(f"particles:{psys}") or {}
    return rec.get("render_type", "HALO") != "NONE" and rendered(info, own_surface=False)


def instanced_objects(infos: dict[str, dict[str, Any]]) -> set[str]:
    """Objects drawn as particles by some particle system (a drop mesh parked under the table): they render
    where the particles are, never as themselves."""
    return {rec["instance_object"] for info in infos.values() for rec in (info.get("physics") or {}).values()
            if rec.get("instance_object")}


def hidden_how(info: dict[str, Any]) -> str | None:
    """Why a geometry object does not render (None when it does)."""
    if info.get("hide_render"):
        return "hide_render"
    if not info.get("visible_camera", True):
        return "invisible to the camera"
    r = info.get("render") or {}
    if r.get("holdout"):
        return "holdout"
    if r.get("transparent"):
        return "fully transparent material"
    if r.get("instancer_hidden"):
        return "emitter / instancer not shown in renders"
    if r.get("measured_invisible"):
        return "renders nothing when rendered alone (its material or shading hides it; probes.audit.visibility)"
    if not r.get("in_render_collection", True):
        return "in no rendering collection"
    return None


def world_enabled(scene_info: dict[str, Any] | None) -> bool:
    rbw = (scene_info or {}).get("rigidbody_world")
    return bool(rbw and rbw.get("enabled", True))


def in_rigid_world(info: dict[str, Any], scene_info: dict[str, Any] | None) -> bool:
    """The body is simulated by Bullet: it has a rigid body, belongs to the world's collection, and the world is on."""
    rb = info.get("rigid_body")
    if not rb or not world_enabled(scene_info):
        return False
    return bool(rb.get("in_world", True))


def dynamic(info: dict[str, Any], scene_info: dict[str, Any] | None = None) -> bool:
    """An active rigid body that Bullet moves (Dynamic on, in an enabled world). `scene_info=None`: the world is assumed
    on."""
    rb = info.get("rigid_body")
    if not (rb and rb["type"] == "ACTIVE" and rb["enabled"]):
        return False
    return scene_info is None or in_rigid_world(info, scene_info)


def collision_owner(info: dict[str, Any], scene_info: dict[str, Any] | None = None) -> bool:
    """The object collides with something: a rigid body in an enabled world (any collision collection), or a Collision
    modifier in use."""
    rb = info.get("rigid_body")
    if rb and any(rb.get("collision_collections", [True])) and (scene_info is None or in_rigid_world(info, scene_info)):
        return True
    col = info.get("collision")
    return bool(col and col.get("use"))


NO_GEOMETRY_MODIFIERS = {"COLLISION", "PARTICLE_SYSTEM"}  # modifiers that never change the evaluated vertices


def post_collision_modifiers(info: dict[str, Any]) -> list[str]:
    """Modifiers shown in renders after a mesh's Collision modifier (names). Blender collides with the mesh as it is
    at the Collision modifier, so these change what renders and not what collides: a table Displaced 8 cm lower
    after its Collision modifier is collided with 8 cm above every frame's table."""
    mods = info.get("modifiers") or []
    at = [k for k, m in enumerate(mods) if m["type"] == "COLLISION"]
    if info.get("type") != "MESH" or not at:
        return []
    return [m["name"] for m in mods[at[0] + 1:]
            if m.get("show_render", True) and m["type"] not in NO_GEOMETRY_MODIFIERS]


# Modifier types that only move vertices (Blender's deform-only modifiers): a rigid body's DEFORM mesh source is the
# mesh after the leading run of these, before the first modifier that builds or removes geometry.
DEFORM_ONLY_MODIFIERS = {
    "ARMATURE", "CAST", "CLOTH", "CORRECTIVE_SMOOTH", "CURVE", "DISPLACE", "HOOK", "LAPLACIANDEFORM", "LAPLACIANSMOOTH",
    "LATTICE", "MESH_CACHE", "MESH_DEFORM", "SHRINKWRAP", "SIMPLE_DEFORM", "SMOOTH", "SOFT_BODY", "SURFACE_DEFORM",
    "WARP", "WAVE", "SURFACE",
}
RIGID_SOURCE_SHAPES = {"CONVEX_HULL", "MESH"}  # shapes Bullet builds from a mesh (the primitives from the bounds)


def rigid_source_modifiers(info: dict[str, Any]) -> list[str]:
    """Modifiers shown in renders that a rigid body's hull or mesh shape does not see (names): with mesh source BASE
    every one, with DEFORM those from the first that is not deform-only on. Bullet then collides with geometry no
    frame shows: a stilt under a ball cut from every render by a Mask modifier holds the ball up in mid-air."""
    rb = info.get("rigid_body")
    if (info.get("type") != "MESH" or not rb or rb.get("collision_shape") not in RIGID_SOURCE_SHAPES
            or rb.get("mesh_source", "FINAL") == "FINAL"):
        return []
    mods = [m for m in info.get("modifiers") or [] if m["type"] not in NO_GEOMETRY_MODIFIERS]
    if rb.get("mesh_source") == "DEFORM":
        k = next((i for i, m in enumerate(mods) if m["type"] not in DEFORM_ONLY_MODIFIERS), len(mods))
        mods = mods[k:]
    return [m["name"] for m in mods if m.get("show_render", True)]


def solver_modifiers(info: dict[str, Any]) -> list[str]:
    """Enabled solver modifiers and particle systems with solver physics on this object."""
    out = []
    phys = info.get("physics") or {}
    for m in info.get("modifiers", []):
        if m["type"] in SOLVER_MODIFIERS:
            rec = phys.get(m["name"], {})
            if rec.get("enabled", True):
                out.append(m["type"])
    for k, rec in phys.items():
        if k.startswith("particles:") and rec.get("physics_type") in SOLVER_PARTICLES:
            out.append("PARTICLES")
    return out


def size(info: dict[str, Any]) -> float:
    """Smallest nonzero dimension (m)."""
    d = [x for x in info.get("dimensions", [0, 0, 0]) if x > 1e-6]
    return min(d) if d else 0.0


def margin(info: dict[str, Any]) -> float:
    rb = info.get("rigid_body")
    return float(rb["collision_margin"]) if rb else 0.0


def margin_eff(info: dict[str, Any]) -> float:
    """The collision shell outside the mesh: rigid hulls/meshes grow by their margin, collision modifiers by
    thickness_outer."""
    rb = info.get("rigid_body")
    if not rb:
        col = info.get("collision")
        return float(col["thickness_outer"]) if col else 0.0
    return float(rb["collision_margin"]) if rb["collision_shape"] in SOLVER_SHAPES_WITH_OUTER_MARGIN else 0.0


def steady_rotations(r: np.ndarray, sc: np.ndarray) -> np.ndarray:
    """(F, 3, 3) rotations where frames at zero scale (no rotation can be read there) take the first readable
    frame's, so an object kept at scale 0 does not "turn" 120 degrees (the zero matrix read as a rotation)."""
    degenerate = sc.min(axis=1) < 1e-6
    if not degenerate.any():
        return r
    r = r.copy()
    r[degenerate] = r[~degenerate][0] if (~degenerate).any() else np.eye(3)
    return r


def scale_change(sc: np.ndarray) -> float:
    """Largest change of the (F, 3) axis scales relative to the first frame's; an axis at zero scale there counts
    1.0 (100 %) on a frame it has grown from nothing, 0 while it stays at zero."""
    if not len(sc):
        return 0.0
    base = sc[:1]
    rel = np.where(base > 1e-9, np.abs(sc / np.where(base > 1e-9, base, 1.0) - 1.0), (sc > 1e-6).astype(float))
    return float(np.max(rel))


def pose_motion(m: np.ndarray) -> dict[str, Any]:
    """Motion of a (F, 4, 4) world-matrix track: max translation, rotation (rad), relative scale change from
    the first frame, and a per-frame step mask."""
    F = len(m)
    x = m[:, :3, 3]
    sc = np.linalg.norm(m[:, :3, :3], axis=1)
    r = m[:, :3, :3] / np.where(sc[:, None, :] < 1e-9, 1.0, sc[:, None, :])
    if F == 0:
        return {"translation": 0.0, "rotation": 0.0, "scale": 0.0, "step": np.zeros(0, bool)}
    r = steady_rotations(r, sc)
    tr = float(np.max(np.linalg.norm(x - x[0], axis=1)))
    cos = np.clip((np.einsum("fij,ij->f", r, r[0]) - 1) / 2, -1, 1)
    rot = float(np.max(np.arccos(cos)))
    scl = scale_change(sc)
    step = np.zeros(F, bool)
    if F > 1:
        step[1:] = np.linalg.norm(np.diff(x, axis=0), axis=1) > STEP_EPS
        c2 = np.clip((np.einsum("fij,fij->f", r[1:], r[:-1]) - 1) / 2, -1, 1)
        step[1:] |= np.arccos(c2) > STEP_EPS
        step[1:] |= np.abs(np.diff(sc, axis=0)).max(axis=1) > STEP_EPS
    return {"translation": tr, "rotation": rot, "scale": scl, "step": step}


def moves(st: dict[str, Any]) -> bool:
    return (st["translation"] > MOVE_TRANSLATION or st["rotation"] > MOVE_ROTATION or st.get("scale", 0.0) > MOVE_SCALE
            or st.get("deform", 0.0) > MOVE_TRANSLATION)
