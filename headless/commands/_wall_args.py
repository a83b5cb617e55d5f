"""The `--unsafe-no-isolation` flag of the commands that open a submitted scene in a walled child (audit,
counterfactual): one wording of the refusal, so both commands answer a host without bubblewrap alike."""

from __future__ import annotations

import argparse

from physcodegym.core.errors import InputError


def wall_mode(args: argparse.Namespace) -> str:
    """The wall's isolation mode for these arguments; a bad-input error naming the flag when the wall cannot run."""
    from physcodegym.sandbox import wall

    mode = wall.mode_for(bool(getattr(args, "unsafe_no_isolation", False)))
    try:
        wall.require_wall(mode)
    except wall.IsolationUnavailable as e:
        raise InputError(str(e), field="--unsafe-no-isolation") from e
    return mode
