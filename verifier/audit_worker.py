"""The audit's bpy work: the walled, limited child that `verifier.audit_run.audit` starts.

    python -m physcodegym.verifier.audit_worker SCENE [--program P] [--task DIR] [--plot DIR] [--save FILE]
                                                [--no-evidence]

It opens the submitted scene with Auto Run off and the load guard installed, runs the task-independent audit
(SPEC §5) and, with a task (its `task.json` only), the rubric, and prints ONE JSON document as the last line of
stdout (Blender's own prints go to stderr): the audit document, or {"error": {...}} with exit 2 for bad input and
1 for an internal failure. Its input was validated by the trusted parent; it writes only into its working folder
(the wall's scratch folder), which the parent validates on the way out.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from physcodegym.core.errors import InputError
from physcodegym.verifier.audit_run import SAMPLES  # the name the parent takes back from the scratch folder


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="audit_worker", description=__doc__.splitlines()[0])
    p.add_argument("path")
    p.add_argument("--program")
    p.add_argument("--task")
    p.add_argument("--plot")
    p.add_argument("--save")
    p.add_argument("--no-evidence", action="store_true")
    return p


def _start_resimulation(path: Path) -> Any:
    """The re-simulation of a validated run's bake, started at once (`probes.audit.audit.EarlyResimulation`), or None
    where the run's record cannot say whether the scene holds particle settings (a bare .blend, an older record):
    the audit then starts it itself after sampling."""
    from physcodegym.sandbox import artifacts

    if not path.is_dir():
        return None
    try:
        rec = artifacts.read_record(path)
        n = rec["validation"]["headers"]["scene.blend"]["particle_settings"]
    except (artifacts.ArtifactError, OSError, KeyError, TypeError):
        return None
    if not isinstance(n, int) or isinstance(n, bool):
        return None
    from physcodegym.probes.audit.audit import EarlyResimulation

    return EarlyResimulation(path / "scene.blend", may_hold_particles=n > 0)


def _rubric(doc: dict[str, Any], loaded_task: Any, scene: Any, samples: Any, report: Any, run_dir: Path | None,
            early: list[Any]) -> None:
    """The task's rubric on the audited scene, into `doc` (criteria, S_val, the counterfactuals' records)."""
    from physcodegym.verifier.rubric_eval import evaluate_rubric

    t = time.perf_counter()
    try:
        rub = evaluate_rubric(loaded_task, scene, samples, report, run_dir, prefetched=early[0] if early else None)
    finally:
        for p in early:
            p.close()
    doc["timings"] = {**report.timings, "rubric": round(time.perf_counter() - t, 4)}
    doc.update({k: v for k, v in rub.items() if k not in ("findings",)})


def audit_here(args: argparse.Namespace) -> dict[str, Any]:
    """The audit document of `args.path` (and its rubric with `args.task`), computed in this process."""
    import bpy

    path = Path(args.path)
    loaded_task = None
    if args.task:
        from physcodegym.tasks.loader import load_task

        loaded_task = load_task(args.task)
    early_resim = _start_resimulation(path)  # before the scene is opened: the audit's longest worker
    try:
        bpy.context.preferences.filepaths.use_scripts_auto_execute = False  # Auto Run off for every file opened
        from physcodegym.probes.scene.render_safety import NEUTRALISED, install_load_guard

        install_load_guard(str(Path.cwd()))  # stored code and paths off in every file opened (docs/THREAT_MODEL.md)
        from physcodegym.probes.audit.audit import audit_path_full

        run_dir = path if path.is_dir() else None
        early: list[Any] = []  # the rubric's counterfactuals, started while the audit works (verifier.rubric_eval)

        def start_counterfactuals(samples: Any, blend: Path) -> None:
            from physcodegym.verifier.rubric_eval import prefetch_counterfactuals

            early.append(prefetch_counterfactuals(loaded_task, bpy.context.scene, samples, blend, run_dir))

        try:
            report, samples, scene = audit_path_full(path, Path(args.program) if args.program else None,
                                                     save_samples=False,
                                                     on_started=start_counterfactuals if loaded_task else None,
                                                     early_resim=early_resim)
        except BaseException:
            for p in early:
                p.close()
            raise
        if NEUTRALISED:  # stored code or paths the load guard switched off (such a run is refused at validation)
            report.meta["neutralised"] = list(NEUTRALISED)
        if run_dir is not None:  # the run folder is read-only here: the samples go to the scratch folder (cwd)
            try:
                samples.save_npz(Path.cwd() / SAMPLES)
            except OSError as e:
                report.meta["samples_error"] = str(e)
        doc: dict[str, Any] = {
            "findings": [f.public(with_evidence=not args.no_evidence) for f in report.findings],
            "criteria": [], "S_val": None, "scene": report.scene, "timings": report.timings,
            "samples_path": report.samples_path, "neutralised": report.meta.get("neutralised", []),
        }
        if loaded_task is not None:
            _rubric(doc, loaded_task, scene, samples, report, run_dir, early)
            doc["task"] = loaded_task.id
        else:
            doc["S_val_reason"] = "no --task given: S_val needs a task rubric"
        if args.plot:
            from physcodegym.probes.audit.plots import write_plots

            doc["plots"] = write_plots(report, Path(args.plot))
        if args.save:
            report.save(Path(args.save))
            doc["report_path"] = str(args.save)
        return doc
    finally:
        if early_resim is not None:
            early_resim.close()


def main(argv: list[str] | None = None) -> int:
    """Run the audit; the document (or the error) is the last line of the real stdout."""
    args = _parser().parse_args(argv)
    sys.stdout.flush()
    out = os.dup(1)
    os.dup2(2, 1)  # Blender prints bake progress on fd 1: keep stdout for the one JSON line
    code = 0
    try:
        doc: Any = audit_here(args)
    except InputError as e:
        doc, code = {"error": e.to_dict()}, 2
    except Exception as e:  # noqa: BLE001 - reported to the parent, which decides (a MemoryError is a verdict)
        traceback.print_exc(file=sys.stderr)
        doc, code = {"error": {"type": "internal", "message": f"{type(e).__name__}: {e}"}}, 1
    sys.stdout.flush()
    data = (json.dumps(doc, default=str) + "\n").encode()
    while data:  # a large document may take several writes into the pipe
        data = data[os.write(out, data):]
    os.close(out)
    return code


if __name__ == "__main__":
    from physcodegym.core.exit import exit_child

    exit_child(main())
