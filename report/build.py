"""`physcodegym report RESULTS --out DIR`: leaderboard (md/csv/json) and one self-contained HTML report.

The leaderboard follows the paper's Tab. 2 layout (Harness, Model | S_SSIM S_LPIPS S_obj S_vis | S_evt S_mot
S_val S_phys | S_tot), once per averaging set (batch.accounting.SETS), plus a per-category breakdown. The HTML
embeds its plots as base64 PNGs (metric bars per configuration, S_tot vs cost, per-task heat map) and, per
task, the reference/candidate frame strip and the validity findings with a witness plot.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
from pathlib import Path
from typing import Any

from physcodegym.batch.accounting import SETS, leaderboard
from physcodegym.batch.store import ResultsStore
from physcodegym.core import atomic
from physcodegym.metrics.results import METRIC_NAMES

COLS = ["S_ssim", "S_lpips", "S_obj", "S_vis", "S_evt", "S_mot", "S_val", "S_phys", "S_tot"]
HEAD = {"S_ssim": "S_SSIM", "S_lpips": "S_LPIPS", "S_obj": "S_obj", "S_vis": "S_vis", "S_evt": "S_evt",
        "S_mot": "S_mot", "S_val": "S_val", "S_phys": "S_phys", "S_tot": "S_tot"}
STRIP_TIMES = (0, 48, 96, 144, 192, 239)


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def load(results_dir: Path) -> tuple[dict, list[dict]]:
    store = ResultsStore(Path(results_dir), readonly=True)
    try:
        rows = store.rows()
        tasks = store.get_meta("tasks", []) or []
        configs = store.get_meta("configs", {}) or {}
    finally:
        store.close()
    return leaderboard(rows, tasks, configs), rows


# -- tables ------------------------------------------------------------------------------------------
def markdown(lb: dict) -> str:
    out = ["# PhysCodeGym leaderboard", ""]
    cov = lb["covered_metrics"]
    out.append(f"Covered metrics: {', '.join(cov) or 'none'}.")
    for n, why in lb["missing_metrics"].items():
        out.append(f"- {n} missing: {why}")
    out.append("")
    for set_name, label in SETS.items():
        out += [f"## {set_name}", "", f"Averaging set: {label}.", ""]
        out.append("| Harness | Model | n | " + " | ".join(HEAD[c] + " ↑" for c in COLS) + " |")
        out.append("|---|---|---|" + "---|" * len(COLS))
        for b in lb["leaderboard"]:
            s = b["sets"][set_name]
            out.append(f"| {b['harness']} | {b['model']} | {s['tasks']} | " + " | ".join(_fmt(s[c]["mean"]) for c in COLS) + " |")
        out.append("")
    out += ["## Per category (all tasks)", "", "| Category | Config | n | " + " | ".join(HEAD[c] for c in COLS) + " |",
            "|---|---|---|" + "---|" * len(COLS)]
    for cat, by in lb["categories"].items():
        for c, s in by.items():
            out.append(f"| {cat} | {c} | {s['tasks']} | " + " | ".join(_fmt(s[k]["mean"]) for k in COLS) + " |")
    out.append("")
    return "\n".join(out)


def csv_text(lb: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["averaging_set", "config", "harness", "model", "tasks", "artifacts", "cost_usd_per_task", *COLS,
                *[f"n_{m}" for m in METRIC_NAMES]])
    for set_name in SETS:
        for b in lb["leaderboard"]:
            s = b["sets"][set_name]
            w.writerow([set_name, b["config"], b["harness"], b["model"], s["tasks"], b["artifacts"], b["cost_usd_per_task"],
                        *["" if s[c]["mean"] is None else f"{s[c]['mean']:.6f}" for c in COLS], *[s[m]["n"] for m in METRIC_NAMES]])
    return buf.getvalue()


# -- plots -------------------------------------------------------------------------------------------
def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_bars(lb: dict) -> str:
    plt = _plt()
    import numpy as np

    board = lb["leaderboard"]
    fig, ax = plt.subplots(figsize=(10, 3.6))
    w = 0.8 / max(1, len(board))
    x = np.arange(len(COLS))
    for i, b in enumerate(board):
        vals = [b["sets"]["all_tasks"][c]["mean"] for c in COLS]
        ax.bar(x + i * w, [v if v is not None else 0 for v in vals], w, label=b["config"],
               hatch=None, edgecolor="k", linewidth=0.3)
        for j, v in enumerate(vals):
            if v is None:
                ax.text(x[j] + i * w, 0.02, "n/a", rotation=90, fontsize=7, ha="center")
    ax.set_xticks(x + w * (len(board) - 1) / 2, [HEAD[c] for c in COLS])
    ax.set_ylim(0, 1)
    ax.set_title("Metrics per configuration (all tasks, missing artifacts = 0)")
    ax.legend(fontsize=8)
    return _png(fig)


def plot_cost(lb: dict) -> str:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 3.6))
    for b in lb["leaderboard"]:
        c, s = b["cost_usd_per_task"], b["sets"]["all_tasks"]["S_tot"]["mean"]
        if c is None or s is None:
            continue
        ax.scatter([c], [s])
        ax.annotate(b["config"], (c, s), fontsize=8, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("cost per task (USD)")
    ax.set_ylabel("S_tot")
    ax.set_ylim(0, 1)
    ax.set_title("S_tot vs cost")
    return _png(fig)


def plot_heat(lb: dict) -> str:
    plt = _plt()
    import numpy as np

    cfgs = [b["config"] for b in lb["leaderboard"]]
    tids = [t["id"] for t in lb["tasks"]]
    m = np.full((len(cfgs), len(tids)), np.nan)
    for i, c in enumerate(cfgs):
        for j, t in enumerate(tids):
            v = lb["per_task"][c][t]["S_tot"]
            if v is not None:
                m[i, j] = v
    fig, ax = plt.subplots(figsize=(max(4, 0.9 * len(tids) + 2), max(2, 0.5 * len(cfgs) + 1)))
    im = ax.imshow(m, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(tids)), tids, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(cfgs)), cfgs, fontsize=8)
    for i in range(len(cfgs)):
        for j in range(len(tids)):
            ax.text(j, i, "–" if np.isnan(m[i, j]) else f"{m[i, j]:.2f}", ha="center", va="center", fontsize=7, color="w")
    fig.colorbar(im, ax=ax, label="S_tot")
    ax.set_title("Per-task S_tot (latest run with a rendered sequence; no artifact = 0)")
    return _png(fig)


def _ref_frames(video: Path, idx: tuple[int, ...]) -> dict[int, Any]:
    import cv2

    out = {}
    cap = cv2.VideoCapture(str(video))
    try:
        want = set(idx)
        i = 0
        while want:
            ok, fr = cap.read()
            if not ok:
                break
            if i in want:
                out[i] = cv2.resize(cv2.cvtColor(fr, cv2.COLOR_BGR2RGB), (160, 90), interpolation=cv2.INTER_AREA)
                want.discard(i)
            i += 1
    finally:
        cap.release()
    return out


def plot_strip(task: dict, cands: dict[str, Path | None]) -> str | None:
    """Reference row plus one row per configuration's counted run, at six times."""
    import cv2
    import numpy as np

    plt = _plt()
    ref = _ref_frames(Path(task["video"]), STRIP_TIMES) if Path(task["video"]).is_file() else {}
    rows = [("reference", [ref.get(i) for i in STRIP_TIMES])]
    for c, frames_dir in cands.items():
        imgs = []
        for i in STRIP_TIMES:
            f = frames_dir / f"{i + 1:04d}.png" if frames_dir else None
            im = cv2.imread(str(f)) if f is not None and f.is_file() else None
            imgs.append(cv2.resize(cv2.cvtColor(im, cv2.COLOR_BGR2RGB), (160, 90), interpolation=cv2.INTER_AREA) if im is not None else None)
        rows.append((c, imgs))
    blank = np.full((90, 160, 3), 235, np.uint8)
    fig, axes = plt.subplots(len(rows), len(STRIP_TIMES), figsize=(1.6 * len(STRIP_TIMES), 1.0 * len(rows) + 0.3), squeeze=False)
    for r, (label, imgs) in enumerate(rows):
        for k, im in enumerate(imgs):
            ax = axes[r][k]
            ax.imshow(im if im is not None else blank)
            ax.set_xticks([])
            ax.set_yticks([])
            if r == 0:
                ax.set_title(f"t={STRIP_TIMES[k] / 30:.1f}s", fontsize=7)
            if k == 0:
                ax.set_ylabel(label, fontsize=7, rotation=0, ha="right", va="center")
    return _png(fig)


def _findings(doc: Any) -> list[dict]:
    """Every `findings` list anywhere in a score document (S_val details carry the audit's findings)."""
    out: list[dict] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if k == "findings" and isinstance(v, list):
                    out.extend(f for f in v if isinstance(f, dict))
                else:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(doc)
    return out


def _criteria(doc: Any) -> list[dict]:
    d = ((doc or {}).get("details") or {}).get("S_val") or {}
    cr = d.get("criteria") if isinstance(d, dict) else None
    return [c for c in cr if isinstance(c, dict)] if isinstance(cr, list) else []


def plot_witness(findings: list[dict]) -> str | None:
    """Witness plot: which finding kinds occur at which frames (and their measured values)."""
    pts = [(f.get("kind", "?"), fr, f.get("value")) for f in findings for fr in (f.get("frames") or [])[:240] if isinstance(fr, int | float)]
    if not pts:
        return None
    plt = _plt()
    kinds = sorted({p[0] for p in pts})
    fig, ax = plt.subplots(figsize=(6, 0.4 * len(kinds) + 1.2))
    for i, k in enumerate(kinds):
        xs = [p[1] for p in pts if p[0] == k]
        ax.scatter(xs, [i] * len(xs), s=8)
    ax.set_yticks(range(len(kinds)), kinds, fontsize=8)
    ax.set_xlim(0, 241)
    ax.set_xlabel("frame")
    ax.set_title("validity findings by frame", fontsize=9)
    return _png(fig)


# -- html --------------------------------------------------------------------------------------------
CSS = """body{font-family:system-ui,sans-serif;margin:24px;max-width:1200px}table{border-collapse:collapse;margin:8px 0}
td,th{border:1px solid #ccc;padding:3px 7px;font-size:13px;text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}
.fail{color:#a00}.ok{color:#060}img{max-width:100%}section{margin-bottom:28px}code{font-size:12px}"""


def _table(lb: dict, set_name: str) -> str:
    h = ["<table><tr><th class=l>Harness</th><th class=l>Model</th><th class=l>Config</th><th>n</th>"]
    h += [f"<th>{HEAD[c]}</th>" for c in COLS] + ["</tr>"]
    for b in lb["leaderboard"]:
        s = b["sets"][set_name]
        h.append(f"<tr><td class=l>{html.escape(b['harness'])}</td><td class=l>{html.escape(str(b['model']))}</td>"
                 f"<td class=l>{html.escape(b['config'])}</td><td>{s['tasks']}</td>")
        h += [f"<td>{_fmt(s[c]['mean'])}</td>" for c in COLS] + ["</tr>"]
    h.append("</table>")
    return "".join(h)


def html_report(lb: dict, rows: list[dict], images: dict[str, str | None]) -> str:
    e = html.escape
    parts = [f"<!doctype html><html><head><meta charset=utf-8><title>PhysCodeGym report</title><style>{CSS}</style></head><body>",
             "<h1>PhysCodeGym report</h1>",
             f"<p>{len(lb['configs'])} configurations × {len(lb['tasks'])} tasks, {len(rows)} units. Covered metrics: "
             f"{e(', '.join(lb['covered_metrics']) or 'none')}.</p><ul>"]
    parts += [f"<li>{e(n)} missing: {e(str(why))}</li>" for n, why in lb["missing_metrics"].items()]
    parts.append("</ul>")
    for set_name, label in SETS.items():
        parts.append(f"<section><h2>Leaderboard — {e(set_name)}</h2><p>Averaging set: {e(label)}.</p>{_table(lb, set_name)}</section>")
    parts.append("<section><h2>Per category (all tasks)</h2><table><tr><th class=l>Category</th><th class=l>Config</th><th>n</th>"
                 + "".join(f"<th>{HEAD[c]}</th>" for c in COLS) + "</tr>")
    for cat, by in lb["categories"].items():
        for c, s in by.items():
            parts.append(f"<tr><td class=l>{e(cat)}</td><td class=l>{e(c)}</td><td>{s['tasks']}</td>"
                         + "".join(f"<td>{_fmt(s[k]['mean'])}</td>" for k in COLS) + "</tr>")
    parts.append("</table></section>")
    for key, title in (("bars", "Metrics per configuration"), ("cost", "S_tot vs cost"), ("heat", "Per-task heat map")):
        if images.get(key):
            parts.append(f"<section><h2>{title}</h2><img alt='{key}' src='data:image/png;base64,{images[key]}'></section>")
    parts.append("<h2>Units</h2><table><tr><th class=l>Config</th><th class=l>Task</th><th class=l>Attempt</th><th class=l>Status</th>"
                 "<th class=l>Run</th><th>S_tot</th><th>seconds</th><th class=l>Reason</th></tr>")
    for r in rows:
        cls = "ok" if r["status"] == "done" else "fail"
        st = (r.get("score") or {}).get("S_tot")
        parts.append(f"<tr><td class=l>{e(r['config'])}</td><td class=l>{e(r['task_id'])}</td><td class=l>{e(str(r['attempt']))}</td>"
                     f"<td class='l {cls}'>{e(r['status'])}</td><td class=l>{e(str(r.get('run_status')))}</td><td>{_fmt(st)}</td>"
                     f"<td>{r.get('seconds_total') or 0:.1f}</td><td class=l>{e(str(r.get('reason') or ''))[:300]}</td></tr>")
    parts.append("</table>")
    for t in lb["tasks"]:
        tid = t["id"]
        parts.append(f"<section id='task-{e(tid)}'><h2>Task {e(tid)}</h2><p>{e(t.get('title', ''))} — {e(t['category'])}"
                     f"{' / ' + e(t['subcategory']) if t.get('subcategory') else ''}</p>")
        if images.get(f"strip:{tid}"):
            parts.append(f"<img alt='strip {e(tid)}' src='data:image/png;base64,{images[f'strip:{tid}']}'>")
        for c in lb["configs"]:
            pt = lb["per_task"][c][tid]
            parts.append(f"<h3>{e(c)} (attempt {e(str(pt.get('attempt')))}): "
                         f"{'artifact' if pt['artifact'] else 'no valid artifact'} — S_tot {_fmt(pt['S_tot'])}</h3>")
            if not pt["artifact"] or pt["status"] != "done":
                parts.append(f"<p class=fail>{e(str(pt.get('reason')))}</p>")
            vals = pt["values"]
            parts.append("<p>" + ", ".join(f"{n} {_fmt(vals[n])}" for n in METRIC_NAMES) + "</p>")
            fnd = images.get(f"findings:{c}:{tid}")
            if fnd:
                parts.append(fnd)
            wit = images.get(f"witness:{c}:{tid}")
            if wit:
                parts.append(f"<img alt='witness {e(c)} {e(tid)}' src='data:image/png;base64,{wit}'>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _findings_html(findings: list[dict], criteria: list[dict]) -> str:
    e = html.escape
    out = []
    if criteria:
        out.append("<table><tr><th class=l>criterion</th><th>score</th><th class=l>evidence</th></tr>")
        for c in criteria:
            ev = c.get("evidence") or c.get("message") or c.get("reason") or ""
            sc = c.get("score", c.get("value"))
            out.append(f"<tr><td class=l>{e(str(c.get('id', '?')))}</td><td>{_fmt(sc) if isinstance(sc, int | float) else e(str(sc))}</td>"
                       f"<td class=l>{e(json.dumps(ev, default=str) if not isinstance(ev, str) else ev)[:400]}</td></tr>")
        out.append("</table>")
    if findings:
        out.append("<table><tr><th class=l>kind</th><th class=l>objects</th><th class=l>frames</th><th>value</th><th class=l>unit</th><th class=l>message</th></tr>")
        for f in findings[:50]:
            frames = f.get("frames") or []
            fr = f"{frames[0]}–{frames[-1]} ({len(frames)})" if isinstance(frames, list) and frames else ""
            out.append(f"<tr><td class=l>{e(str(f.get('kind')))}</td><td class=l>{e(', '.join(map(str, f.get('objects') or [])))}</td>"
                       f"<td class=l>{e(fr)}</td><td>{e(str(f.get('value')))}</td><td class=l>{e(str(f.get('unit') or ''))}</td>"
                       f"<td class=l>{e(str(f.get('message') or ''))[:300]}</td></tr>")
        out.append("</table>")
    return "".join(out)


def build_report(results_dir: Path, out_dir: Path) -> dict:
    """Write leaderboard.{md,csv,json} and index.html into out_dir; returns their paths and a summary."""
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    lb, rows = load(results_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    images: dict[str, str | None] = {}
    if lb["leaderboard"]:
        images["bars"] = plot_bars(lb)
        images["cost"] = plot_cost(lb)
        if lb["tasks"]:
            images["heat"] = plot_heat(lb)
    from physcodegym.batch.accounting import select

    chosen = select(rows)
    for t in lb["tasks"]:
        cands: dict[str, Path | None] = {}
        for c in lb["configs"]:
            r = chosen.get((c, t["id"]))
            fd = ((r or {}).get("evidence") or {}).get("frames_dir") if r and r.get("artifact") else None
            cands[c] = Path(fd) if fd else None
            if r and r.get("score"):
                f, cr = _findings(r["score"]), _criteria(r["score"])
                images[f"findings:{c}:{t['id']}"] = _findings_html(f, cr) or None
                images[f"witness:{c}:{t['id']}"] = plot_witness(f)
        try:
            images[f"strip:{t['id']}"] = plot_strip(t, cands)
        except Exception:  # a broken reference video must not lose the report
            images[f"strip:{t['id']}"] = None
    paths = {"markdown": out_dir / "leaderboard.md", "csv": out_dir / "leaderboard.csv", "json": out_dir / "leaderboard.json",
             "html": out_dir / "index.html"}
    atomic.write(paths["markdown"], markdown(lb))
    atomic.write(paths["csv"], csv_text(lb))
    atomic.write(paths["json"], json.dumps(lb, indent=2, default=str))
    atomic.write(paths["html"], html_report(lb, rows, images))
    return {"report": str(paths["html"]), "files": {k: str(v) for k, v in paths.items()},
            "configs": lb["configs"], "tasks": [t["id"] for t in lb["tasks"]],
            "leaderboard": [{"config": b["config"], "S_tot": b["sets"]["all_tasks"]["S_tot"]["mean"],
                             "artifacts": b["artifacts"], "tasks": b["tasks"]} for b in lb["leaderboard"]]}
