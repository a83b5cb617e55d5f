"""Child entry point for the panel's counterfactual: `python -m physcodegym.physcodegym_addon.counterfactual_worker`.

Runs the library's `run_counterfactual` (baseline vs intervened, each in its own fresh bpy process on
the saved copy) and keeps the intervened scene as a .blend the panel appends for inspection. Prints
one JSON document: the public counterfactual summary plus per-object tracks for plotting/drawing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _tracks(samples: Any, names: list[str]) -> dict[str, list[list[float]]]:
    from physcodegym.probes.branches.counterfactual import track

    out = {}
    for n in names:
        tr = track(samples, n) if samples is not None else None
        if tr is not None:
            out[n] = [[round(float(x), 5) for x in p] for p in tr]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="counterfactual_worker")
    ap.add_argument("--blend", required=True)
    ap.add_argument("--intervention", required=True, help="Intervention JSON")
    ap.add_argument("--mapping", required=True, help="{role: object} JSON")
    ap.add_argument("--out", required=True, help="work folder")
    a = ap.parse_args(argv)
    from physcodegym.probes.branches.counterfactual import public, run_branch, run_counterfactual
    from physcodegym.tasks.schema import Intervention

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    iv = Intervention.model_validate(json.loads(a.intervention))
    mapping = json.loads(a.mapping)
    doc = run_counterfactual(Path(a.blend), iv, mapping, work_dir=out)
    res = public(doc)
    names = sorted(set(mapping.values()))
    samples = doc.get("_samples") or {}
    res["tracks"] = {
        "baseline": _tracks(samples.get("baseline"), names),
        "intervened": _tracks(samples.get("intervened"), names),
    }
    if doc.get("ok"):
        # keep the intervened copy for inspection (one more branch; the original file is only read)
        kept = out / "intervened.blend"
        frames = tuple(doc["frames"]) if doc.get("frames") else None
        _, rec = run_branch(Path(a.blend), out / "kept.npz", [iv], mapping, frames, save_blend=kept)
        res["intervened_blend"] = str(kept) if kept.is_file() else None
        if not kept.is_file():
            res["intervened_blend_error"] = "; ".join(rec.get("errors", [])) or "not written"
    (out / "counterfactual.json").write_text(json.dumps(res, default=str))
    sys.stdout.write(json.dumps(res, default=str) + "\n")
    return 0 if doc.get("ok") else 1


if __name__ == "__main__":
    from physcodegym.core.exit import exit_child

    exit_child(main())
