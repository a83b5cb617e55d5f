"""Run a batch's units on a local process pool or an existing Ray cluster, resumably.

The parent discovers units, skips those whose row is final (same program and task hashes) when resuming,
dispatches the rest, and writes each unit's row into the store as soon as it returns. Workers write only
inside their unit folder. A progress bar (stderr) shows done / failed / running and an ETA.

SIGTERM to the parent ends the pool's workers and their process trees (the running units' isolated children),
closes the store (the running units have no row, so `--resume` redoes them) and then takes its usual course.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from physcodegym.batch.store import ResultsStore
from physcodegym.batch.units import UnitSpec, discover, execute_unit, read_task_selection, task_set
from physcodegym.core.errors import InputError
from physcodegym.core.limits import kill_tree


def default_workers() -> int:
    """One unit per two cores (each runs a Blender child that renders with 2 threads), at least one."""
    return max(1, (os.cpu_count() or 2) // 2)


class _Progress:
    def __init__(self, total: int, skipped: int, enabled: bool) -> None:
        self.total, self.skipped = total, skipped
        self.done = self.failed = self.running = 0
        self.t0 = time.monotonic()
        self.p = None
        if enabled and total:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.p = Progress(TextColumn("[bold]batch"), BarColumn(), MofNCompleteColumn(),
                              TextColumn("{task.fields[info]}"),
                              TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                              console=Console(stderr=True))
            self.p.start()
            self.tid = self.p.add_task("batch", total=total, info=self._info())

    def _info(self) -> str:
        return f"done {self.done} failed {self.failed} running {self.running} (resumed past {self.skipped})"

    def update(self) -> None:
        if self.p is not None:
            self.p.update(self.tid, completed=self.done + self.failed, info=self._info())

    def close(self) -> None:
        if self.p is not None:
            self.update()
            self.p.stop()


def _lock(results: Path) -> Any:
    fh = open(results / ".batch.lock", "w")  # noqa: SIM115 (held for the batch's lifetime)
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as e:
        fh.close()
        raise InputError("another batch is running on this results folder", file=str(results), field="--out") from e
    return fh


class _Terminated(BaseException):
    """SIGTERM reached the batch's parent (a BaseException, so no `except Exception` of a unit's bookkeeping
    swallows it)."""


def _raise_terminated(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM does not interrupt the clean-up
    raise _Terminated(signum)


@contextlib.contextmanager
def _sigterm_stops_the_batch():
    """While the batch runs, SIGTERM raises `_Terminated` in the main thread, so the pool's workers are killed
    (`_run_pool`) and the store closed and unlocked on the way out; then SIGTERM is delivered again under the
    previous disposition (by default the process ends by SIGTERM, as it would have without this)."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) in (
            signal.SIG_IGN, None):
        yield
        return
    prev = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, prev)
        signal.raise_signal(signal.SIGTERM)
        raise SystemExit(128 + signal.SIGTERM) from None  # the previous handler returned
    finally:
        signal.signal(signal.SIGTERM, prev)


@_sigterm_stops_the_batch()
def run_batch(tasks_dir: Path, submissions_dir: Path, out: Path, *, workers: int | None = None,
              ray_address: str | None = None,
              resume: bool = False, overwrite: bool = False, timeout_s: float | None = None,
              memory_mb: int | None = 8192,
              expected_frames: int = 240, metrics: list[str] | None = None, judge: dict | None = None,
              configs: list[str] | None = None, progress: bool = True, task_ids: list[str] | None = None,
              tasks_from: Path | None = None) -> dict:
    """Run every unit not yet final; returns a summary document.

    `task_ids` (or `tasks_from`, a selection file or manifest) runs a subset of the tasks. The store records the
    task set and version (meta `task_set`); resuming on another version of the set is refused, so results of two
    task versions never mix in one leaderboard.
    """
    if tasks_from is not None:
        task_ids = read_task_selection(Path(tasks_from))
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    lock = _lock(out)
    store = ResultsStore(out)
    try:
        if store.count() and not resume and not overwrite:
            raise InputError("results already exist; pass --resume to continue or --overwrite to start again",
                             file=str(store.path), field="--out")
        if overwrite:
            store.clear_units()
        units, tasks, cfg_meta = discover(Path(tasks_dir), Path(submissions_dir), out, timeout_s=timeout_s,
                                          memory_mb=memory_mb,
                                          expected_frames=expected_frames, metrics=metrics, judge=judge,
                                          configs=configs,
                                          task_ids=task_ids)
        tset = task_set(Path(tasks_dir))
        before = store.get_meta("task_set")
        if store.count() and not overwrite and before and (before.get("set"), before.get("version")) != (
            tset["set"], tset["version"]):
            raise InputError(f"these results are on task set {before.get('set')} {before.get('version')}, the tasks "
                             f"are now {tset['set']} {tset['version']}: resuming would mix two task versions; use a "
                             "new --out or --overwrite", file=str(store.path), field="--resume")
        for u in units:
            u.extra["task_set"] = {"set": tset["set"], "version": tset["version"]}
        store.set_meta("task_set", tset)
        store.set_meta("tasks", tasks)
        store.set_meta("configs", cfg_meta)
        store.set_meta("batch",
                       {"tasks_dir": str(Path(tasks_dir).resolve()),
                        "submissions_dir": str(Path(submissions_dir).resolve()),
                                 "expected_frames": expected_frames, "metrics": metrics, "units": len(units),
                                 "tasks_from": str(Path(tasks_from).resolve()) if tasks_from else None,
                                 "task_ids": [t["id"] for t in tasks]})
        final = store.final_keys()
        todo = [u for u in units if final.get(u.key) != (u.program_sha256, u.task_sha256)]
        skipped = len(units) - len(todo)
        bar = _Progress(len(units), skipped, progress)
        bar.done = skipped
        bar.update()
        t0 = time.monotonic()

        def record(row: dict) -> None:
            store.put(row)
            if row.get("status") == "done":
                bar.done += 1
            else:
                bar.failed += 1
            bar.update()

        try:
            if ray_address:
                _run_ray(todo, ray_address, record, bar)
            else:
                _run_pool(todo, workers or default_workers(), record, bar)
        finally:
            bar.close()
        rows = store.rows()
        keys = {u.key for u in units}
        mine = [r for r in rows if (r["config"], r["task_id"], r["attempt"]) in keys]
        return {
            "results": str(out),
            "store": str(store.path),
            "task_set": {k: tset[k] for k in ("set", "version", "sha256", "n_tasks")} | {"selected": len(tasks),
                                                                                       "stale": len(tset["stale"])},
            "units": len(units),
            "ran": len(todo),
            "skipped_final": skipped,
            "seconds": round(time.monotonic() - t0, 3),
            "by_status": {s: sum(1 for r in mine if r["status"] == s) for s in ("done", "failed", "invalid", "error")},
            "executor": f"ray:{ray_address}" if ray_address else f"pool:{workers or default_workers()}",
            "failures": [{"config": r["config"], "task_id": r["task_id"], "attempt": r["attempt"],
                          "status": r["status"],
                          "reason": r["reason"]} for r in mine if r["status"] != "done"],
        }
    finally:
        store.close()
        with contextlib.suppress(OSError):
            fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()


def _error_row(u: UnitSpec, reason: str) -> dict:
    return {"config": u.config, "task_id": u.task_id, "attempt": u.attempt, "status": "error", "reason": reason,
            "program_sha256": u.program_sha256, "task_sha256": u.task_sha256, "artifact": False}


def _run_pool(todo: list[UnitSpec], workers: int, record, bar: _Progress) -> None:
    if not todo:
        return
    pending = list(todo)
    broken: dict[tuple, int] = {}
    while pending:
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as ex, _workers_die_with(ex):
            futs: dict[Future, UnitSpec] = {}
            queue = list(pending)
            pending = []

            def fill(ex=ex, queue=queue, futs=futs) -> None:
                while queue and len(futs) < workers:
                    u = queue.pop(0)
                    futs[ex.submit(execute_unit, u.to_dict())] = u

            fill()
            bar.running = len(futs)
            bar.update()
            pool_broken = False
            while futs:
                done, _ = wait(list(futs), timeout=1.0, return_when=FIRST_COMPLETED)
                for f in done:
                    u = futs.pop(f)
                    try:
                        record(f.result())
                    except BrokenProcessPool:
                        pool_broken = True
                        broken[u.key] = broken.get(u.key, 0) + 1
                        if broken[u.key] >= 2:
                            record(_error_row(u, "worker process died twice while running this unit"))
                        else:
                            pending.append(u)
                    except Exception as e:
                        record(_error_row(u, f"worker raised {type(e).__name__}: {e}"))
                if not pool_broken:
                    fill()
                bar.running = len(futs)
                bar.update()
            if pool_broken:
                pending.extend(queue)


@contextlib.contextmanager
def _workers_die_with(ex: ProcessPoolExecutor):
    """Leaving the pool by an exception (SIGTERM, Ctrl-C) kills each worker's process tree, the running units'
    sandboxed children included (`core.limits.kill_tree`, as on a timeout): otherwise the pool's shutdown would
    wait for the running units, and a parent that dies leaves them running."""
    try:
        yield
    except BaseException:
        for pid in list(getattr(ex, "_processes", None) or {}):
            kill_tree(pid)
        ex.shutdown(wait=False, cancel_futures=True)
        raise


def _run_ray(todo: list[UnitSpec], address: str, record, bar: _Progress) -> None:
    try:
        import ray
    except ImportError as e:
        raise InputError("Ray is not installed (pip install 'ray[default]')", field="--ray") from e
    ray.init(address=address, ignore_reinit_error=True, log_to_driver=False, logging_level="ERROR")
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(execute_unit)
        refs = {remote.remote(u.to_dict()): u for u in todo}
        bar.running = min(len(refs), int(ray.cluster_resources().get("CPU", 1)))
        bar.update()
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1, timeout=1.0)
            for r in ready:
                u = refs.pop(r)
                try:
                    record(ray.get(r))
                except Exception as e:
                    record(_error_row(u, f"ray task failed: {type(e).__name__}: {e}"))
            bar.running = min(len(refs), int(ray.cluster_resources().get("CPU", 1)))
            bar.update()
    finally:
        ray.shutdown()
