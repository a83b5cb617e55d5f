"""Matplotlib figures of the report (Agg, PNG): metric bars, S_tot vs cost / launches, the per-task heat map,
per-task role trajectories (candidate vs truth, contact moments marked), motion-mask IoU over time, and the
still of a finding with its objects outlined. Each returns PNG bytes (or None when there is nothing to draw)."""

from __future__ import annotations

import io
from typing import Any

import numpy as np

COLS = ["S_ssim", "S_lpips", "S_obj", "S_vis", "S_evt", "S_mot", "S_val", "S_phys", "S_tot"]
SIX = ["S_ssim", "S_lpips", "S_obj", "S_evt", "S_mot", "S_val"]
G = 9.81


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> bytes:
    plt = _plt()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def colours(n: int) -> list:
    plt = _plt()
    cmap = plt.get_cmap("tab10")
    return [cmap(i % 10) for i in range(n)]


# -- leaderboard figures ---------------------------------------------------------------------------
def metric_bars(lb: dict) -> bytes | None:
    """The six metrics (and the aggregates) per configuration on all tasks; n/a where a metric is missing."""
    board = lb["leaderboard"]
    if not board:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 3.4))
    w = 0.8 / len(board)
    x = np.arange(len(COLS))
    for i, (b, col) in enumerate(zip(board, colours(len(board)), strict=True)):
        vals = [b["sets"]["all_tasks"][c]["mean"] for c in COLS]
        ax.bar(x + i * w, [v if v is not None else 0 for v in vals], w, label=b["config"], color=col, edgecolor="k",
               linewidth=0.3)
        for j, v in enumerate(vals):
            if v is None:
                ax.text(x[j] + i * w, 0.02, "n/a", rotation=90, fontsize=7, ha="center")
    ax.set_xticks(x + w * (len(board) - 1) / 2, COLS)
    for k in (3, 7):
        ax.axvline(k + 0.9, color="#bbb", lw=0.6)
    ax.set_ylim(0, 1)
    ax.set_ylabel("mean over all tasks")
    ax.set_title("Metrics per configuration (all tasks; no artifact = 0; n/a = not computed)", fontsize=10)
    ax.legend(fontsize=8, ncol=min(4, len(board)))
    return _png(fig)


def scatter(lb: dict, key: str, xlabel: str) -> bytes | None:
    """S_tot (all tasks) against a per-configuration number (cost per task, launches per task)."""
    pts = [(b[key], b["sets"]["all_tasks"]["S_tot"]["mean"], b["config"]) for b in lb["leaderboard"]
           if b.get(key) is not None and b["sets"]["all_tasks"]["S_tot"]["mean"] is not None]
    if not pts:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.6, 3.2))
    for (x, y, c), col in zip(pts, colours(len(pts)), strict=True):
        ax.scatter([x], [y], color=col, s=40)
        ax.annotate(c, (x, y), fontsize=8, xytext=(4, 4), textcoords="offset points")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("S_tot (all tasks)")
    ax.set_ylim(0, 1)
    ax.set_xlim(left=0, right=max(p[0] for p in pts) * 1.25 or 1)
    ax.grid(alpha=0.3)
    return _png(fig)


def heat(lb: dict) -> bytes | None:
    cfgs = [b["config"] for b in lb["leaderboard"]]
    tids = [t["id"] for t in lb["tasks"]]
    if not cfgs or not tids:
        return None
    m = np.full((len(cfgs), len(tids)), np.nan)
    for i, c in enumerate(cfgs):
        for j, t in enumerate(tids):
            v = lb["per_task"][c][t]["S_tot"]
            if v is not None:
                m[i, j] = v
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(4, 0.8 * len(tids) + 2), max(1.8, 0.45 * len(cfgs) + 1)))
    im = ax.imshow(m, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(tids)), tids, rotation=40, ha="right", fontsize=8)
    ax.set_yticks(range(len(cfgs)), cfgs, fontsize=8)
    for i in range(len(cfgs)):
        for j in range(len(tids)):
            ax.text(j, i, "–" if np.isnan(m[i, j]) else f"{m[i, j]:.2f}", ha="center", va="center", fontsize=7,
                    color="w" if np.isnan(m[i, j]) or m[i, j] < 0.6 else "k")
    fig.colorbar(im, ax=ax, label="S_tot")
    ax.set_title("S_tot per task (the counted run; no artifact = 0)", fontsize=10)
    return _png(fig)


# -- trajectories ----------------------------------------------------------------------------------
def role_track(samples: Any, obj: str) -> np.ndarray | None:
    """(F, 3) position of an object: the centroid of its deforming mesh or of its live particles, else its origin."""
    if samples is None or not obj:
        return None
    if obj in samples.verts:
        return samples.verts[obj].astype(float).mean(axis=1)
    parts = [k for k in samples.particles if k.split("/", 1)[0] == obj]
    if parts:
        p = samples.particles[parts[0]].astype(float)
        alive = samples.particles_alive[parts[0]]
        with np.errstate(invalid="ignore"):
            cnt = alive.sum(axis=1, keepdims=True)
            c = (p * alive[..., None]).sum(axis=1) / np.where(cnt > 0, cnt, np.nan)
        return c
    if obj in samples.names:
        return samples.locations(obj).astype(float)
    return None


def contact_frames(track: np.ndarray, fps: float, gravity: float = G) -> list[int]:
    """Indices where the body receives an impulse: the acceleration that is not gravity exceeds 2 g.
    Free flight accelerates at g and rolling or sliding less, so what is left are impacts and hits."""
    if track is None or len(track) < 3:
        return []
    a = np.diff(track, n=2, axis=0) * fps * fps
    a[:, 2] += gravity
    mag = np.linalg.norm(a, axis=1)
    hit = np.nan_to_num(mag) > 2 * gravity
    out, prev = [], False
    for i, h in enumerate(hit):
        if h and not prev:
            out.append(i + 1)
        prev = h
    return out


def trajectories(roles: list[dict], truth: Any, cands: dict[str, tuple[Any, dict[str, str]]]) -> bytes | None:
    """roles: [{"name", "truth_object"}]; cands: config -> (samples, {role: object}). Height (z) and the
    horizontal coordinate the truth moves most along, over time; contact moments as ticks."""
    rows = []
    for r in roles:
        tt = role_track(truth, r.get("truth_object") or "")
        cc = {c: role_track(s, m.get(r["name"], "")) for c, (s, m) in cands.items()}
        cc = {c: v for c, v in cc.items() if v is not None}
        if tt is None and not cc:
            continue
        rows.append((r["name"], tt, cc))
    if not rows:
        return None
    plt = _plt()
    fig, axes = plt.subplots(len(rows), 2, figsize=(10, 2.3 * len(rows) + 0.4), squeeze=False)
    cols = dict(zip(cands, colours(len(cands) + 1)[1:], strict=True))
    fps_t = float(getattr(truth, "fps", 30) or 30)
    for i, (name, tt, cc) in enumerate(rows):
        if tt is not None:
            rng = np.nanmax(tt[:, :2], axis=0) - np.nanmin(tt[:, :2], axis=0)
            hx = int(np.nanargmax(rng)) if np.isfinite(rng).any() else 0
        else:
            hx = 0
        for k, (ax, comp, lab) in enumerate(((axes[i][0], 2, "height z (m)"),
                                             (axes[i][1], hx, f"horizontal {'xy'[hx]} (m)"))):
            if tt is not None:
                t = np.arange(len(tt)) / fps_t
                ax.plot(t, tt[:, comp], color="k", lw=1.8, label="truth")
                for f in contact_frames(tt, fps_t):
                    ax.axvline(f / fps_t, color="k", ls=":", lw=0.8)
            for c, v in cc.items():
                fps_c = float(getattr(cands[c][0], "fps", 30) or 30)
                t = np.arange(len(v)) / fps_c
                ax.plot(t, v[:, comp], color=cols[c], lw=1.3, label=f"{c} ({cands[c][1].get(name)})")
                ymin = np.nanmin(v[:, comp]) if np.isfinite(v[:, comp]).any() else 0
                cf = contact_frames(v, fps_c)
                ax.plot([f / fps_c for f in cf], [ymin] * len(cf), "v", color=cols[c], ms=5)
            ax.set_xlim(0, 8)
            lo, hi = ax.get_ylim()
            if hi - lo < 0.1:  # a coordinate that barely moves: show it on a 10 cm scale, not as float noise
                mid = 0.5 * (hi + lo)
                ax.set_ylim(mid - 0.05, mid + 0.05)
            ax.set_ylabel(lab, fontsize=8)
            ax.grid(alpha=0.25)
            if k == 0:
                ax.set_title(f"role '{name}'", fontsize=9, loc="left")
            if i == len(rows) - 1:
                ax.set_xlabel("time (s)")
        axes[i][1].legend(fontsize=7, loc="best")
    fig.suptitle("Candidate vs truth trajectories (dotted: truth contacts; triangles: candidate contacts)", fontsize=10)
    fig.tight_layout()
    return _png(fig)


def iou_over_time(series: dict[str, list[float]], events: list[dict]) -> bytes | None:
    series = {c: v for c, v in series.items() if v}
    if not series:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 2.6))
    for (c, v), col in zip(series.items(), colours(len(series) + 1)[1:], strict=True):
        y = np.array([np.nan if x is None else x for x in v], float)
        ax.plot(np.arange(len(y)) / 30.0, y, color=col, lw=1.3, label=c)
    for k, e in enumerate(events):
        iv = e.get("interval") or {}
        if iv.get("start_s") is not None:
            ax.axvspan(iv["start_s"], max(iv.get("end_s") or iv["start_s"], iv["start_s"] + 1 / 30), color="#f4c430",
                       alpha=0.18)
            ax.text(iv["start_s"], 1.01 + 0.055 * (k % 2), e.get("id", ""), fontsize=7, rotation=0, va="bottom")
    ax.set_xlim(0, 8)
    ax.set_ylim(0, 1.14)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("motion-mask IoU")
    ax.grid(alpha=0.25)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("Per-frame IoU of the motion masks, candidate vs reference (shaded: the task's timed events)",
                 fontsize=10)
    return _png(fig)


def still_with_boxes(frame_png: bytes, boxes: dict[str, list[float]], label: str) -> bytes | None:
    """A rendered frame of the candidate with each finding object's projected box drawn and named."""
    import cv2

    im = cv2.imdecode(np.frombuffer(frame_png, np.uint8), cv2.IMREAD_COLOR)
    if im is None:
        return None
    h, w = im.shape[:2]
    pal = [(40, 40, 230), (0, 140, 255), (200, 40, 180), (40, 160, 40)]

    def tag(text: str, x: int, y: int, colour: tuple[int, int, int]) -> None:
        (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.5, 1)
        x = max(0, min(x, w - tw - 6))
        y = max(th + 4, min(y, h - 2))
        cv2.rectangle(im, (x, y - th - 4), (x + tw + 6, y + base - 1), colour, -1)
        cv2.putText(im, text, (x + 3, y - 2), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1, cv2.LINE_AA)

    for i, (name, (x0, y0, x1, y1)) in enumerate(boxes.items()):
        c = pal[i % len(pal)]
        p0, p1 = (int(x0 * w), int(y0 * h)), (int(x1 * w), int(y1 * h))
        cv2.rectangle(im, p0, p1, c, 2)
        tag(name, p0[0], p0[1] - 2 if p0[1] > 20 else p1[1] + 18, c)
    tag(label, 6, h - 6, (40, 40, 40))
    ok, buf = cv2.imencode(".png", im)
    return buf.tobytes() if ok else None


def witness(finding: dict) -> bytes | None:
    """The curve a finding was decided on (its evidence series, threshold and witness frames)."""
    ser = (finding.get("evidence") or {}).get("series")
    if not ser or not ser.get("x"):
        return frames_witness(finding)
    plt = _plt()
    y = [float("nan") if v is None else v for v in ser["y"]]
    fig, ax = plt.subplots(figsize=(5.6, 2.6))
    ax.plot(ser["x"], y, lw=1.5, label=ser.get("label") or "measured")
    if ser.get("threshold") is not None:
        ax.axhline(ser["threshold"], color="tab:red", ls="--", lw=1, label="tolerance")
    fr = finding.get("frames") or []
    if len(fr) >= 2:
        ax.axvspan(fr[0], fr[-1], color="tab:orange", alpha=0.18, label="witness frames")
    elif len(fr) == 1:
        ax.axvline(fr[0], color="tab:orange", lw=1.2, label="witness frame")
    ax.set_xlabel("frame")
    ax.set_ylabel(ser.get("unit") or finding.get("unit") or "")
    ax.set_title(f"{finding.get('kind')}: {', '.join(finding.get('objects') or [])}"[:90], fontsize=9)
    ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.25)
    return _png(fig)


def frames_witness(finding: dict) -> bytes | None:
    """For a finding decided on structure rather than a curve: where in the 240 frames it holds."""
    fr = [f for f in (finding.get("frames") or []) if isinstance(f, int | float)]
    if not fr:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.6, 1.3))
    if len(fr) == 2 and fr[1] - fr[0] > 1:
        ax.axvspan(fr[0], fr[1], color="tab:orange", alpha=0.35, label="witness frames")
    else:
        ax.plot(fr, [0.5] * len(fr), "|", color="tab:red", ms=18, label="witness frames")
    ax.set_xlim(1, 240)
    ax.set_yticks([])
    ax.set_xlabel("frame")
    val = finding.get("value")
    ax.set_title(f"{finding.get('kind')}: {', '.join(finding.get('objects') or [])}"
                 + (f" (value {val:.3g} {finding.get('unit') or ''})" if isinstance(val, int | float) else ""),
                 fontsize=9)
    return _png(fig)
