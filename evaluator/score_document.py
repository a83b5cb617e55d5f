"""The score document (SPEC §7) as a typed model: what `scoring.score_run` returns and what is read back from disk.

`physcodegym score --json`, score.json (batch units, `score --out`), the results store's `score` column and an agent
run's `score` all carry this document. Its JSON is a public contract, so `model_dump()` gives exactly the dict the
scorer always wrote: the fields in their historical order, the optional ones (`no_artifact`, `invalid_reason`,
`plot`) absent rather than null when they do not apply. A document read back from disk is validated into this
model before anything of it is believed (`read_score`); extra keys are kept (the document only grows), and the
fields added after the first stored documents (`candidate_kind`, `truth`, `codec_parity`, ...) have defaults so an
older document still reads
(and writes back as it was).
"""

from __future__ import annotations

from typing import Any, Literal

from physcodegym.metrics.results import MetricState
from pydantic import BaseModel, ConfigDict, Field


def _absent_when_none(v: Any) -> bool:
    return v is None


class MetricStatus(BaseModel):
    """A metric's state and reason, so a missing number is never mistaken for a score (SPEC §7)."""

    model_config = ConfigDict(extra="allow", use_enum_values=True, use_attribute_docstrings=True)
    state: MetricState
    """`ok` when the value is a score; otherwise why there is none (`not_applicable`, `error`, `uncomputable`)."""
    reason: str | None = None
    """Why the metric is missing, or a note on an `ok` value (a candidate with no artifact scores 0 with its reason)."""


class Coverage(BaseModel):
    """The metrics each aggregate is built from, so a partial S_vis is never mistaken for a full one (SPEC §4)."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)
    S_vis: list[str] = Field(default_factory=list)
    """The visual metrics (of S_ssim, S_lpips, S_obj) that were computed and enter S_vis."""
    S_phys: list[str] = Field(default_factory=list)
    """The physical metrics (of S_evt, S_mot, S_val) that were computed and enter S_phys."""
    S_tot: list[str] = Field(default_factory=list)
    """Every metric S_tot rests on (S_vis's, then S_phys's)."""


class TruthPart(BaseModel):
    """One truth-dependent part of the task (`tasks.loader.truth_status`): `ok` with its file, or why not."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)
    state: str
    """`ok`, or `not_applicable` for a task without it (a task imported from a real video has no truth scene)."""
    file: str | None = Field(default=None, exclude_if=_absent_when_none)
    """The shipped file this part rests on (absent when there is none)."""
    reason: str | None = Field(default=None, exclude_if=_absent_when_none)
    """Why the part is missing, or what an `ok` part means (absent when the file says it all)."""


class ScoreDocument(BaseModel):
    """The score of one candidate against one task (SPEC §4, §7): every metric with its state, and the aggregates.

    The SPEC's contract is `metrics`, `missing`, `S_vis`, `S_phys` and `S_tot`; the other fields say where the
    numbers come from and why some are missing. Field order is the JSON's key order."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)

    task: str
    """The task id the candidate was scored against (a stored score names what it scored)."""
    candidate: str
    """The candidate as given: a run folder or a video / frame folder (so the number can be traced to its input)."""
    candidate_kind: Literal["run", "video"]
    """`run` for a run folder read through its validated artifacts; `video` for a bare video or frame folder
    (which has no native scene, hence no S_val)."""
    metrics: dict[str, float | None]
    """Each of the six metrics (S_ssim, S_lpips, S_obj, S_evt, S_mot, S_val): its value in [0, 1], or None when it
    could not be computed (its reason is in `missing` and `states`), never a made-up number."""
    states: dict[str, MetricStatus]
    """Each metric's state and reason, including notes on `ok` values (the panel and the report show them)."""
    missing: dict[str, str]
    """The metrics that have no value, each with its reason (SPEC §7: `{"S_obj": "reason"}`)."""
    S_vis: float | None = Field(ge=0.0, le=1.0)
    """Mean of the computed visual metrics; None when none was computed."""
    S_phys: float | None = Field(ge=0.0, le=1.0)
    """Mean of the computed physical metrics; None when none was computed."""
    S_tot: float | None = Field(ge=0.0, le=1.0)
    """Mean of S_vis and S_phys (those that exist): the headline number; None when neither exists."""
    coverage: Coverage
    """Which metrics each aggregate is built from (a partial aggregate says so)."""
    complete: bool | None = Field(default=None, exclude_if=_absent_when_none)
    """True when every metric has a value (nothing in `missing`); absent only from documents older than it."""
    truth: dict[str, TruthPart] | None = Field(default=None, exclude_if=_absent_when_none)
    """What the task itself lacks (a task made from a real video has no truth scene), each part with its reason."""
    status: Literal["scored", "invalid"] | None = Field(default=None, exclude_if=_absent_when_none)
    """`invalid` when the candidate has no valid artifact (every requested metric then scores 0), else `scored`
    (absent only from documents older than it, where `no_artifact` says the same)."""
    no_artifact: str | None = Field(default=None, exclude_if=_absent_when_none)
    """Why the candidate has no valid artifact (present only when `status` is `invalid`)."""
    invalid_reason: str | None = Field(default=None, exclude_if=_absent_when_none)
    """The same reason under the name `run`, `audit --task` and `batch` use for an invalid run."""
    per_frame: dict[str, list[float]]
    """Per-frame curves (S_ssim, S_lpips, `motion_iou` for S_mot) for plots and the report."""
    details: dict[str, dict[str, Any]]
    """Each metric's own evidence (S_val's findings, criteria and role mapping; the judges' answers)."""
    codec_parity: dict[str, Any] | None = Field(default=None, exclude_if=_absent_when_none)
    """Whether lossless candidate frames went through the reference's encoder before the pixel metrics, and why."""
    plot: str | None = Field(default=None, exclude_if=_absent_when_none)
    """The PNG of per-frame curves and motion masks, when one was asked for and the candidate had frames."""
    timings: dict[str, float]
    """Seconds spent in each stage (decoding, each metric, total), for cost accounting."""

    @property
    def invalid(self) -> bool:
        """True when the candidate had no valid artifact (every requested metric scored 0)."""
        return self.status == "invalid" or self.no_artifact is not None

    def to_json(self) -> dict[str, Any]:
        """The document as the JSON-ready dict of the public contract (same keys, order and values as ever)."""
        return self.model_dump()


def read_score(raw: Any, source: str = "score document") -> ScoreDocument:
    """A score document read back from disk (score.json, the results store), validated into the model.

    Raises ValueError naming `source` and the offending fields when it is not a score document."""
    from pydantic import ValidationError

    try:
        return ScoreDocument.model_validate(raw)
    except ValidationError as e:
        where = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or '(document)'}: {err['msg']}"
                          for err in e.errors()[:5])
        raise ValueError(f"{source} is not a valid score document: {where}") from e
