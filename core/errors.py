"""Errors the command line maps to exit codes: `InputError` -> 2, anything else -> 1.

A leaf module: every layer raises `InputError` for bad user input, and `from_validation` turns a pydantic
`ValidationError` into one with the located field, so the task loader, the rubric editor and the CLI all
word a schema problem the same way.
"""

from __future__ import annotations

from typing import Any


class InputError(Exception):
    """Bad input from the user: names the file and the field so it can be fixed without reading code."""

    def __init__(self, message: str, file: str | None = None, field: str | None = None, **extra: object) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.field = field
        self.extra = extra

    def to_dict(self) -> dict:
        d = {"type": "input", "message": self.message, "file": self.file, "field": self.field}
        d.update(self.extra)
        return d

    def __str__(self) -> str:
        where = ": ".join(x for x in (self.file, self.field) if x)
        return f"{where}: {self.message}" if where else self.message


def format_loc(loc: tuple | list) -> str:
    """A pydantic error location as a dotted path with list indices: `rubric.criteria[2].weight`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


def from_validation(exc: Any, file: str | None = None, prefix: str | None = None) -> InputError:
    """One `InputError` for a pydantic `ValidationError`: the first problem's message and field, all problems listed.

    `prefix` names where the validated document came from when it is not a file (for example `--intervention`).
    """
    errs = exc.errors()
    first = errs[0]
    more = f" (and {len(errs) - 1} more problems)" if len(errs) > 1 else ""

    def where(loc: Any) -> str:
        f = format_loc(tuple(loc))
        return f"{prefix}.{f}" if prefix else f

    return InputError(
        f"{first['msg']}{more}",
        file=file,
        field=where(first["loc"]),
        problems=[{"field": where(x["loc"]), "message": x["msg"]} for x in errs],
    )
