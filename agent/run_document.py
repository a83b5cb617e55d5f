"""The agent run document (`agent_run.json`, `trace.AGENT_RUN_FILE`) as a typed model.

The agent loop and the MCP session write it after every step, `physcodegym agent` adds the final `score`, and the
panel reads it while the run goes on. Its JSON is a public contract (the CLI prints it, scripts read the file), so
`to_json()` gives exactly the dict that was always written: the fields in their historical order, the optional ones
(`transport`, `segments`, `score`) absent rather than null when they do not apply. A document read back from disk is
validated into this model before anything of it is believed (`read_agent_run`); extra keys are kept, as the
document only grows.
"""

from __future__ import annotations

from typing import Any, Literal

from physcodegym.evaluator.score_document import ScoreDocument
from pydantic import BaseModel, ConfigDict, Field


def _absent_when_none(v: Any) -> bool:
    return v is None


class BudgetSnapshot(BaseModel):
    """What is used and what is left of the run's budget (`Budget.remaining()` then `Budget.to_dict()` without
    its limits), so a reader sees the counters without re-deriving them from the trace."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)
    launches_used: int
    """Blender launches spent so far."""
    launches_left: int
    """Launches the model may still spend."""
    max_launches: int
    """The launch allowance of the run."""
    seconds_left: float
    """Wall-clock seconds left (rounded to 0.1 s)."""
    tokens_used: int
    """Input plus output tokens so far."""
    tokens_left: int | None
    """Tokens left under the token cap; None when there is no cap."""
    cost_usd: float
    """Cost so far in USD (unrounded: the counter itself)."""
    cost_left_usd: float | None
    """Cost left under the cost cap; None when there is no cap."""
    launches_by_tool: dict[str, int]
    """Launches spent per tool (run_scene, inspect_scene, render_preview)."""
    input_tokens: int
    """Input tokens so far (the panel adds them to the output tokens)."""
    output_tokens: int
    """Output tokens so far."""
    steps: int
    """Model turns (MCP: tool calls) so far."""
    elapsed_before_s: float
    """Wall clock spent in earlier segments of a resumed run."""
    elapsed_s: float
    """Wall clock spent over all segments so far."""


class BudgetLimitsSnapshot(BaseModel):
    """The limits the run was started with (`agent.budget.BudgetLimits`), so the counters can be read against them."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)
    max_launches: int
    """Blender launches allowed."""
    wall_clock_s: float
    """Wall-clock seconds allowed over all segments."""
    max_tokens: int | None
    """Token cap over the run; None when there is none."""
    max_cost_usd: float | None
    """Cost cap in USD; None when there is none."""
    max_steps: int
    """Model turns allowed (a guard against a model that never stops)."""


class LaunchEntry(BaseModel):
    """One Blender launch of the run, as the toolbox recorded it (its folder under `launches/` holds the rest)."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)
    launch: int | None
    """The launch number (1-based)."""
    tool: str | None
    """The tool that launched Blender (run_scene, inspect_scene, render_preview)."""
    mode: str | None
    """The tool's mode (`full`, `bake_only`, `inspect`, ...)."""
    status: str | None
    """The launch's outcome (`ok`, `failed`, `timeout`, `policy`, `invalid`)."""
    revision: int | None
    """The scene.py revision that ran; None when not recorded (an inspection)."""
    seconds: float | None
    """Seconds the launch took; None when not recorded (an inspection)."""


class ScoreUnavailable(BaseModel):
    """Why an agent run has no score (its scoring failed, or it ended without a finalized submission), so a missing
    score is never mistaken for one."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)
    state: Literal["error", "no_submission"]
    """`error` when scoring the submission failed; `no_submission` when the run ended without finalizing."""
    reason: str
    """What failed, or how the run ended."""
    S_tot: float | None = Field(default=None, exclude_if=_absent_when_none)
    """0.0 for `no_submission` (a run that submitted nothing scores zero); absent for `error`."""


class AgentRunDocument(BaseModel):
    """The agent run document of a run in progress or ended: status, budget, launches and, once scored, its score.

    Field order is the JSON's key order (a public contract)."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)

    status: str
    """running | finalized | budget_exhausted | stopped | provider_error."""
    reason: str
    """Why the run is in that status (empty while running)."""
    task: str
    """The task id the run works on."""
    provider: str
    """The model provider (`mcp` for an MCP session)."""
    model: str
    """The model name (an MCP session: the client's name)."""
    transport: str | None = Field(default=None, exclude_if=_absent_when_none)
    """The MCP session's transport (`stdio`, `http`); absent for the agent loop."""
    run_dir: str
    """The run folder (absolute for an MCP session)."""
    started: str
    """When the run first started (UTC, ISO 8601)."""
    updated: str
    """When this document was written (UTC, ISO 8601), so a reader can tell a stale one."""
    steps: int
    """Model turns (MCP: tool calls) so far."""
    segments: int | None = Field(default=None, exclude_if=_absent_when_none)
    """The MCP session's connection segment; absent for the agent loop."""
    budget: BudgetSnapshot
    """What is used and left of the budget."""
    limits: BudgetLimitsSnapshot
    """The budget's limits."""
    revisions: int
    """scene.py revisions saved so far."""
    launches: list[LaunchEntry]
    """Every Blender launch, in order."""
    finalized: dict[str, Any] | None
    """The finalized launch (`launch`, `revision`, `scene_sha256`); None until the agent finalizes."""
    submission: str | None
    """`submission` (the folder in the run folder) once finalized, else None."""
    trace: str
    """The run's trace file in the run folder."""
    score: ScoreDocument | ScoreUnavailable | None = Field(default=None, exclude_if=_absent_when_none)
    """The submission's score document, or why there is none; absent until `physcodegym agent` scores the run."""

    def to_json(self) -> dict[str, Any]:
        """The document as the JSON-ready dict of the public contract (same keys, order and values as ever)."""
        return self.model_dump()


def read_score_field(raw: Any) -> ScoreDocument | ScoreUnavailable | None:
    """A stored `score` value validated into its model, or None when it is not one (a rewrite then drops it)."""
    from pydantic import TypeAdapter, ValidationError

    try:
        return TypeAdapter(ScoreDocument | ScoreUnavailable).validate_python(raw)
    except ValidationError:
        return None


def read_agent_run(raw: Any, source: str = "agent run document") -> AgentRunDocument:
    """An agent run document read back from disk, validated into the model.

    Raises ValueError naming `source` and the offending fields when it is not an agent run document."""
    from pydantic import ValidationError

    try:
        return AgentRunDocument.model_validate(raw)
    except ValidationError as e:
        where = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or '(document)'}: {err['msg']}"
                          for err in e.errors()[:5])
        raise ValueError(f"{source} is not a valid agent run document: {where}") from e
