"""Task-independent audit findings (SPEC §5): the vocabulary and the report shape.

Pure pydantic, no bpy, so scorers, reports and the Blender panel can all read an audit result
without importing Blender.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

# SPEC §5, in the order the table lists them.
FINDING_KINDS: tuple[str, ...] = (
    "scripted_motion",
    "unexplained_force_field",
    "interpenetration",
    "hidden_support",
    "collider_mismatch",
    "energy_gain",
    "no_contact_response",
    "self_intersection",
    "numerical_instability",
    "not_simulated",
    "non_physical_parameter",
    "stale_cache",
)


class Finding(BaseModel):
    """One violation with the evidence needed to check it by hand (objects, frames, measured value)."""

    kind: str
    objects: list[str] = Field(default_factory=list)
    frames: list[int] = Field(default_factory=list)  # [first, last] of the witness range, or witness frames
    value: float | None = None
    unit: str | None = None
    message: str
    evidence: dict[str, Any] = Field(default_factory=dict)

    def model_post_init(self, __context: Any) -> None:
        if self.kind not in FINDING_KINDS:
            raise ValueError(f"unknown finding kind {self.kind!r}; known: {', '.join(FINDING_KINDS)}")

    def public(self, with_evidence: bool = True) -> dict[str, Any]:
        d = self.model_dump()
        if not with_evidence:
            d.pop("evidence", None)
        return d


class AuditReport(BaseModel):
    findings: list[Finding] = Field(default_factory=list)
    samples_path: str | None = None
    scene: dict[str, Any] = Field(default_factory=dict)  # scene summary: objects, core objects, cache state
    timings: dict[str, float] = Field(default_factory=dict)  # seconds per audit stage
    meta: dict[str, Any] = Field(default_factory=dict)

    def kinds(self) -> set[str]:
        return {f.kind for f in self.findings}

    def by_kind(self, kind: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]

    def save(self, path: str | Path) -> None:
        """Write atomically (`core.atomic`) so a crash never leaves half a report."""
        from physcodegym.core import atomic

        atomic.write_text(Path(path), json.dumps(self.model_dump(), indent=1, default=_json_default))

    @classmethod
    def load(cls, path: str | Path) -> AuditReport:
        return cls.model_validate_json(Path(path).read_text())


def _json_default(o: Any) -> Any:
    try:
        import numpy as np

        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
    except ImportError:  # pragma: no cover
        pass
    return str(o)
