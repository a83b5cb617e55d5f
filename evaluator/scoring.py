"""Score one candidate (a run folder or a video) against a task: every metric, aggregated (SPEC §4, §7).

Both videos are decoded once and shared by all metrics; the reference's decode and motion masks are cached
per process (keyed by path, size and mtime) so batch scoring of many candidates decodes each reference once.
Every metric lands in the result with a state and a reason: an unavailable prerequisite (no judge, no LPIPS
weights, no native scene) is reported missing, never as a number; a candidate with no valid artifact scores 0.

A run folder is read only through its validated artifact set (`sandbox.artifacts.validated_run`): the runner's
record, the files it accepted, each verified by hash as it is read. A run that is not `ok`, or whose files no
longer match, is `invalid` with one reason (the same string `run`, `audit --task` and `batch` report): every
requested metric scores 0 and S_val is never computed. A bare video gets the same header checks and bounds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from physcodegym.core.errors import InputError
from physcodegym.evaluator.score_document import ScoreDocument
from physcodegym.metrics.aggregate import aggregate, zero_results
from physcodegym.metrics.results import METRIC_NAMES, MetricResult, MetricState
from physcodegym.metrics.video import NoArtifact, decode_png_blobs, decode_video_limited, is_run_dir, load_video
from physcodegym.sandbox import artifacts

# --metrics keywords -> metric names
METRIC_KEYS: dict[str, str] = {
    "ssim": "S_ssim",
    "lpips": "S_lpips",
    "motion": "S_mot",
    "mot": "S_mot",
    "obj": "S_obj",
    "evt": "S_evt",
    "val": "S_val",
}
NO_JUDGE = "no judge configured (give --judge-provider and --judge-model)"

_REF_CACHE: dict[tuple, dict[str, Any]] = {}
_REF_CACHE_MAX = 2


def parse_metrics(spec: str | list[str] | None) -> list[str]:
    """Canonical metric names from 'ssim,lpips,...' / ['S_ssim', ...] / None (= all six)."""
    if spec is None:
        return list(METRIC_NAMES)
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[str] = []
    for raw in items:
        k = raw.strip()
        if not k:
            continue
        name = METRIC_KEYS.get(k.lower()) or (k if k in METRIC_NAMES else None)
        if name is None:
            raise InputError(f"unknown metric {k!r}; known: {', '.join(sorted(set(METRIC_KEYS)))}", field="--metrics")
        if name not in out:
            out.append(name)
    if not out:
        raise InputError("no metric selected", field="--metrics")
    return out


def reference_data(video_path: Path) -> dict[str, Any]:
    """Decoded reference frames (and lazily its motion masks), cached per process."""
    p = Path(video_path).resolve()
    if not p.exists():
        raise InputError("reference video is missing", file=str(p), field="video.file")
    st = p.stat()
    key = (str(p), st.st_size, st.st_mtime_ns)
    if key not in _REF_CACHE:
        while len(_REF_CACHE) >= _REF_CACHE_MAX:
            _REF_CACHE.pop(next(iter(_REF_CACHE)))
        _REF_CACHE[key] = {"frames": load_video(p)}
    return _REF_CACHE[key]


def _ref_masks(ref: dict[str, Any]) -> np.ndarray:
    if "masks" not in ref:
        from physcodegym.metrics.motion import motion_masks

        ref["masks"] = motion_masks(ref["frames"])
    return ref["masks"]


def _guard(name: str, fn: Callable[[], MetricResult]) -> MetricResult:
    """One metric failing must not lose the others: its failure becomes an `error` result with the reason."""
    try:
        return fn()
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001 - reported, not swallowed
        return MetricResult.missing(name, MetricState.error, f"{type(e).__name__}: {e}")


def _provider(judge: dict | None) -> tuple[Any, str | None]:
    """(provider, None) or (None, reason) from the judge configuration."""
    if not judge or not (judge.get("provider") or judge.get("provider_obj")):
        return None, NO_JUDGE
    if judge.get("provider_obj") is not None:
        return judge["provider_obj"], None
    if not judge.get("model"):
        raise InputError("a judge provider needs a model", field="--judge-model")
    try:
        from physcodegym.llm.factory import make_provider
    except ImportError as e:
        return None, f"judge providers unavailable: {e}"
    return make_provider(judge["provider"], judge["model"], base_url=judge.get("base_url")), None


def _judge_results(
    loaded_task: Any, wanted: list[str], ref: np.ndarray, cand: np.ndarray, judge: dict | None
) -> dict[str, MetricResult]:
    out: dict[str, MetricResult] = {}
    names = [n for n in ("S_obj", "S_evt") if n in wanted]
    if not names:
        return out
    provider, reason = _provider(judge)
    if provider is None:
        return {n: MetricResult.missing(n, MetricState.uncomputable, reason) for n in names}
    cache_dir = Path(judge["cache_dir"]) if judge.get("cache_dir") else None
    if "S_obj" in names:

        def obj() -> MetricResult:
            try:
                from physcodegym.judges.object_judge import judge_objects
            except ImportError as e:
                return MetricResult.missing("S_obj", MetricState.uncomputable, f"object judge unavailable: {e}")
            return judge_objects(loaded_task, cand, provider, cache_dir=cache_dir)

        out["S_obj"] = _guard("S_obj", obj)
    if "S_evt" in names:

        def evt() -> MetricResult:
            try:
                from physcodegym.judges.event_judge import judge_events
            except ImportError as e:
                return MetricResult.missing("S_evt", MetricState.uncomputable, f"event judge unavailable: {e}")
            return judge_events(
                loaded_task, ref, cand, provider, n_judgments=int(judge.get("n_judgments", 3)), cache_dir=cache_dir
            )

        out["S_evt"] = _guard("S_evt", evt)
    return out


def _validity(loaded_task: Any, candidate: Path, vr: artifacts.ValidatedRun | None, timeout_s: float,
              unsafe_no_isolation: bool = False) -> MetricResult:
    if vr is None:
        return MetricResult.missing(
            "S_val", MetricState.not_applicable, "candidate is a bare video: no native scene (scene.blend) to verify"
        )
    if vr.blend is None:
        return MetricResult.missing(
            "S_val", MetricState.not_applicable, f"run folder has no accepted scene.blend ({candidate})"
        )
    try:
        from physcodegym.verifier.validity import s_val_for_run
    except ImportError as e:
        return MetricResult.missing("S_val", MetricState.uncomputable, f"validity audit unavailable: {e}")
    return s_val_for_run(loaded_task, candidate, timeout_s=timeout_s, unsafe_no_isolation=unsafe_no_isolation)


def _decode_video_bytes(data: bytes, expected_frames: int) -> np.ndarray:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="pcg_cand_") as tmp:  # a trusted place the program never had
        p = Path(tmp) / "render.mp4"
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return decode_video_limited(p, expected_frames)


def load_validated_frames(vr: artifacts.ValidatedRun, expected_frames: int) -> np.ndarray:
    """The rendered frames of a validated run, each read once and verified against its recorded hash.

    Raises NoArtifact with the reason when the accepted render is not the contract's `expected_frames` frames."""
    try:
        if vr.render == "frames":
            names = vr.frame_names()
            want = [f"frames/{i:04d}.png" for i in range(1, expected_frames + 1)]
            if names != want:
                raise NoArtifact(
                    f"the run accepted {len(names)} frame(s); the task needs frames/0001..{expected_frames:04d}.png"
                )
            rfd = artifacts.open_dir(vr.run_dir)
            try:
                blobs = [artifacts.read_verified(vr.run_dir, n, vr.artifacts, root_fd=rfd) for n in names]
            finally:
                os.close(rfd)
            for n, b in zip(names, blobs, strict=True):
                artifacts.check_png(b[:33], n)
            return decode_png_blobs(blobs, names)
        if vr.render == "video":
            data = artifacts.read_verified(vr.run_dir, "render.mp4", vr.artifacts)
            import io

            info = artifacts.mp4_info(io.BytesIO(data), len(data), "render.mp4")
            artifacts.validate_candidate_video(info, "render.mp4", expected_frames)
            return _decode_video_bytes(data, expected_frames)
    except artifacts.ArtifactError as e:
        raise NoArtifact(f"accepted artifact no longer matches run.json: {e}") from e
    except ValueError as e:
        raise NoArtifact(f"rendered output is not a valid {expected_frames}-frame video: {e}") from e
    raise NoArtifact("run folder has no accepted frames/ and no render.mp4")


def _bare_frames(folder: Path, expected_frames: int) -> np.ndarray:
    """A bare folder of numbered PNG frames: the run's header checks (no links, regular files, IHDR, count)."""
    import re

    dfd = artifacts.open_dir(folder)
    try:
        with os.scandir(dfd) as it:
            names = []
            for e in it:
                if re.fullmatch(r"\D*\d+\.png", e.name, re.IGNORECASE):
                    names.append(e.name)
                if len(names) > expected_frames:
                    break
        names.sort(key=lambda n: int(re.search(r"(\d+)\.png$", n, re.IGNORECASE).group(1)))
        if not names:
            raise InputError("folder holds no numbered PNG frames", file=str(folder))
        if len(names) != expected_frames:
            more = "more than " if len(names) > expected_frames else ""
            raise InputError(
                f"expected {expected_frames} frames, found {more}{len(names)}", file=str(folder), field="frames"
            )
        blobs = []
        for n in names:
            fd, st = artifacts.open_regular(dfd, n, artifacts.MAX_PNG_BYTES)
            try:
                data = os.read(fd, st.st_size + 1)
            finally:
                os.close(fd)
            artifacts.check_png(data[:33], n)
            blobs.append(data)
    except artifacts.ArtifactError as e:
        raise InputError(str(e), file=str(folder)) from e
    finally:
        os.close(dfd)
    try:
        return decode_png_blobs(blobs, names)
    except ValueError as e:
        raise InputError(str(e), file=str(folder)) from e


def load_candidate(path: Path, expected_frames: int = 240) -> tuple[np.ndarray, artifacts.ValidatedRun | None]:
    """Decode a candidate: a run folder through its validated artifact set, or a bare video / frame folder.

    A run folder with no valid artifact raises NoArtifact with the reason (it scores 0); a bad bare video raises
    InputError naming the file."""
    path = Path(path)
    if not os.path.lexists(path):
        raise InputError("candidate not found", file=str(path))
    if path.is_dir() and is_run_dir(path):
        vr = artifacts.validated_run(path)
        if not vr.valid:
            raise NoArtifact(vr.reason or "invalid run")
        return load_validated_frames(vr, expected_frames), vr
    if path.is_dir():
        return _bare_frames(path, expected_frames), None
    try:
        dfd = artifacts.open_dir(path.parent)
        try:
            fd, st = artifacts.open_regular(dfd, path.name, artifacts.MAX_VIDEO_BYTES)
        finally:
            os.close(dfd)
        try:
            data = artifacts.read_all(fd, st.st_size)
        finally:
            os.close(fd)
        import io

        info = artifacts.mp4_info(io.BytesIO(data), len(data), path.name)
        artifacts.validate_candidate_video(info, path.name, expected_frames)
    except artifacts.ArtifactError as e:
        raise InputError(str(e), file=str(path)) from e
    except OSError as e:
        raise InputError(f"video cannot be read: {e.strerror}", file=str(path)) from e
    try:
        return _decode_video_bytes(data, expected_frames), None
    except ValueError as e:
        raise InputError(str(e), file=str(path)) from e


def _metric_results(loaded_task: Any, candidate: Path, vr: Any, wanted: list[str], ref_data: dict,
                    cand: np.ndarray, timings: dict[str, float], *, judge: dict | None, want_masks: bool,
                    progress: bool, lpips_options: dict | None, val_timeout_s: float,
                    unsafe_no_isolation: bool) -> tuple[dict[str, MetricResult], Any]:
    """The requested metrics of a candidate that has frames (each timed into `timings`), and its motion masks
    when S_mot or the plot wants them. A metric that fails is reported with its error, never raised."""
    ref = ref_data["frames"]
    results: dict[str, MetricResult] = {}
    cand_masks = None
    if "S_ssim" in wanted:
        from physcodegym.metrics.ssim import s_ssim

        t = time.perf_counter()
        results["S_ssim"] = _guard("S_ssim", lambda: s_ssim(ref, cand, progress=progress))
        timings["S_ssim_s"] = time.perf_counter() - t
    if "S_lpips" in wanted:
        from physcodegym.metrics.lpips_metric import s_lpips

        t = time.perf_counter()
        results["S_lpips"] = _guard(
            "S_lpips", lambda: s_lpips(ref, cand, progress=progress, **(lpips_options or {}))
        )
        timings["S_lpips_s"] = time.perf_counter() - t
    if "S_mot" in wanted or want_masks:
        from physcodegym.metrics.motion import motion_masks, s_mot

        t = time.perf_counter()
        try:
            cand_masks = motion_masks(cand)
            if "S_mot" in wanted:
                results["S_mot"] = s_mot(ref_masks=_ref_masks(ref_data), cand_masks=cand_masks)
        except Exception as e:  # noqa: BLE001
            results["S_mot"] = MetricResult.missing("S_mot", MetricState.error, f"{type(e).__name__}: {e}")
        timings["S_mot_s"] = time.perf_counter() - t
    t = time.perf_counter()
    results.update(_judge_results(loaded_task, wanted, ref, cand, judge))
    timings["judges_s"] = time.perf_counter() - t
    if "S_val" in wanted:
        t = time.perf_counter()
        results["S_val"] = _guard("S_val", lambda: _validity(loaded_task, candidate, vr, val_timeout_s,
                                                                           unsafe_no_isolation))
        timings["S_val_s"] = time.perf_counter() - t
    return results, cand_masks


def _document(loaded_task: Any, candidate: Path, is_run: bool, results: dict[str, MetricResult],
              no_artifact: str | None, parity: dict[str, Any]) -> ScoreDocument:
    """The score document (SPEC §7): aggregates, what the task lacks, status, per-frame curves, details, codec
    parity; `plot` and `timings` are the caller's to fill."""
    # what the task itself lacks (a task made from a real video has no truth scene), each with its reason
    from physcodegym.tasks.loader import truth_status

    per_frame = {n: r.per_frame for n, r in results.items() if r.per_frame}
    if "S_mot" in per_frame:
        per_frame["motion_iou"] = per_frame.pop("S_mot")
    invalid = {"no_artifact": no_artifact, "invalid_reason": no_artifact} if no_artifact is not None else {}
    return ScoreDocument(
        task=loaded_task.id,
        candidate=str(candidate),
        candidate_kind="run" if is_run else "video",
        **aggregate(results),
        truth=truth_status(loaded_task),
        status="invalid" if no_artifact is not None else "scored",
        **invalid,
        per_frame=per_frame,
        details={n: r.details for n, r in results.items() if r.details},
        codec_parity=parity,
        timings={},
    )


def score_run(
    loaded_task: Any,
    candidate: Path,
    metrics: list[str] | None = None,
    judge: dict | None = None,
    plot: Path | None = None,
    *,
    progress: bool = False,
    val_timeout_s: float = 900,
    lpips_options: dict | None = None,
    codec_parity: bool = True,
    unsafe_no_isolation: bool = False,
) -> ScoreDocument:
    """The SPEC §7 score document for one candidate (`doc.to_json()` is its public JSON).

    judge: {"provider": "openai"|"anthropic", "model": ..., "base_url": ..., "cache_dir": ..., "n_judgments": 3}
    (or {"provider_obj": Provider}); None leaves S_obj / S_evt uncomputable. lpips_options go to s_lpips
    (tests pass random_backbone=True to exercise the plumbing). codec_parity: lossless candidate frames go through
    the reference's encoder before the pixel metrics (`evaluator.codec_parity`).
    """
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    wanted = parse_metrics(metrics)
    candidate = Path(candidate)
    if not os.path.lexists(candidate):
        raise InputError(
            "candidate not found (give a run folder or a video file)", file=str(candidate), field="--candidate"
        )
    is_run = candidate.is_dir() and is_run_dir(candidate)
    ref_data = reference_data(loaded_task.video_path)
    ref = ref_data["frames"]
    timings["decode_reference_s"] = time.perf_counter() - t0

    t = time.perf_counter()
    no_artifact: str | None = None
    cand: np.ndarray | None = None
    vr: artifacts.ValidatedRun | None = None
    try:
        cand, vr = load_candidate(candidate, expected_frames=len(ref))
    except NoArtifact as e:
        no_artifact = str(e)
    timings["decode_candidate_s"] = time.perf_counter() - t

    results: dict[str, MetricResult] = {}
    cand_masks = None
    parity: dict[str, Any] = {"applied": False, "reason": "no candidate frames"}
    if cand is not None and set(wanted) & {"S_ssim", "S_lpips", "S_mot"}:
        from physcodegym.evaluator.codec_parity import candidate_for_pixels

        t = time.perf_counter()
        lossless = (vr.render == "frames") if vr is not None else candidate.is_dir()
        cand, parity = candidate_for_pixels(loaded_task, cand, lossless, enabled=codec_parity)
        timings["codec_parity_s"] = time.perf_counter() - t
    if no_artifact is not None:
        zeros = zero_results(no_artifact)
        results = {n: zeros[n] for n in wanted}
    elif cand is not None:
        results, cand_masks = _metric_results(loaded_task, candidate, vr, wanted, ref_data, cand, timings,
                                              judge=judge, want_masks=plot is not None, progress=progress,
                                              lpips_options=lpips_options, val_timeout_s=val_timeout_s,
                                              unsafe_no_isolation=unsafe_no_isolation)
    for n in METRIC_NAMES:
        if n not in wanted:
            results[n] = MetricResult.missing(n, MetricState.not_applicable, "not requested (--metrics)")

    doc = _document(loaded_task, candidate, is_run, results, no_artifact, parity)
    if plot is not None and no_artifact is None and cand_masks is not None:
        from physcodegym.metrics.plots import write_score_plot

        doc.plot = str(write_score_plot(Path(plot), doc.to_json(), _ref_masks(ref_data), cand_masks))
    timings["total_s"] = time.perf_counter() - t0
    doc.timings = {k: round(v, 4) for k, v in timings.items()}
    return doc


def human_summary(doc: ScoreDocument) -> str:
    """A short terminal table of the score document."""

    def f(v: float | None) -> str:
        return "  -  " if v is None else f"{v:.3f}"

    lines = [f"task {doc.task}  candidate {doc.candidate} ({doc.candidate_kind})"]
    if doc.no_artifact:
        lines.append(f"NO VALID ARTIFACT: {doc.no_artifact} (every requested metric scores 0)")
    for n in METRIC_NAMES:
        st = doc.states[n]
        note = "" if st.state == "ok" and not st.reason else f"  [{st.state}] {st.reason or ''}"
        lines.append(f"  {n:<8} {f(doc.metrics[n])}{note}")
    for agg in ("S_vis", "S_phys", "S_tot"):
        covers = getattr(doc.coverage, agg)
        lines.append(f"  {agg:<8} {f(getattr(doc, agg))}  (covers {', '.join(covers) or 'nothing'})")
    if doc.plot:
        lines.append(f"plot: {doc.plot}")
    return "\n".join(lines)
