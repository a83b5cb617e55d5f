"""A library member is its pack plus its parameters: its programs are exactly what the family generates today.

Why: `tasks/library/<fam>_s<seed>/` holds copies of the pack's `truth.py` and `annotation.py` with one `PARAMS`
literal replaced. A fix made to a pack and not regenerated into its members would leave members that no longer
follow their template (a different mechanism, an old event detector). This test regenerates every member's sources
from its pack and `family.json` (no Blender) and compares bytes; `physcodegym tasks generate` refreshes them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from physcodegym.authoring import families
from physcodegym.tasks.loader import LIBRARY_DIR

MEMBERS = sorted(p.parent.name for p in LIBRARY_DIR.glob(f"*/{families.FAMILY_JSON}"))


def test_the_library_has_members():
    assert len(MEMBERS) >= 48, MEMBERS


@pytest.mark.parametrize("member", MEMBERS)
def test_member_sources_are_its_pack_with_its_parameters(member: str, tmp_path: Path) -> None:
    stored = LIBRARY_DIR / member
    doc = json.loads((stored / families.FAMILY_JSON).read_text(encoding="utf-8"))
    fam, seed = doc["family"], int(doc["seed"])
    assert member == families.member_id(fam, seed), doc
    assert doc["params"] == families.member_params(fam, seed), f"{member}: family.py now draws other parameters"
    fresh = families.write_member(fam, seed, tmp_path / member)
    for name in (*families.SOURCES, families.FAMILY_JSON):
        assert (fresh / name).read_bytes() == (stored / name).read_bytes(), (
            f"{member}/{name} differs from its pack {fam} with seed {seed}'s parameters: "
            f"regenerate it (physcodegym tasks generate --family {fam} --seeds {seed})")


def test_a_member_edited_by_hand_is_caught(tmp_path: Path) -> None:
    """The comparison sees a one-character change, or the test above could not fail."""
    member = MEMBERS[0]
    doc = json.loads((LIBRARY_DIR / member / families.FAMILY_JSON).read_text(encoding="utf-8"))
    fresh = families.write_member(doc["family"], int(doc["seed"]), tmp_path / "m")
    edited = (LIBRARY_DIR / member / "truth.py").read_text(encoding="utf-8").replace("FRAMES = 240", "FRAMES = 241")
    assert edited != (fresh / "truth.py").read_text(encoding="utf-8")
