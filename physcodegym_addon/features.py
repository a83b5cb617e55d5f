"""Which capabilities the panel can offer right now, and why not when it cannot.

Other parts of the toolkit (audit, counterfactuals, agent, score) and optional heavy dependencies (LPIPS,
torch, matplotlib) may be absent from a given Blender: the UI greys the matching buttons out with the
reason returned here instead of failing when clicked.
"""

from __future__ import annotations

import importlib.util
from functools import cache

# capability -> modules that must be importable (first missing one is the reason)
REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "tasks": ("pydantic", "physcodegym.tasks.loader"),
    "audit": ("physcodegym.probes.audit.audit", "physcodegym.headless.commands.audit"),
    "rubric_eval": ("physcodegym.verifier.rubric_eval", "scipy"),  # role mapping solves an assignment with scipy
    "counterfactual": (
        "physcodegym.probes.branches.counterfactual",
        "physcodegym.probes.rebake.cf_worker",
        "physcodegym.probes.branches.interventions",
    ),
    "agent": ("physcodegym.headless.commands.agent", "requests"),
    # video decode, SSIM; the child's output is read back as a validated score document (pydantic)
    "score": ("physcodegym.headless.commands.score", "physcodegym.evaluator.score_document", "pydantic", "cv2",
              "skimage", "scipy"),
    "lpips": ("torch", "lpips"),
    "matplotlib": ("matplotlib",),
}


def _spec_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package is missing
        return False


@cache
def _status(name: str) -> tuple[bool, str]:
    for mod in REQUIREMENTS[name]:
        if not _spec_exists(mod):
            return False, f"not available: {mod} missing"
    return True, ""


def status(name: str) -> tuple[bool, str]:
    """(available, reason) for one capability; cached (call `refresh()` after installing something)."""
    return _status(name)


def available(name: str) -> bool:
    return _status(name)[0]


def reason(name: str) -> str:
    return _status(name)[1]


def refresh() -> None:
    _status.cache_clear()
    importlib.invalidate_caches()
