"""Task schema (SPEC §2): one `task.json` per task folder, validated with pydantic v2.

Everything a scorer, a probe or a judge needs to know about a task is declared here, so a malformed
task is refused with the file, the field path and the problem instead of failing deep inside a run.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SCHEMA_VERSION = "1.0"
FPS = 30
FRAMES = 240
SCORE_WIDTH, SCORE_HEIGHT = 640, 360


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Category(str, Enum):
    rigid = "rigid"
    liquid = "liquid"
    deformable = "deformable"
    wind = "wind"


class Subcategory(str, Enum):
    falling_bouncing = "falling-bouncing"
    rolling_tracks = "rolling-tracks"
    collision_chain = "collision-chain"
    swinging_suspension = "swinging-suspension"
    rotation = "rotation"
    granular_piling = "granular-piling"
    stacking_equilibrium = "stacking-equilibrium"
    pouring_filling = "pouring-filling"
    jets_surface_flow = "jets-surface-flow"
    liquid_object = "liquid-object"


SUBCATEGORIES: dict[Category, tuple[Subcategory, ...]] = {
    Category.rigid: (
        Subcategory.falling_bouncing,
        Subcategory.rolling_tracks,
        Subcategory.collision_chain,
        Subcategory.swinging_suspension,
        Subcategory.rotation,
        Subcategory.granular_piling,
        Subcategory.stacking_equilibrium,
    ),
    Category.liquid: (Subcategory.pouring_filling, Subcategory.jets_surface_flow, Subcategory.liquid_object),
    Category.deformable: (),
    Category.wind: (),
}


# The size and spread of the benchmark this product implements (SPEC §8): tasks per subcategory (per category
# where a category has none) and event items in all. `physcodegym tasks list --summary` counts the set against it.
TARGET_COUNTS: dict[str, int] = {
    "falling-bouncing": 16, "rolling-tracks": 18, "collision-chain": 14, "swinging-suspension": 16, "rotation": 20,
    "granular-piling": 7, "stacking-equilibrium": 4,
    "pouring-filling": 25, "jets-surface-flow": 8, "liquid-object": 7,
    "deformable": 12, "wind": 9,
}
TARGET_EVENT_ITEMS = 578


class TimeInterval(_Strict):
    """Evidence interval in seconds of the reference video (0 <= start <= end <= 8)."""

    start_s: float = Field(ge=0.0, le=FRAMES / FPS)
    end_s: float = Field(ge=0.0, le=FRAMES / FPS)

    @model_validator(mode="after")
    def _ordered(self) -> TimeInterval:
        if self.end_s < self.start_s:
            raise ValueError(f"end_s ({self.end_s}) is before start_s ({self.start_s})")
        return self

    @property
    def start_frame(self) -> int:
        return int(round(self.start_s * FPS)) + 1

    @property
    def end_frame(self) -> int:
        return min(FRAMES, int(round(self.end_s * FPS)) + 1)


class VideoSpec(_Strict):
    file: str = "reference.mp4"
    fps: int = FPS
    frames: int = FRAMES
    width: int = 640
    height: int = 360

    @field_validator("fps")
    @classmethod
    def _fps(cls, v: int) -> int:
        if v != FPS:
            raise ValueError(f"reference videos are {FPS} fps, got {v}")
        return v

    @field_validator("frames")
    @classmethod
    def _frames(cls, v: int) -> int:
        if v != FRAMES:
            raise ValueError(f"reference videos have {FRAMES} frames (8 s at 30 fps), got {v}")
        return v


class Role(_Strict):
    """A semantic role (e.g. `incoming_ball`) that rubric criteria and events refer to."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str
    core: bool = True  # core objects must move by simulation (SPEC §3)
    truth_object: str | None = None  # object name in truth.py's scene
    name_hints: list[str] = Field(default_factory=list)  # substrings for name matching in candidates
    screen_xy: tuple[float, float] | None = None  # first-frame image position, normalised (0..1, origin top-left)
    color_rgb: tuple[float, float, float] | None = None  # dominant linear colour 0..1 in the reference
    required: bool = True


class ChecklistItem(_Strict):
    id: str
    category: str  # object category, e.g. "ball", "domino", "glass"
    count: int = Field(ge=1)
    attributes: list[str] = Field(default_factory=list)  # appearance: colour, material, size
    layout: str = ""  # initial spatial layout in words
    roles: list[str] = Field(default_factory=list)


class EventKind(str, Enum):
    action = "action"
    order = "order"
    final_state = "final_state"
    persistence = "persistence"


class EventItem(_Strict):
    id: str
    kind: EventKind = EventKind.action
    description: str
    roles: list[str] = Field(min_length=1)
    interval: TimeInterval
    weight: float = Field(gt=0)
    key: bool = False  # a failed key item caps S_evt at 0
    after: list[str] = Field(default_factory=list)  # ids of items that must happen before this one
    persists_until_s: float | None = Field(default=None, ge=0.0, le=FRAMES / FPS)
    evidence: str = ""  # how the interval was measured from the truth trajectories


# Checks a criterion can name, with the parameters each requires. The implementations live in
# verifier/checks.py; the list is here so a task is validated before anything runs.
CHECKS: dict[str, tuple[str, ...]] = {
    "moves_by_simulation": (),  # roles move, and their motion comes from a solver (no scripted motion)
    "no_scripted_motion": (),
    "supported_by": ("support",),  # roles rest on the support role's material (not hidden/absent colliders)
    "contacts": ("other",),  # roles come into material contact with `other` (optionally before_s)
    "no_interpenetration": (),  # no solid overlap among roles (and with `others` if given)
    "energy_non_increasing": (),  # passive mechanical energy of roles never rises beyond tolerance
    "pinned": ("group",),  # cloth vertex group stays fixed
    "responds_to": ("field",),  # roles' motion depends on the named field role (via counterfactual)
    "stays_within": ("container",),  # particles / bodies stay inside the container's bounds
    "no_self_intersection": (),
    "numerically_stable": (),
    "collider_matches_mesh": (),
    "audit_clean": (),  # no audit finding of `kinds` (param, optional) on roles
    "counterfactual": (),  # evaluated by the criterion's `counterfactual` block
}


class InterventionKind(str, Enum):
    disable_contact = "disable_contact"  # roles[0] and roles[1] stop colliding (collision collections)
    remove_object = "remove_object"
    remove_support = "remove_support"
    shift_release = "shift_release"  # params: offset [dx, dy, dz] metres
    set_velocity = "set_velocity"  # params: velocity [vx, vy, vz] m/s (kinematic hand-off)
    disable_field = "disable_field"
    disable_actuator = "disable_actuator"
    scale_gravity = "scale_gravity"  # params: factor
    enable_collider = "enable_collider"  # used by controls: give roles an operative collider
    disable_joint = "disable_joint"  # the roles' rigid-body constraints (their holders) switched off


class Intervention(_Strict):
    kind: InterventionKind
    roles: list[str] = Field(default_factory=list)
    params: dict[str, Any] = Field(default_factory=dict)
    from_frame: int | None = Field(default=None, ge=1, le=FRAMES)  # None: from the first frame


class Comparison(str, Enum):
    lt = "lt"
    le = "le"
    gt = "gt"
    ge = "ge"


class ExpectedResponse(_Strict):
    """What the intervened scene must show, measured on the native trajectories."""

    measure: Literal[
        "displacement", "max_displacement", "final_height", "min_height", "path_deviation", "particles_inside",
        "vertex_displacement"
    ]
    role: str
    at_s: float | None = Field(default=None, ge=0.0, le=FRAMES / FPS)
    op: Comparison
    value: float
    unit: str = "m"
    relative_to_baseline: bool = False  # compare value to (intervened / baseline) ratio instead of absolute
    # motion of these must match baseline up to preserved_until_s
    preserved_roles: list[str] = Field(default_factory=list)
    preserved_until_s: float | None = None
    preserve_tolerance_m: float = 0.02


class CounterfactualSpec(_Strict):
    intervention: Intervention
    expected: ExpectedResponse
    control: Intervention | None = None  # matched control (e.g. enable_collider) that must respond


class Criterion(_Strict):
    id: str
    description: str
    weight: float = Field(gt=0)
    roles: list[str] = Field(default_factory=list)
    check: str
    params: dict[str, Any] = Field(default_factory=dict)
    thresholds: dict[str, float] = Field(default_factory=dict)
    structural: bool = False  # a failed structural criterion caps S_val
    cap: float | None = Field(default=None, ge=0.0, le=1.0)  # cap applied on failure (default: rubric's)
    evidence: str = ""  # what the check measures, in words
    counterfactual: CounterfactualSpec | None = None

    @model_validator(mode="after")
    def _check_known(self) -> Criterion:
        if self.check not in CHECKS:
            raise ValueError(f"unknown check {self.check!r}; known: {', '.join(sorted(CHECKS))}")
        missing = [p for p in CHECKS[self.check] if p not in self.params]
        if missing:
            raise ValueError(f"check {self.check!r} needs params {missing}")
        if self.check == "counterfactual" and self.counterfactual is None:
            raise ValueError("check 'counterfactual' needs a `counterfactual` block")
        return self


# What a task-independent validity finding caps S_val at, whether or not a criterion names it (SPEC §5).
# Findings that mean the motion is not the simulation's (or not physical) cap like a failed structural
# criterion; geometric defects of an otherwise simulated scene cap a little higher.
DEFAULT_FINDING_CAPS: dict[str, float] = {
    "scripted_motion": 0.5,
    "not_simulated": 0.5,
    "hidden_support": 0.5,
    "unexplained_force_field": 0.5,
    "no_contact_response": 0.5,
    "energy_gain": 0.5,
    "non_physical_parameter": 0.5,
    "interpenetration": 0.7,
    "collider_mismatch": 0.7,
    "self_intersection": 0.7,
    "numerical_instability": 0.7,
    "stale_cache": 0.5,  # the bake is not the saved scene's physics: no verdict on it can be trusted
}


class Aggregation(_Strict):
    rule: Literal["capped_weighted_mean"] = "capped_weighted_mean"
    default_cap: float = Field(default=0.5, ge=0.0, le=1.0)
    # per finding kind: S_val is capped at this when the audit reports it (kinds not listed: DEFAULT_FINDING_CAPS)
    finding_caps: dict[str, float] = Field(default_factory=dict)

    def finding_cap(self, kind: str) -> float:
        return float(self.finding_caps.get(kind, DEFAULT_FINDING_CAPS.get(kind, self.default_cap)))


# Rigid-body constraint (joint) and force-field types of Blender that a rubric can admit. A joint or field
# that measurably changes the motion and whose type the task does not admit has no counterpart in the
# video: a glued stack, a hidden motor pumping a swing, a wind nobody sees (SPEC §5).
JOINT_TYPES: tuple[str, ...] = ("FIXED", "POINT", "HINGE", "SLIDER", "PISTON", "GENERIC", "GENERIC_SPRING", "MOTOR")
FIELD_TYPES: tuple[str, ...] = ("FORCE", "WIND", "VORTEX", "MAGNET", "HARMONIC", "CHARGE", "LENNARDJ", "TEXTURE",
                                "GUIDE", "BOID", "TURBULENCE", "DRAG", "FLUID_FLOW")
_TYPE_WORD = re.compile(r"\b(" + "|".join(sorted(JOINT_TYPES + FIELD_TYPES, key=len, reverse=True)) + r")\b")


class Rubric(_Strict):
    initial_conditions: list[str] = Field(default_factory=list)  # permitted initial conditions
    actuation: list[str] = Field(default_factory=list)  # permitted actuators
    equivalent_representations: list[str] = Field(default_factory=list)
    # joint and field types the video explains (JOINT_TYPES, FIELD_TYPES); None: the type names written in
    # capitals in `actuation` and `equivalent_representations` ("a MOTOR rigid-body constraint", "a WIND field")
    admits: list[str] | None = None
    criteria: list[Criterion] = Field(min_length=1)
    aggregation: Aggregation = Field(default_factory=Aggregation)
    # effective gravity of every solver must be Earth's within this relative tolerance (non_physical_parameter)
    earth_gravity_tolerance: float = Field(default=0.1, gt=0.0, le=10.0)

    @field_validator("admits")
    @classmethod
    def _known_types(cls, v: list[str] | None) -> list[str] | None:
        if v is not None:
            bad = [t for t in v if t not in JOINT_TYPES + FIELD_TYPES]
            if bad:
                raise ValueError(f"unknown joint/field types {bad}; known: {', '.join(JOINT_TYPES + FIELD_TYPES)}")
        return v

    def admitted_types(self) -> set[str]:
        """Joint and field types this task admits as actuators or equivalent representations."""
        if self.admits is not None:
            return set(self.admits)
        words: set[str] = set()
        for line in [*self.actuation, *self.equivalent_representations]:
            words.update(_TYPE_WORD.findall(line))
        return words


class TruthInfo(_Strict):
    program: str = "truth.py"
    trajectories: str = "truth_trajectories.npz"
    counterfactuals: str | None = "truth_counterfactuals.json"
    program_sha256: str | None = None


class HeldFrames(_Strict):
    """Frames the source did not cover (a clip shorter than 8 s): the last source frame is repeated."""

    from_frame: int = Field(ge=1, le=FRAMES)  # first 1-based reference frame that repeats the last source frame
    count: int = Field(ge=1, le=FRAMES)
    source_ends_s: float = Field(ge=0.0, le=FRAMES / FPS)  # reference time where the real footage stops


class Letterbox(_Strict):
    """Where the source picture sits inside the 640x360 reference (pixels); the rest is black bars."""

    x: int = Field(ge=0)
    y: int = Field(ge=0)
    width: int = Field(ge=1)
    height: int = Field(ge=1)


class SourceInfo(_Strict):
    """Provenance of a task made from a real video (`physcodegym tasks import`): what the clip was and
    what normalising it did, so the reference can be traced back to (and re-made from) the original file."""

    file: str  # the original file's name (no folder: a task folder is shareable)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    fps: float  # container's nominal rate; `variable_frame_rate` says whether the timestamps kept to it
    variable_frame_rate: bool = False
    frames: int = Field(ge=1)  # frames decoded
    width: int = Field(ge=1)  # coded size, before rotation
    height: int = Field(ge=1)
    rotation_deg: int = 0  # display rotation from the container's metadata, applied while decoding
    sample_aspect_ratio: float = 1.0
    duration_s: float = Field(ge=0.0)  # from the decoded timestamps
    trim_start_s: float = Field(default=0.0, ge=0.0)
    trim_end_s: float = Field(ge=0.0)
    letterbox: Letterbox
    held: HeldFrames | None = None
    resampling: str = "nearest source frame in time to each 30 fps reference frame"
    encoder: str = ""
    encode_ssim_mean: float | None = None  # decoded reference vs the normalised frames (what encoding lost)
    url: str | None = Field(default=None, pattern=r"^https?://\S+$")  # where the clip came from, if the user says
    licence: str | None = Field(default=None, min_length=1)  # the licence as the user states it, not checked


HEX64 = r"^[0-9a-f]{64}$"


class GeneratedProvenance(_Strict):
    """Where a generated task's reference came from (SPEC §8): the program that made it and how it was rendered.
    Lives in the task's `build.json` (its build seconds change every build; task.json stays reproducible)."""

    kind: Literal["generated"] = "generated"
    program_sha256: str = Field(pattern=HEX64)
    engine: str = Field(min_length=1)  # the render engine of the saved truth scene (CYCLES, BLENDER_WORKBENCH, ...)
    samples: int | None = Field(default=None, ge=1)  # samples a pixel (None: an engine without samples)
    build_seconds: float = Field(ge=0.0)  # bake + every frame's render (all sessions) + encode and sampling
    blender: str | None = None  # the Blender version that rendered it


class ImportedProvenance(_Strict):
    """Where an imported task's reference came from (SPEC §8): the user's clip, as the user describes it."""

    kind: Literal["imported"] = "imported"
    file: str = Field(min_length=1)  # the original file's name
    sha256: str = Field(pattern=HEX64)
    url: str | None = None
    licence: str | None = None  # as the user states it; None: not stated


class RenderRecord(BaseModel):
    """What rendered a generated reference, as `build.json` records it (unknown keys kept: additive)."""

    model_config = ConfigDict(extra="allow")
    engine: str = Field(min_length=1)
    samples: int | None = Field(default=None, ge=1)
    width: int = Field(ge=1)
    height: int = Field(ge=1)
    frames_total: int = Field(ge=1)
    frames_reused: int = Field(ge=0)
    frames_rendered: int = Field(ge=0)
    seconds_per_frame: float = Field(ge=0.0)


class BuildRecord(BaseModel):
    """`build.json` of a generated task: what its build measured. Records written before provenance was kept
    (no `provenance`, no `render`) still load; unknown keys are kept (the record only grows)."""

    model_config = ConfigDict(extra="allow")
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    build_seconds: float = Field(ge=0.0)
    program_sha256: str | None = Field(default=None, pattern=HEX64)
    render: RenderRecord | None = None
    provenance: GeneratedProvenance | None = None

    @model_validator(mode="after")
    def _same_program(self) -> BuildRecord:
        if self.provenance and self.program_sha256 and self.provenance.program_sha256 != self.program_sha256:
            raise ValueError("provenance.program_sha256 differs from program_sha256")
        return self


class Task(_Strict):
    schema_version: str = SCHEMA_VERSION
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    title: str
    category: Category
    subcategory: Subcategory | None = None
    summary: str = ""  # one line for listings; never shown to the agent (it sees only the video)
    video: VideoSpec = Field(default_factory=VideoSpec)
    roles: list[Role] = Field(default_factory=list)
    checklist: list[ChecklistItem] = Field(min_length=1)
    events: list[EventItem] = Field(min_length=1)
    rubric: Rubric
    truth: TruthInfo | None = None  # shipped tasks; user tasks made from their own video have none
    source: SourceInfo | None = None  # tasks imported from a real video: where the reference came from

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        allowed = SUBCATEGORIES[self.category]
        if allowed and self.subcategory is None:
            raise ValueError(f"category {self.category.value!r} needs a subcategory "
                             f"({', '.join(s.value for s in allowed)})")
        if not allowed and self.subcategory is not None:
            raise ValueError(f"category {self.category.value!r} has no subcategories, got {self.subcategory.value!r}")
        if allowed and self.subcategory not in allowed:
            raise ValueError(f"subcategory {self.subcategory.value!r} is not in category {self.category.value!r}")
        roles = {r.name for r in self.roles}
        if len(roles) != len(self.roles):
            raise ValueError("duplicate role names")

        def _need(where: str, names: list[str]) -> None:
            unknown = [n for n in names if n not in roles]
            if unknown:
                raise ValueError(f"{where} names unknown roles {unknown}; declared: {sorted(roles)}")

        ids = [e.id for e in self.events]
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate event ids")
        for e in self.events:
            _need(f"event {e.id!r}", e.roles)
            bad = [a for a in e.after if a not in ids]
            if bad:
                raise ValueError(f"event {e.id!r} is ordered after unknown events {bad}")
        for c in self.checklist:
            _need(f"checklist item {c.id!r}", c.roles)
        cids = [c.id for c in self.rubric.criteria]
        if len(set(cids)) != len(cids):
            raise ValueError("duplicate criterion ids")
        for c in self.rubric.criteria:
            _need(f"criterion {c.id!r}", c.roles)
            for key in ("support", "other", "field", "container"):
                if key in c.params and isinstance(c.params[key], str):
                    _need(f"criterion {c.id!r} param {key!r}", [c.params[key]])
            if c.counterfactual:
                cf = c.counterfactual
                _need(f"criterion {c.id!r} intervention", cf.intervention.roles)
                _need(f"criterion {c.id!r} expected response", [cf.expected.role, *cf.expected.preserved_roles])
                if cf.control:
                    _need(f"criterion {c.id!r} control", cf.control.roles)
        return self

    def role(self, name: str) -> Role:
        for r in self.roles:
            if r.name == name:
                return r
        raise KeyError(name)


class DraftRubric(Rubric):
    """A rubric still being written: no criterion yet is allowed (see DraftTask)."""

    criteria: list[Criterion] = Field(default_factory=list)


class DraftTask(Task):
    """A task skeleton an annotator is still filling in (an imported video): every field is checked like a
    Task's, but the checklist, events and rubric criteria may be empty. It is loaded only where a task is
    authored (the panel, `tasks validate`); scoring loads a Task, so an incomplete task is never scored."""

    checklist: list[ChecklistItem] = Field(default_factory=list)
    events: list[EventItem] = Field(default_factory=list)
    rubric: DraftRubric = Field(default_factory=DraftRubric)


def missing_annotations(task: Task) -> list[dict[str, str]]:
    """What an annotator still has to provide before the task can be scored (empty: nothing)."""
    out = []
    if not task.checklist:
        out.append({"field": "checklist", "need": "at least one object item (category, count, attributes, roles)"})
    if not task.events:
        out.append({"field": "events", "need": "at least one event with its roles, start_s/end_s and weight"})
    if not task.rubric.criteria:
        out.append({"field": "rubric.criteria", "need": "at least one criterion (check, roles, weight) for S_val"})
    if not task.roles:
        out.append({"field": "roles", "need": "the roles the checklist, events and criteria name"})
    return out
