"""Errors the command line maps to exit codes (SPEC §7): InputError -> 2, anything else -> 1."""

from __future__ import annotations


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
