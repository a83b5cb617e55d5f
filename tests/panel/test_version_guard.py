"""register() refuses a Blender older than the manifest's blender_version_min with one clear line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_minimum_is_the_manifest_line_and_refusal_names_both_versions() -> None:
    from physcodegym.panels import registration

    text = (REPO / "blender_manifest.toml").read_text()
    line = re.search(r'^blender_version_min = "([\d.]+)"', text, flags=re.M).group(1)
    assert ".".join(map(str, registration.minimum_version())) == line
    need = registration.minimum_version()
    older = (need[0], need[1] - 1, 99) if need[1] else (need[0] - 1, 99, 99)
    msg = registration.refusal(older)
    assert msg == f"PhysCodeGym needs Blender {line} or newer; this is Blender {'.'.join(map(str, older))}"
    assert registration.refusal(need) is None and registration.refusal((need[0] + 1, 0, 0)) is None


def test_register_raises_the_refusal_on_an_older_blender(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real bpy 5.0.1 against a manifest minimum above it: register() refuses before touching anything."""
    import bpy
    from physcodegym.panels import registration

    monkeypatch.setattr(registration, "minimum_version", lambda: (bpy.app.version[0] + 1, 0, 0))
    before = hasattr(bpy.types, "PCG_PT_main")
    with pytest.raises(registration.UnsupportedBlender, match=r"needs Blender \d+\.0\.0 or newer; this is Blender"):
        registration.register()
    assert hasattr(bpy.types, "PCG_PT_main") == before
