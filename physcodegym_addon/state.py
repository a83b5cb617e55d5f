"""Session-only state the panel needs but the .blend should not carry (witness geometry, trajectories).

Keyed by scene name; cleared on unregister. Everything here can be re-derived (re-run the audit or
the counterfactual), so losing it on reload loses no work.
"""

from __future__ import annotations

from typing import Any

WITNESS: dict[str, dict[str, Any]] = {}  # scene name -> {"points", "segments", "polylines", "label"}
TRAJECTORIES: dict[str, dict[str, Any]] = {}  # scene name -> {"baseline": {obj: (F,3)}, "intervened": {...}}
LAST_INTERVENTION: dict[str, dict[str, Any]] = {}  # scene name -> intervention spec of the last counterfactual run


def clear() -> None:
    WITNESS.clear()
    TRAJECTORIES.clear()
    LAST_INTERVENTION.clear()
