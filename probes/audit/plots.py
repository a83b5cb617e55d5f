"""PNG witnesses for audit findings: the curve each finding was decided on (depth, energy, distance...).

Pure matplotlib (Agg) over the `evidence["series"]` every curve-backed finding carries, so plots can be
redrawn later from a saved report without Blender.
"""

from __future__ import annotations

from pathlib import Path

from physcodegym.core import atomic
from physcodegym.probes.audit.findings import AuditReport, Finding


def plot_finding(f: Finding, path: Path) -> Path | None:
    """Draw one finding's series (with its threshold and witness frames); None if it has no curve."""
    ser = f.evidence.get("series")
    if not ser:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = ser["x"]
    y = [float("nan") if v is None else v for v in ser["y"]]
    fig, ax = plt.subplots(figsize=(6.4, 3.2), dpi=100)
    ax.plot(x, y, lw=1.6, label=ser.get("label"))
    if ser.get("threshold") is not None:
        ax.axhline(ser["threshold"], color="tab:red", ls="--", lw=1, label="tolerance")
    if len(f.frames) >= 2:
        ax.axvspan(f.frames[0], f.frames[-1], color="tab:orange", alpha=0.15, label="witness frames")
    ax.set_xlabel("frame")
    ax.set_ylabel(ser.get("unit") or "")
    ax.set_title(f"{f.kind}: {', '.join(f.objects)}"[:90], fontsize=9)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic.replacing(path, ".png") as tmp:
        fig.savefig(tmp)
    plt.close(fig)
    return path


def write_plots(report: AuditReport, out_dir: Path) -> list[str]:
    """One PNG per curve-backed finding in `out_dir` (`NN_kind_objects.png`); returns the paths."""
    out_dir = Path(out_dir)
    paths = []
    for i, f in enumerate(report.findings):
        safe = "_".join(f.objects)[:60].replace("/", "-").replace(" ", "-") or "scene"
        p = plot_finding(f, out_dir / f"{i:02d}_{f.kind}_{safe}.png")
        if p is not None:
            paths.append(str(p))
    return paths


def plot_counterfactual(doc: dict, path: Path, roles: list[str]) -> Path:
    """x and z over time per role for a counterfactual's branches (baseline, intervened, control).

    `doc` is `probes.branches.counterfactual.run_counterfactual`'s result (with its `_samples` and `mapping`).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from physcodegym.probes.branches.counterfactual import track

    s = doc["_samples"]
    fig, axes = plt.subplots(1, max(1, len(roles)), figsize=(5 * max(1, len(roles)), 4), squeeze=False)
    for ax, role in zip(axes[0], roles, strict=False):
        name = doc["mapping"].get(role, role)
        for key, style in (("baseline", "k-"), ("intervened", "r--"), ("control", "b:")):
            smp = s.get(key)
            tr = track(smp, name) if smp is not None else None
            if tr is not None:
                t = (smp.frames - 1) / smp.fps
                ax.plot(t, tr[:, 0], style, label=f"{key} x")
                ax.plot(t, tr[:, 2], style, alpha=0.5, label=f"{key} z")
        ax.set_title(f"{role} ({name})")
        ax.set_xlabel("t (s)")
        ax.set_ylabel("m")
        ax.legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic.replacing(path, ".png") as tmp:
        fig.savefig(tmp, dpi=90)
    plt.close(fig)
    return path
