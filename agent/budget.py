"""Launch / wall-clock / token / cost budgets of one agent run (SPEC §6: 20 launches, 3 h).

The budget is stated in every tool result so the model can plan; it is serialisable so a resumed
run continues with what was left, not with a fresh allowance.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

DEFAULT_MAX_LAUNCHES = 20
DEFAULT_WALL_CLOCK_S = 3 * 3600.0


@dataclass
class BudgetLimits:
    max_launches: int = DEFAULT_MAX_LAUNCHES
    wall_clock_s: float = DEFAULT_WALL_CLOCK_S
    max_tokens: int | None = None  # input + output tokens over the whole run
    max_cost_usd: float | None = None
    max_steps: int = 400  # model turns; a guard against a model that never stops


@dataclass
class Budget:
    limits: BudgetLimits = field(default_factory=BudgetLimits)
    launches_used: int = 0
    launches_by_tool: dict[str, int] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    steps: int = 0
    elapsed_before_s: float = 0.0  # wall clock spent in earlier segments of a resumed run
    _segment_start: float = field(default_factory=time.monotonic, repr=False)

    # -- accounting -------------------------------------------------------------------------
    @property
    def elapsed_s(self) -> float:
        return self.elapsed_before_s + (time.monotonic() - self._segment_start)

    @property
    def launches_left(self) -> int:
        return max(0, self.limits.max_launches - self.launches_used)

    def can_launch(self) -> bool:
        return self.launches_left > 0

    def use_launch(self, tool: str) -> int:
        """Count one Blender launch; returns the launch number (1-based)."""
        if not self.can_launch():
            raise RuntimeError("launch budget exhausted")
        self.launches_used += 1
        self.launches_by_tool[tool] = self.launches_by_tool.get(tool, 0) + 1
        return self.launches_used

    def add_usage(self, input_tokens: int, output_tokens: int, cost_usd: float) -> None:
        self.input_tokens += int(input_tokens or 0)
        self.output_tokens += int(output_tokens or 0)
        self.cost_usd += float(cost_usd or 0.0)

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def exhausted(self) -> str | None:
        """Why the run must stop now (wall clock, tokens, cost, steps), or None.

        Launch exhaustion is not here: the model may still observe, check and finalize.
        """
        lim = self.limits
        if self.elapsed_s >= lim.wall_clock_s:
            return f"wall-clock limit reached ({self.elapsed_s:.0f} s of {lim.wall_clock_s:.0f} s)"
        if lim.max_tokens is not None and self.tokens >= lim.max_tokens:
            return f"token cap reached ({self.tokens} of {lim.max_tokens})"
        if lim.max_cost_usd is not None and self.cost_usd >= lim.max_cost_usd:
            return f"cost cap reached (${self.cost_usd:.4f} of ${lim.max_cost_usd:.4f})"
        if self.steps >= lim.max_steps:
            return f"step limit reached ({self.steps} of {lim.max_steps})"
        return None

    # -- reporting --------------------------------------------------------------------------
    def remaining(self) -> dict:
        lim = self.limits
        return {
            "launches_used": self.launches_used,
            "launches_left": self.launches_left,
            "max_launches": lim.max_launches,
            "seconds_left": round(max(0.0, lim.wall_clock_s - self.elapsed_s), 1),
            "tokens_used": self.tokens,
            "tokens_left": None if lim.max_tokens is None else max(0, lim.max_tokens - self.tokens),
            "cost_usd": round(self.cost_usd, 6),
            "cost_left_usd": None if lim.max_cost_usd is None else round(max(0.0, lim.max_cost_usd - self.cost_usd), 6),
        }

    def line(self) -> str:
        """One line appended to every tool result."""
        r = self.remaining()
        parts = [f"launches left {r['launches_left']}/{r['max_launches']}"]
        if self.limits.wall_clock_s < 1e8:  # the shell tools leave the clock to Harbor
            parts.append(f"time left {r['seconds_left'] / 60:.1f} min")
        if r["tokens_left"] is not None:
            parts.append(f"tokens left {r['tokens_left']}")
        if r["cost_left_usd"] is not None:
            parts.append(f"cost left ${r['cost_left_usd']:.4f}")
        if r["launches_left"] == 1:
            parts.append("this is your LAST launch: use it for the final full run of the final scene.py")
        elif r["launches_left"] == 0:
            parts.append("no launches left: finalize now if your last full run is valid")
        return "[budget] " + ", ".join(parts)

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("_segment_start", None)
        d["elapsed_s"] = round(self.elapsed_s, 3)
        return d

    @classmethod
    def from_dict(cls, d: dict, limits: BudgetLimits | None = None) -> Budget:
        """Restore counters from a snapshot; `limits` (from the command line) override stored ones."""
        lim = limits or BudgetLimits(**d.get("limits", {}))
        return cls(
            limits=lim,
            launches_used=int(d.get("launches_used", 0)),
            launches_by_tool=dict(d.get("launches_by_tool", {})),
            input_tokens=int(d.get("input_tokens", 0)),
            output_tokens=int(d.get("output_tokens", 0)),
            cost_usd=float(d.get("cost_usd", 0.0)),
            steps=int(d.get("steps", 0)),
            elapsed_before_s=float(d.get("elapsed_s", d.get("elapsed_before_s", 0.0))),
        )
