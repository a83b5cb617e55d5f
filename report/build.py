"""`physcodegym report RESULTS --out DIR`: leaderboard (md/csv/json) and an HTML report that opens from disk.

Layout of DIR (everything relative, no server, no network):
- `index.html`: the leaderboard (SPEC §4 metrics, SPEC §8 averaging sets) with sortable columns, filters by category,
  configuration and averaging set (the set and its n shown next to every mean), the metric bars, S_tot vs
  cost and vs launches, the per-task heat map, task cards and every unit;
- `tasks/<task>.html`: the reference and each configuration's counted candidate as videos playing in sync
  (one control, frame stepping, the task's timed events on the timeline), role trajectories of candidate vs
  truth, motion-mask IoU over time, and per configuration its metrics, rubric criteria in sentences (raw
  numbers folded) and findings grouped by kind with their witness plot and a still with the objects outlined;
- `media/<task>/*.mp4` (H.264, see `report.media`), `img/…png`, `report.css`, `report.js`;
- `leaderboard.md|csv|json`.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from physcodegym.batch.accounting import SETS, leaderboard, select
from physcodegym.batch.store import ResultsStore
from physcodegym.core import atomic, launch
from physcodegym.evaluator.score_document import ScoreDocument
from physcodegym.metrics.results import METRIC_NAMES
from physcodegym.report import assets, evidence, plots

COLS = plots.COLS
HEAD = {"S_ssim": "S_SSIM", "S_lpips": "S_LPIPS", "S_obj": "S_obj", "S_vis": "S_vis", "S_evt": "S_evt",
        "S_mot": "S_mot", "S_val": "S_val", "S_phys": "S_phys", "S_tot": "S_tot"}
STRIP_TIMES = (0, 80, 160, 239)
FPS = 30
e = html.escape


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def load(results_dir: Path) -> tuple[dict, list[dict]]:
    lb, rows, _ = _load(results_dir)
    return lb, rows


def _load(results_dir: Path) -> tuple[dict, list[dict], dict]:
    store = ResultsStore(Path(results_dir), readonly=True)
    try:
        rows = store.rows()
        tasks = store.get_meta("tasks", []) or []
        configs = store.get_meta("configs", {}) or {}
        tset = store.get_meta("task_set")
    finally:
        store.close()
    lb = leaderboard(rows, tasks, configs)
    lb["task_set"] = task_set_summary(tset, rows, len(tasks))
    return lb, rows, configs


def task_set_summary(tset: dict | None, rows: list[dict], selected: int) -> dict[str, Any]:
    """What the report names as its task set: set, version, manifest hash, how many of its tasks were run, and
    every set@version the rows were scored on (one, unless the store predates this record)."""
    if not tset:
        tset = {"set": None, "version": None, "sha256": None, "n_tasks": None, "stale": []}
    on = sorted({r.get("task_set") or "unrecorded" for r in rows})
    return {"set": tset.get("set"), "version": tset.get("version"), "sha256": tset.get("sha256"),
            "n_tasks": tset.get("n_tasks"), "selected": selected, "stale": list(tset.get("stale") or []), "rows_on": on}


def task_set_line(ts: dict) -> str:
    """One sentence naming the task set (the leaderboard's header)."""
    if not ts.get("set"):
        return "Task set: not recorded (results written before batches named their task set)."
    line = f"Task set: {ts['set']} version {ts['version']} ({ts['selected']} of {ts['n_tasks']} tasks"
    if ts.get("sha256"):
        line += f", sha256 {ts['sha256'][:12]}"
    line += ")."
    if ts.get("stale"):
        line += f" {len(ts['stale'])} pack(s) differ from the manifest: {'; '.join(ts['stale'][:3])}."
    mixed = [x for x in ts.get("rows_on", []) if x != f"{ts['set']}@{ts['version']}"]
    if mixed:
        line += f" Rows scored on: {', '.join(ts['rows_on'])}."
    return line


# -- tables (markdown, csv) ------------------------------------------------------------------------
def markdown(lb: dict) -> str:
    out = ["# PhysCodeGym leaderboard", ""]
    if "task_set" in lb:
        out += [task_set_line(lb["task_set"]), ""]
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
            out.append(
                f"| {b['harness']} | {b['model']} | {s['tasks']} | " + " | ".join(_fmt(s[c]["mean"]) for c in COLS)
                + " |")
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
            w.writerow([set_name, b["config"], b["harness"], b["model"], s["tasks"], b["artifacts"],
                        b["cost_usd_per_task"],
                        *["" if s[c]["mean"] is None else f"{s[c]['mean']:.6f}" for c in COLS],
                        *[s[m]["n"] for m in METRIC_NAMES]])
    return buf.getvalue()


# -- helpers ---------------------------------------------------------------------------------------
def _b64(png: bytes | None) -> str | None:
    return base64.b64encode(png).decode() if png else None


def _slug(s: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(s))


def _rel(target: str | Path, page_dir: Path) -> str:
    return Path(os.path.relpath(Path(target).resolve(), page_dir.resolve())).as_posix()


def _page(title: str, body: str, depth: int, nav: str = "") -> str:
    up = "../" * depth
    return ("<!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport "
            f"content='width=device-width,initial-scale=1'><title>{e(title)}</title><link rel=icon href='data:,'><link "
            f"rel=stylesheet href='{up}report.css'></head><body><header class=top><h1>{e(title)}</h1><a "
            f"href='{up}index.html'>Leaderboard</a>{nav}</header><main>{body}</main><script "
            f"src='{up}report.js'></script></body></html>")


def _launches(cfg: dict) -> float | None:
    v = cfg.get("launches_per_task", cfg.get("launches"))
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _load_task(t: dict) -> Any | None:
    from physcodegym.tasks.loader import load_task

    try:
        return load_task(t["folder"])
    except Exception:  # a task folder that moved or no longer validates: the page says so
        return None


def _samples(path: Path | None) -> Any | None:
    if path is None or not Path(path).is_file():
        return None
    from physcodegym.samples import SceneSamples

    try:
        return SceneSamples.load_npz(path)
    except Exception:
        return None


def _frames_dir(row: dict | None) -> Path | None:
    if not row or not row.get("artifact"):
        return None
    ev = row.get("evidence") or {}
    fd = ev.get("frames_dir")
    if fd and Path(fd).is_dir():
        return Path(fd)
    v = ev.get("video")
    return Path(v) if v and Path(v).is_file() else None


def _run_dir(row: dict | None) -> Path | None:
    rd = ((row or {}).get("evidence") or {}).get("run_dir")
    return Path(rd) if rd and Path(rd).is_dir() else None


def _s_val_details(row: dict | None) -> dict:
    """S_val's details (findings, criteria, role mapping) from the row's score document; {} when it has none."""
    sc = (row or {}).get("score")  # a ScoreDocument (validated by the results store) or None
    d = sc.details.get("S_val") if sc is not None else None
    return d if isinstance(d, dict) else {}


def _per_frame(row: dict | None, curve: str) -> list[float] | None:
    """One per-frame curve of the row's score document (None when it has no score or no such curve)."""
    sc = (row or {}).get("score")
    return sc.per_frame.get(curve) if sc is not None else None


def _score_table(sc: ScoreDocument) -> list[str]:
    """A unit's metrics with their states and reasons, and what S_vis and S_phys cover."""
    h = ["<table><thead><tr><th class=l>metric</th><th>value</th><th class=l>state</th><th "
         "class=l>reason</th></tr></thead><tbody>"]
    for n in METRIC_NAMES:
        st = sc.states.get(n)
        state, reason = (st.state, st.reason) if st is not None else ("–", None)
        h.append(f"<tr><td class=l>{n}</td><td>{_fmt(sc.metrics.get(n))}</td><td class=l>{e(str(state))}</td>"
                 f"<td class='l wrap small'>{e(str(reason or ''))}</td></tr>")
    h.append("</tbody></table>")
    cov = sc.coverage
    h.append(f"<p class='small muted'>S_vis {_fmt(sc.S_vis)} covers {e(', '.join(cov.S_vis) or 'nothing')}; "
             f"S_phys {_fmt(sc.S_phys)} covers {e(', '.join(cov.S_phys) or 'nothing')}.</p>")
    return h


def _finding_kinds(row: dict | None) -> list[str]:
    f = _s_val_details(row).get("findings")
    return [x if isinstance(x, str) else str((x or {}).get("kind")) for x in f] if isinstance(f, list) else []


def _criteria(row: dict | None) -> list[dict]:
    cr = _s_val_details(row).get("criteria")
    return [c for c in cr if isinstance(c, dict)] if isinstance(cr, list) else []


def _mapping(row: dict | None) -> dict[str, str]:
    roles = (_s_val_details(row).get("mapping") or {}).get("roles") or {}
    return {k: v.get("object") for k, v in roles.items() if isinstance(v, dict) and v.get("object")}


def _strip(t: dict, cands: dict[str, Path | None]) -> bytes | None:
    """Small stills at four times: the reference row and one row per configuration (the task card)."""
    import cv2
    import numpy as np

    def ref_frames() -> dict[int, Any]:
        out: dict[int, Any] = {}
        if not Path(t["video"]).is_file():
            return out
        cap = cv2.VideoCapture(str(t["video"]))
        try:
            i = 0
            while len(out) < len(STRIP_TIMES):
                ok, fr = cap.read()
                if not ok:
                    break
                if i in STRIP_TIMES:
                    out[i] = cv2.resize(fr, (128, 72), interpolation=cv2.INTER_AREA)
                i += 1
        finally:
            cap.release()
        return out

    blank = np.full((72, 128, 3), 60, np.uint8)
    ref = ref_frames()
    rows = [[ref.get(i, blank) for i in STRIP_TIMES]]
    for fd in cands.values():
        r = []
        for i in STRIP_TIMES:
            im = cv2.imread(str(fd / f"{i + 1:04d}.png")) if fd is not None and fd.is_dir() else None
            r.append(cv2.resize(im, (128, 72), interpolation=cv2.INTER_AREA) if im is not None else blank)
        rows.append(r)
    grid = np.vstack([np.hstack([np.pad(c, ((1, 1), (1, 1), (0, 0)), constant_values=255) for c in r]) for r in rows])
    ok, buf = cv2.imencode(".png", grid)
    return buf.tobytes() if ok else None


# -- the builder -----------------------------------------------------------------------------------
class _Builder:
    def __init__(self, results_dir: Path, out_dir: Path, videos: bool, log: Callable[[str], None]) -> None:
        self.results, self.out, self.videos, self.log = results_dir, out_dir, videos, log
        self.lb, self.rows, self.configs = _load(results_dir)
        self.chosen = select(self.rows)
        self.media: dict[str, Any] = {"clips": [], "errors": []}
        self.notes: list[str] = []

    def write_img(self, rel: str, png: bytes | None) -> str | None:
        if not png:
            return None
        p = self.out / "img" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_bytes(p, png)
        return f"img/{rel}"

    # media ----------------------------------------------------------------------------------------
    def clips(self) -> dict[tuple[str, str], dict]:
        """(task, config or '') -> {"rel": media path} or {"error": reason}; encodes what is not cached."""
        from physcodegym.report.media import prepare_clip

        jobs: list[tuple[tuple[str, str], Path, Path]] = []
        for t in self.lb["tasks"]:
            tid = t["id"]
            if Path(t["video"]).is_file():
                jobs.append(((tid, ""), Path(t["video"]), self.out / "media" / _slug(tid) / "reference.mp4"))
            for c in self.lb["configs"]:
                src = _frames_dir(self.chosen.get((c, tid)))
                if src is not None:
                    jobs.append(((tid, c), src, self.out / "media" / _slug(tid) / f"{_slug(c)}.mp4"))
        out: dict[tuple[str, str], dict] = {}
        if not self.videos:
            return {k: {"error": "videos disabled (--no-videos)"} for k, _, _ in jobs}
        done = [0]

        def one(job: tuple[tuple[str, str], Path, Path]) -> None:
            key, src, dst = job
            t0 = time.monotonic()
            name = f"{key[0]} / {key[1] or 'reference'}"
            try:
                rec = prepare_clip(src, dst)
            except Exception as ex:  # one bad clip must not lose the report
                out[key] = {"error": f"{type(ex).__name__}: {ex}"}
                self.media["errors"].append({"task": key[0], "config": key[1] or "reference", "error": str(ex)[:300]})
                done[0] += 1
                self.log(f"report: video {done[0]}/{len(jobs)} {name}: FAILED ({ex})")
                return
            out[key] = {"rel": Path(rec["path"]).resolve().relative_to(self.out.resolve()).as_posix(),
                        "bytes": rec["bytes"]}
            self.media["clips"].append({"task": key[0], "config": key[1] or "reference", **rec})
            done[0] += 1
            if rec["how"] != "cached":
                self.log(f"report: video {done[0]}/{len(jobs)} {name} {rec['how']} ({rec['bytes'] / 1024:.0f} KiB, "
                         f"{time.monotonic() - t0:.1f} s)")

        # each encode is one Blender child (1-2 cores busy); two at a time
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=2) as ex:
            list(ex.map(one, jobs))
        return out

    def findings_of(self, c: str, tid: str, row: dict | None) -> tuple[list[dict], str | None]:
        """Full findings (evidence, still boxes) of a counted run whose score lists finding kinds; cached."""
        kinds = _finding_kinds(row)
        rd = _run_dir(row)
        if not kinds:
            return [], None
        if rd is None or not (rd / "scene.blend").is_file():
            return [{"kind": k, "objects": [], "frames": [],
                     "message": "(run folder gone: only the kind is known)"} for k in kinds], None
        cache = self.out / "evidence" / f"{_slug(c)}__{_slug(tid)}.json"
        blend = rd / "scene.blend"
        key = {"blend": str(blend.resolve()), "mtime_ns": blend.stat().st_mtime_ns}
        if cache.is_file():
            try:
                doc = json.loads(cache.read_text())
                if doc.get("key") == key:
                    return doc["findings"], None
            except (OSError, ValueError, KeyError):
                pass
        self.log(f"report: reading the findings of {c} / {tid} (audit of its scene, once)")
        cache.parent.mkdir(parents=True, exist_ok=True)
        from physcodegym.sandbox import wall  # the run's scene may hold code or paths: audited behind the wall

        with wall.scratch_folder("pcg_evidence_") as scratch:
            p = wall.run_walled(launch.module_argv("physcodegym.report.evidence_worker",
                                                   [str(rd.resolve()), str(scratch / "evidence.json")]),
                                scratch=scratch, readonly=[rd.resolve()], timeout_s=900, memory_mb=6144,
                                max_output=1 << 20)
            if p.timed_out:
                return [], "audit of the run timed out (900 s): findings shown by kind only"
            got = scratch / "evidence.json"
            if p.returncode != 0 or not got.is_file() or got.is_symlink() or got.stat().st_size > (64 << 20):
                return ([{"kind": k, "objects": [], "frames": [], "message": "(details unavailable)"} for k in kinds],
                        f"re-reading the findings failed (exit {p.returncode}): {p.stderr.strip()[-300:]}")
            doc = json.loads(got.read_text())
        if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
            return [], "re-reading the findings gave no findings list"
        atomic.write(cache, json.dumps({"key": key, "findings": doc["findings"]}))
        return doc["findings"], None

    # pages ----------------------------------------------------------------------------------------
    def build(self) -> dict:
        out = self.out
        out.mkdir(parents=True, exist_ok=True)
        (out / "tasks").mkdir(exist_ok=True)
        atomic.write(out / "report.css", assets.CSS)
        atomic.write(out / "report.js", assets.JS)
        clips = self.clips()
        task_cards = []
        for t in self.lb["tasks"]:
            task_cards.append(self.task_page(t, clips))
        atomic.write(out / "index.html", self.index(task_cards))
        return clips

    def _mean_cell(self, s: dict, c: str, set_name: str) -> str:
        m = s[c]["mean"]
        n = s[c].get("n", s["tasks"]) if c in METRIC_NAMES else s["tasks"]
        title = f"{SETS[set_name]}; n = {n}" + (
            f"; covers {', '.join(s[c].get('covers') or [])}" if "covers" in s[c] else "")
        shade = f" style='background:rgba(47,111,222,{0.05 + 0.25 * m:.2f})'" if m is not None else ""
        tag = f"<small>n={n}</small>" if m is not None or c in METRIC_NAMES else "<small>n/a</small>"
        return f"<td data-v='{'' if m is None else f'{m:.6f}'}' title='{e(title)}'{shade}>{_fmt(m)}{tag}</td>"

    def _board_table(self, lb: dict, set_name: str, cat: str) -> str:
        h = [f"<div data-row data-set='{set_name}' data-cat-eq='{e(cat)}'>",
             f"<p class='muted small'>Averaging set <b>{e(set_name)}</b>: {e(SETS[set_name])}"
             + (f" — category <b>{e(cat)}</b> only" if cat else "") + ". n next to a mean = the tasks it averages.</p>",
             "<div class=tw><table class=sortable><thead><tr><th class='l sortable'>Model (harness)</th>"
             "<th class='l sortable'>Config</th><th class=sortable>tasks</th><th class=sortable>artifacts</th>"
             "<th class=sortable>cost/task</th><th class=sortable>launches/task</th>"]
        h += [f"<th class=sortable>{HEAD[c]}</th>" for c in COLS] + ["</tr></thead><tbody>"]
        for b in lb["leaderboard"]:
            s = b["sets"][set_name]
            cost, lau = b.get("cost_usd_per_task"), _launches(self.configs.get(b["config"], {}))
            h.append(f"<tr data-row data-config='{e(b['config'])}'><td class=l>{e(str(b['model']))}<small>"
                     f"{e(b['harness'])}</small></td><td class=l><a href='#cfg-{_slug(b['config'])}'>"
                     f"{e(b['config'])}</a></td><td data-v={s['tasks']}>{s['tasks']}</td><td data-v={b['artifacts']}>"
                     f"{b['artifacts']}/{b['tasks']}</td><td data-v='{'' if cost is None else cost}'>"
                     f"{'–' if cost is None else f'${cost:.2f}'}</td><td data-v='{'' if lau is None else lau}'>"
                     f"{'–' if lau is None else f'{lau:g}'}</td>")
            h += [self._mean_cell(s, c, set_name) for c in COLS] + ["</tr>"]
        h.append("</tbody></table></div></div>")
        return "".join(h)

    def index(self, task_cards: list[str]) -> str:
        lb = self.lb
        cats = sorted({t["category"] for t in lb["tasks"]})
        boards = {"": lb}
        for cat in cats:
            boards[cat] = leaderboard(self.rows, [t for t in lb["tasks"] if t["category"] == cat], self.configs)
        p = [f"<p class=taskset>{e(task_set_line(lb['task_set']))}</p>"] if "task_set" in lb else []
        p += [f"<p>{len(lb['configs'])} configurations × {len(lb['tasks'])} tasks, {len(self.rows)} units "
             f"(results <code>{e(str(self.results))}</code>). Covered metrics: "
             f"<b>{e(', '.join(lb['covered_metrics']) or 'none')}</b>.</p>"]
        if lb["missing_metrics"]:
            p.append(
                "<ul class=small>"
                + "".join(f"<li>{e(n)} missing: {e(str(why))}</li>" for n, why in lb["missing_metrics"].items())
                + "</ul>")
        p.append("<div class='filters card'><label>Averaging set <select data-filter=set>"
                 + "".join(f"<option value='{k}'>{e(k)}</option>" for k in SETS) + "</select></label>"
                 "<label>Category <select data-filter=cat><option value=''>all</option>"
                 + "".join(f"<option>{e(c)}</option>" for c in cats) + "</select></label>"
                 "<label>Configuration <select data-filter=config><option value=''>all</option>"
                 + "".join(f"<option>{e(c)}</option>" for c in lb["configs"]) + "</select></label>"
                 "<span class='muted small'>Click a column header to sort.</span></div>")
        p.append("<h2 id=leaderboard>Leaderboard</h2>")
        for cat, b in boards.items():
            for set_name in SETS:
                p.append(self._board_table(b, set_name, cat))
        bars = _b64(plots.metric_bars(lb))
        cost = _b64(plots.scatter(lb, "cost_usd_per_task", "cost per task (USD)"))
        for b in lb["leaderboard"]:
            b["launches_per_task"] = _launches(self.configs.get(b["config"], {}))
        lau = _b64(plots.scatter(lb, "launches_per_task", "Blender launches per task"))
        heat = _b64(plots.heat(lb))
        p.append("<h2>Metrics per configuration</h2>")
        p.append(
            f"<img class=plot alt='metric bars' src='data:image/png;base64,{bars}'>" if bars else "<p class=muted>No "
                                                                                                  "configuration.</p>")
        p.append("<div class=grid2><div><h3>S_tot vs cost</h3>"
                 + (f"<img class=plot alt='S_tot vs cost' src='data:image/png;base64,{cost}'>" if cost else
                    "<p class=muted>No configuration records cost_usd_per_task.</p>")
                 + "</div><div><h3>S_tot vs launches used</h3>"
                 + (f"<img class=plot alt='S_tot vs launches' src='data:image/png;base64,{lau}'>" if lau else
                    "<p class=muted>No configuration records launches_per_task (config.json).</p>")
                 + "</div></div>")
        if heat:
            p.append(f"<h2>Per-task S_tot</h2><img class=plot alt='heat map' src='data:image/png;base64,{heat}'>")
        p.append("<h2 id=tasks>Tasks</h2><div class=tasks>" + "".join(task_cards) + "</div>")
        p.append("<h2 id=configs>Configurations</h2>")
        for c in lb["configs"]:
            cfg = self.configs.get(c, {})
            note = cfg.get("note") or cfg.get("notes") or ""
            p.append(f"<div class=card id='cfg-{_slug(c)}' data-row data-config='{e(c)}'><b>{e(c)}</b> — model "
                     f"{e(str(cfg.get('model') or c))}, harness {e(str(cfg.get('harness') or '–'))}<div class='small "
                     f"muted'>{e(str(note))}</div></div>")
        p.append("<h2 id=units>Units</h2><table class=sortable><thead><tr><th class='l sortable'>Config</th><th "
                 "class='l sortable'>Task</th><th class='l sortable'>Attempt</th><th class='l sortable'>Status</th><th "
                 "class='l sortable'>Run</th><th class=sortable>S_tot</th><th class=sortable>seconds</th><th "
                 "class=l>Reason</th></tr></thead><tbody>")
        cat_of = {t["id"]: t["category"] for t in lb["tasks"]}
        for r in self.rows:
            cls = "pass" if r["status"] == "done" else "fail"
            st = r["score"].S_tot if r.get("score") is not None else None
            href = f"tasks/{_slug(r['task_id'])}.html#unit-{_slug(r['config'])}-{_slug(r['attempt'])}"
            p.append(f"<tr data-row data-config='{e(r['config'])}' data-cat='{e(cat_of.get(r['task_id'], ''))}'>"
                     f"<td class=l>{e(r['config'])}</td><td class=l><a href='{href}'>{e(r['task_id'])}</a></td>"
                     f"<td class=l>{e(str(r['attempt']))}</td><td class='l {cls}'>{e(r['status'])}</td><td "
                     f"class=l>{e(str(r.get('run_status')))}</td><td data-v='{'' if st is None else st}'>"
                     f"{_fmt(st)}</td><td data-v='{r.get('seconds_total') or 0}'>"
                     f"{r.get('seconds_total') or 0:.1f}</td><td class='l wrap "
                     f"small'>{e(str(r.get('reason') or ''))[:300]}</td></tr>")
        p.append("</tbody></table>")
        return _page("PhysCodeGym report", "".join(p), 0, "<a href='#tasks'>Tasks</a><a href='#units'>Units</a>")

    def task_page(self, t: dict, clips: dict) -> str:
        tid = t["id"]
        page_dir = self.out / "tasks"
        lt = _load_task(t)
        task = lt.task if lt is not None else None
        cfgs = self.lb["configs"]
        chosen = {c: self.chosen.get((c, tid)) for c in cfgs}
        events = [ev.model_dump(mode="json") for ev in task.events] if task is not None else []
        b = [f"<p>{e(t.get('title', ''))} — <span class=pill>{e(t['category'])}</span>"
             + (f" <span class=pill>{e(t['subcategory'])}</span>" if t.get("subcategory") else "") + "</p>"]
        if task is not None and task.summary:
            b.append(f"<p class=muted>{e(task.summary)}</p>")
        if lt is None:
            b.append(f"<p class=fail>The task folder {e(t['folder'])} cannot be loaded: events, rubric texts and truth "
                     "trajectories are not shown.</p>")
        # scores at a glance
        b.append("<table class=sortable><thead><tr><th class='l sortable'>Config</th><th class='l'>Attempt</th><th "
                 "class='l'>Artifact</th>"
                 + "".join(f"<th class=sortable>{HEAD[c]}</th>" for c in (*METRIC_NAMES, "S_tot"))
                 + "</tr></thead><tbody>")
        for c in cfgs:
            pt = self.lb["per_task"][c][tid]
            vals = {**pt["values"], "S_tot": pt["S_tot"]}
            b.append(f"<tr data-row data-config='{e(c)}'><td class=l><a href='#cfg-{_slug(c)}'>{e(c)}</a></td><td "
                     f"class=l>{e(str(pt.get('attempt')))}</td><td "
                     f"class=l>{'yes' if pt['artifact'] else '<span class=fail>no</span>'}</td>"
                     + "".join(
                         f"<td data-v='{'' if vals[n] is None else vals[n]}'>{_fmt(vals[n])}</td>" for n in (
                             *METRIC_NAMES, "S_tot"))
                     + "</tr>")
        b.append("</tbody></table>")
        # synchronised videos
        fnds = {c: self.findings_of(c, tid, chosen[c])[0] for c in cfgs}
        b.append(self._player(tid, cfgs, chosen, clips, events, page_dir, fnds))
        # plots
        truth = _samples(lt.truth_trajectories) if lt is not None else None
        cand_s = {}
        for c in cfgs:
            rd = _run_dir(chosen[c])
            s = (_samples(rd / "audit_samples.npz") if rd is not None and chosen[c] and chosen[c].get("artifact")
                 else None)
            if s is not None:
                cand_s[c] = (s, _mapping(chosen[c]))
        roles = ([{"name": r.name, "truth_object": r.truth_object} for r in task.roles if r.core] if task is not None
                 else [])
        traj = self.write_img(f"{_slug(tid)}/trajectories.png",
                              plots.trajectories(roles, truth, cand_s)) if roles else None
        b.append("<h2>Trajectories: candidate vs truth</h2>")
        if traj:
            b.append(f"<img class=plot alt='trajectories {e(tid)}' src='../{traj}'>")
        why = []
        if truth is None:
            why.append(
                "this task ships no truth trajectories" if lt is None or lt.truth_trajectories is None
                or not lt.truth_trajectories.is_file()
                       else "the truth trajectories cannot be read")
        nos = [c for c in cfgs if c not in cand_s]
        if nos:
            why.append(f"no sampled candidate scene for {', '.join(nos)} (no artifact, or S_val was not computed)")
        if why:
            b.append(f"<p class='muted small'>{e('; '.join(why))}.</p>")
        ious = {c: _per_frame(chosen[c], "motion_iou") for c in cfgs}
        iou = self.write_img(f"{_slug(tid)}/iou.png", plots.iou_over_time({c: v for c, v in ious.items() if v}, events))
        b.append(
            "<h2>Motion-mask IoU over time</h2>" + (f"<img class=plot alt='iou {e(tid)}' src='../{iou}'>" if iou else
                 "<p class=muted>No configuration has a per-frame motion IoU for this task (S_mot not computed or no "
                 "artifact).</p>"))
        # per configuration
        crit_spec = {c.id: c for c in task.rubric.criteria} if task is not None else {}
        for c in cfgs:
            b.append(self._config_section(c, tid, chosen[c], crit_spec, page_dir))
        # every unit of this task
        b.append("<h2 id=units>Units of this task</h2>")
        for r in [r for r in self.rows if r["task_id"] == tid]:
            b.append(self._unit(r, page_dir))
        atomic.write(page_dir / f"{_slug(tid)}.html", _page(f"Task {tid}", "".join(b), 1,
                                                             "<a href='#player'>Videos</a><a href='#units'>Units</a>"))
        # the card on the index page
        with_art = {c: _frames_dir(chosen[c]) for c in cfgs if _frames_dir(chosen[c]) is not None}
        strip = _b64(_strip(t, with_art))
        sc = "".join(
            f"<div class=small>{e(c)}: S_tot <b>{_fmt(self.lb['per_task'][c][tid]['S_tot'])}</b></div>" for c in cfgs)
        return (f"<div class=card data-row data-cat='{e(t['category'])}'><a href='tasks/{_slug(tid)}.html'><b>"
                f"{e(tid)}</b></a> <span class=pill>{e(t['category'])}</span><div class='small "
                f"muted'>{e(t.get('title', ''))}</div>"
                + (f"<a href='tasks/{_slug(tid)}.html'><img alt='strip {e(tid)}' src='data:image/png;base64,"
                   f"{strip}'></a>" if strip else "")
                + "<div class='small muted'>rows: "
                  f"reference{''.join(', ' + e(c) for c in with_art) or ' (no candidate artifact)'}</div>{sc}</div>")

    def _player(self, tid: str, cfgs: list[str], chosen: dict, clips: dict, events: list[dict], page_dir: Path,
                findings: dict[str, list[dict]] | None = None) -> str:
        dur = 240 / FPS
        figs = []
        order = [("", "reference")] + [(c, c) for c in cfgs]
        for key, label in order:
            clip = clips.get((tid, key))
            if key and clip is None:
                r = chosen.get(key)
                if r is not None and r.get("artifact"):
                    msg = "its frames are no longer where the batch left them (results folder moved or cleaned?)"
                else:
                    msg = "no valid artifact — " + str(
                        "no submission" if r is None else (r.get("reason") or r.get("status")))
                figs.append(f"<figure><div class=nov>{e(label)}: {e(msg)[:220]}</div></figure>")
                continue
            if clip is None or "error" in clip:
                figs.append(f"<figure><div class=nov>{e(label)}: video unavailable — "
                            f"{e(str((clip or {}).get('error', 'no video')))[:200]}</div></figure>")
                continue
            pt = self.lb["per_task"][key][tid]["S_tot"] if key else None
            cap = f"<span>{e(label)}</span><span>{'' if pt is None else 'S_tot ' + _fmt(pt)}</span>"
            figs.append(f"<figure><video muted playsinline preload=auto src='../{clip['rel']}' "
                        f"data-label='{e(label)}'></video><figcaption>{cap}</figcaption></figure>")
        marks = []
        for ev in events:
            iv = ev.get("interval") or {}
            s0, s1 = float(iv.get("start_s") or 0), float(iv.get("end_s") or iv.get("start_s") or 0)
            left, width = 100 * s0 / dur, max(0.8, 100 * (s1 - s0) / dur)
            marks.append(f"<div class='ev{' key' if ev.get('key') else ''}' style='left:{left:.2f}%;width:"
                         f"{width:.2f}%' data-seek='{int(round(s0 * FPS)) + 1}' title='{e(ev.get('id', ''))}: "
                         f"{e(ev.get('description', ''))} ({s0:.2f}–{s1:.2f} s)'>{e(ev.get('id', ''))}</div>")
        for c, fs in (findings or {}).items():
            for f in fs:
                fr = [x for x in (f.get("frames") or []) if isinstance(x, int | float)]
                if not fr:
                    continue
                marks.append(f"<div class=fm style='left:{100 * (fr[0] - 1) / 240:.2f}%' data-seek='{int(fr[0])}' "
                             f"title='{e(c)}: {e(str(f.get('kind')))} on "
                             f"{e(', '.join(map(str, f.get('objects') or [])))} "
                             f"({e(evidence.frames_text(fr))})'></div>")
        ctrl = ("<div class=controls><button class=first title='first frame'>|◀ first</button><button class=prev "
                "title='previous frame (←)'>◀ frame</button><button class=play>▶ play</button><button class=next "
                "title='next frame (→)'>frame ▶</button><label class='small muted'>speed <select class=speed><option "
                "value=0.25>0.25×</option><option value=0.5>0.5×</option><option value=1 selected>1×</option><option "
                "value=2>2×</option></select></label><span class=time>frame 1 / 240</span></div>")
        ev_list = "".join("<li><a href='#player' "
                          f"data-seek='{int(round(float((ev.get('interval') or {}).get('start_s') or 0) * FPS)) + 1}'>"
                          f"{e(ev.get('id', ''))}</a> {'<b>key</b> ' if ev.get('key') else ''}("
                          f"{float((ev.get('interval') or {}).get('start_s') or 0):.2f}–"
                          f"{float((ev.get('interval') or {}).get('end_s') or 0):.2f} s, weight {ev.get('weight')}): "
                          f"{e(ev.get('description', ''))}</li>" for ev in events)
        return (f"<h2 id=player>Reference and candidates, in sync</h2><div class='sync card' data-fps={FPS} "
                f"data-duration={dur:g}><div class=videos>{''.join(figs)}</div>{ctrl}<div class=timeline><input "
                f"type=range min=1 max=240 value=1 step=1>{''.join(marks)}</div><p class='small muted'>One control "
                "drives every video (the reference is the clock). ← / → step one frame, space plays. Markers: the "
                "task's timed events (red: key items) and, as red ticks, where a candidate's findings start; click one "
                "to jump to it.</p>"
                + (f"<ul class=small>{ev_list}</ul>" if ev_list else "<p class='small muted'>This task has no timed "
                                                                     "events.</p>")
                + "</div>")

    def _config_section(self, c: str, tid: str, row: dict | None, crit_spec: dict, page_dir: Path) -> str:
        pt = self.lb["per_task"][c][tid]
        h = [f"<section class=card id='cfg-{_slug(c)}' data-row data-config='{e(c)}'><h2>{e(c)} — attempt "
             f"{e(str(pt.get('attempt')))}: S_tot {_fmt(pt['S_tot'])}</h2>"]
        if row is None:
            h.append("<p class=fail>No submission for this task: it scores 0 on every metric and stays in the "
                     "denominator.</p></section>")
            return "".join(h)
        h.append(f"<p class=small><a href='#unit-{_slug(c)}-{_slug(row['attempt'])}'>unit details and files</a></p>")
        if not pt["artifact"]:
            h.append(f"<p class=fail>No valid artifact — {e(str(pt.get('reason') or row.get('reason')))}. Every metric "
                     "counts as 0 for this task and it stays in the denominator.</p>")
        elif row.get("status") != "done":
            h.append(f"<p class=fail>Scoring failed — {e(str(row.get('reason')))}. Its metrics are technical gaps "
                     "(left out of the means).</p>")
        sc = row.get("score")  # a ScoreDocument (validated by the results store) or None
        val = sc.states.get("S_val") if sc is not None else None
        if sc is not None:
            h += _score_table(sc)
        crit = _criteria(row)
        if crit:
            h.append("<h3>Rubric criteria (S_val)</h3><ul>")
            for cr in crit:
                cls, word = evidence.verdict(cr)
                sent = evidence.criterion_sentence(cr, crit_spec.get(cr.get("id")))
                raw = json.dumps({k: v for k, v in cr.items()}, indent=1, default=str)
                h.append(f"<li><span class={cls}>{word}</span> <code>{e(str(cr.get('id')))}</code> — {e(sent)}"
                         f"<details><summary>raw numbers</summary><pre>{e(raw[:6000])}</pre></details></li>")
            h.append("</ul>")
        elif sc is not None:
            h.append(f"<p class='muted small'>No rubric criteria: S_val {e(str(val.state if val else 'missing'))} — "
                     f"{e(str((val.reason if val else None) or ''))}</p>")
        findings, err = self.findings_of(c, tid, row)
        if err:
            h.append(f"<p class='small fail'>{e(err)}</p>")
        if findings:
            h.append(f"<h3>Findings ({len(findings)})</h3>")
            fd = _frames_dir(row)
            for kind, fs in evidence.group_findings(findings).items():
                h.append(f"<div class=kind id='finding-{_slug(c)}-{_slug(kind)}'><h4>"
                         f"{e(evidence.KIND_TEXT.get(kind, kind))} — {len(fs)}</h4>")
                for k, f in enumerate(fs):
                    h.append(self._finding(f, c, tid, kind, k, fd))
                h.append("</div>")
        elif sc is not None and "S_val" in sc.metrics and val is not None and val.state == "ok":
            h.append("<p class='small pass'>The audit found no task-independent violation.</p>")
        h.append("</section>")
        return "".join(h)

    def _finding(self, f: dict, c: str, tid: str, kind: str, k: int, frames_dir: Path | None) -> str:
        objs = ", ".join(map(str, f.get("objects") or [])) or "–"
        val = f.get("value")
        vtxt = f"{val:.4g} {f.get('unit') or ''}" if isinstance(val, int | float) else "–"
        h = [f"<div class=finding><p><b>{e(objs)}</b> · {e(evidence.frames_text(f.get('frames') or []))} · measured "
             f"{e(vtxt)}<br>{e(str(f.get('message') or ''))}</p><div class=stills>"]
        base = f"{_slug(tid)}/{_slug(c)}_{_slug(kind)}_{k}"
        w = self.write_img(base + "_witness.png", plots.witness(f))
        if w:
            h.append(f"<img alt='witness {e(kind)}' src='../{w}'>")
        still = f.get("still") or {}
        fr = still.get("frame")
        if frames_dir is not None and frames_dir.is_dir() and fr:
            src = frames_dir / f"{int(fr):04d}.png"
            if src.is_file():
                boxes = still.get("boxes") or {}
                png = plots.still_with_boxes(src.read_bytes(), boxes, f"frame {fr}: {kind}")
                s = self.write_img(base + "_still.png", png)
                if s:
                    h.append(f"<img alt='still {e(kind)}' src='../{s}'>")
                if not boxes:
                    h.append("<p class='small muted'>(the objects could not be projected with the scene camera at this "
                             "frame)</p>")
        h.append("</div>")
        ev = {k2: v for k2, v in (f.get("evidence") or {}).items() if k2 != "series"}
        if ev:
            h.append("<details><summary>raw evidence</summary><pre>"
                     f"{e(json.dumps(ev, indent=1, default=str)[:6000])}</pre></details>")
        h.append("</div>")
        return "".join(h)

    def _unit(self, r: dict, page_dir: Path) -> str:
        ev = r.get("evidence") or {}
        links = []
        for label, key in (("run.log", "log"), ("run.json", "run_json"), ("score.json", "score_json"),
                           ("scene.blend", "blend")):
            pth = ev.get(key)
            if pth and Path(pth).is_file():
                links.append(f"<a href='{e(_rel(pth, page_dir))}'>{label}</a>")
        rd = ev.get("run_dir")
        if rd and (Path(rd) / "scene.py").is_file():
            links.append(f"<a href='{e(_rel(Path(rd) / 'scene.py', page_dir))}'>scene.py</a>")
        cls = "pass" if r["status"] == "done" else "fail"
        return (f"<div class=card id='unit-{_slug(r['config'])}-{_slug(r['attempt'])}' data-row "
                f"data-config='{e(r['config'])}'><b>{e(r['config'])}</b> attempt {e(str(r['attempt']))}: <span "
                f"class={cls}>{e(r['status'])}</span> (run {e(str(r.get('run_status')))}, "
                f"{r.get('seconds_total') or 0:.1f} s, peak {r.get('peak_memory_mb') or 0:.0f} "
                "MB)"
                f"{' — <span class=small>' + e(str(r.get('reason')))[:400] + '</span>' if r.get('reason') else ''}"
                f"<div class=small>{' · '.join(links) or 'no files kept'}</div></div>")


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def build_report(results_dir: Path, out_dir: Path, videos: bool = True,
                 log: Callable[[str], None] | None = None) -> dict:
    """Write leaderboard.{md,csv,json}, index.html and the task pages into out_dir; returns paths and a summary."""
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    t0 = time.monotonic()
    b = _Builder(results_dir, out_dir, videos, log or (lambda s: print(s, file=sys.stderr, flush=True)))
    b.build()
    lb = b.lb
    paths = {"markdown": out_dir / "leaderboard.md", "csv": out_dir / "leaderboard.csv",
             "json": out_dir / "leaderboard.json",
             "html": out_dir / "index.html"}
    atomic.write(paths["markdown"], markdown(lb))
    atomic.write(paths["csv"], csv_text(lb))
    atomic.write(paths["json"], json.dumps(lb, indent=2, default=str))
    pages = sorted(str(p) for p in (out_dir / "tasks").glob("*.html"))
    return {"report": str(paths["html"]), "files": {k: str(v) for k, v in paths.items()}, "pages": pages,
            "task_set": lb["task_set"],
            "configs": lb["configs"], "tasks": [t["id"] for t in lb["tasks"]],
            "videos": {"clips": len(b.media["clips"]), "bytes": sum(c["bytes"] for c in b.media["clips"]),
                       "errors": b.media["errors"]},
            "bytes": _size(out_dir), "seconds": round(time.monotonic() - t0, 2),
            "leaderboard": [{"config": x["config"], "S_tot": x["sets"]["all_tasks"]["S_tot"]["mean"],
                             "artifacts": x["artifacts"], "tasks": x["tasks"]} for x in lb["leaderboard"]]}
