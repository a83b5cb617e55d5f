"""The tools the agent calls (SPEC §6): observation of the reference video, workspace files,
Blender launches through the isolated runner, policy check and finalize.

Argument schemas are pydantic models, so the JSON schemas sent to the provider and the validation of
what the model sends back are one definition. The reference video is decoded in this (harness)
process and only ever leaves it as rendered images; no tool takes a path outside the agent's
workspace, so the video file, `truth.py` and the truth trajectories are unreachable.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from physcodegym.agent.budget import Budget
from physcodegym.agent.trace import write_json_atomic
from physcodegym.core import atomic, launch
from physcodegym.llm.base import ImagePart, TextPart, ToolSpec
from physcodegym.tasks.schema import FPS, FRAMES, SCORE_HEIGHT, SCORE_WIDTH
from pydantic import BaseModel, Field, ValidationError

DURATION_S = FRAMES / FPS
MAX_READ_BYTES = 200_000
MAX_WRITE_BYTES = 1_000_000
LAUNCH_TOOLS = ("run_scene", "inspect_scene", "render_preview")


# ------------------------------------------------------------------------------------------------
# argument models (one per tool; their JSON schema is what the model sees)
class NoArgs(BaseModel):
    pass


class GetFramesArgs(BaseModel):
    times: list[float] = Field(min_length=1, max_length=12, description="times in seconds, 0 <= t < 8")


class FrameGridArgs(BaseModel):
    start: float = Field(0.0, ge=0.0, le=DURATION_S, description="start time in seconds")
    end: float = Field(DURATION_S, ge=0.0, le=DURATION_S, description="end time in seconds")
    count: int = Field(8, ge=1, le=16, description="number of evenly spaced frames in the grid")


class ClipArgs(BaseModel):
    start: float = Field(ge=0.0, le=DURATION_S, description="start time in seconds")
    end: float = Field(ge=0.0, le=DURATION_S, description="end time in seconds")
    rate: float = Field(gt=0.0, le=30.0, description="frames per second to sample (at most 24 frames are returned)")


class WriteFileArgs(BaseModel):
    path: str = Field(description="path relative to your workspace, e.g. scene.py")
    text: str = Field(description="complete new file content")


class ReadFileArgs(BaseModel):
    path: str = Field(description="path relative to your workspace")


class RunSceneArgs(BaseModel):
    mode: Literal["full", "bake_only"] = Field(
        "full",
        description="full: build, bake, save and render all 240 frames; bake_only: build, bake and save without "
        "rendering",
    )


class RenderPreviewArgs(BaseModel):
    frame: int = Field(ge=1, le=FRAMES, description="frame number 1..240 to render")


@dataclass
class ToolDef:
    name: str
    description: str
    args: type[BaseModel]
    launch: bool = False


TOOL_DEFS: list[ToolDef] = [
    ToolDef("video_info", "Metadata of the reference video: duration, fps, frame count, resolution.", NoArgs),
    ToolDef("get_frames", "Reference video frames at the given times (seconds), one image each.", GetFramesArgs),
    ToolDef(
        "frame_grid",
        "One image tiling `count` evenly spaced reference frames from start to end, each labelled with its time.",
        FrameGridArgs,
    ),
    ToolDef(
        "clip",
        "Reference frames sampled at `rate` fps between start and end, returned as images (at most 24).",
        ClipArgs,
    ),
    ToolDef(
        "write_file",
        "Create or overwrite a text file in your workspace (your program must be scene.py).",
        WriteFileArgs,
    ),
    ToolDef("read_file", "Read a text file from your workspace.", ReadFileArgs),
    ToolDef(
        "run_scene",
        "Run workspace/scene.py once in an isolated Blender process (ONE launch). Returns status, log tail and the "
        "outputs found.",
        RunSceneArgs,
        launch=True,
    ),
    ToolDef(
        "inspect_scene",
        "Structure of the scene.blend saved by your latest run as JSON: objects, transforms, rigid body / cloth / "
        "fluid settings, constraints, force fields, materials (ONE launch).",
        NoArgs,
        launch=True,
    ),
    ToolDef(
        "render_preview",
        "Run scene.py and render a single frame of the simulated scene (ONE launch); returns the image.",
        RenderPreviewArgs,
        launch=True,
    ),
    ToolDef(
        "check_submission",
        "Check scene.py against the policy and the latest full run against the output specification (no launch).",
        NoArgs,
    ),
    ToolDef(
        "finalize",
        "Submit. Refused unless your latest full run produced scene.blend and 240 frames from the current scene.py.",
        NoArgs,
    ),
]
TOOLS_BY_NAME = {t.name: t for t in TOOL_DEFS}


def _clean_schema(schema: dict) -> dict:
    schema = dict(schema)
    schema.pop("title", None)
    props = {k: {kk: vv for kk, vv in v.items() if kk != "title"} for k, v in schema.get("properties", {}).items()}
    out = {"type": "object", "properties": props}
    if schema.get("required"):
        out["required"] = schema["required"]
    return out


def tool_specs() -> list[ToolSpec]:
    """Function-calling schemas, generated from the pydantic argument models."""
    return [
        ToolSpec(name=t.name, description=t.description, parameters=_clean_schema(t.args.model_json_schema()))
        for t in TOOL_DEFS
    ]


# ------------------------------------------------------------------------------------------------
@dataclass
class ToolOutcome:
    data: dict[str, Any]
    images: list[bytes] = field(default_factory=list)  # PNG bytes
    is_error: bool = False
    finalized: bool = False

    def summary(self, limit: int = 300) -> str:
        s = json.dumps({k: v for k, v in self.data.items() if k not in ("log_tail", "text", "structure")}, default=str)
        return s if len(s) <= limit else s[: limit - 3] + "..."


class ToolInputError(Exception):
    """The model's call is wrong (bad arguments, path outside the workspace); reported back to it."""


def _sha(text: str | bytes) -> str:
    b = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(b).hexdigest()


def _png(frame: np.ndarray) -> bytes:
    from physcodegym.metrics.video import encode_png

    return encode_png(frame)


def _label(img: np.ndarray, text: str) -> np.ndarray:
    import cv2

    out = np.ascontiguousarray(img.copy())
    cv2.rectangle(out, (0, 0), (8 + 9 * len(text), 20), (0, 0, 0), -1)
    cv2.putText(out, text, (4, 15), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 255), 1, cv2.LINE_AA)
    return out


def _half(img: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.resize(img, (SCORE_WIDTH // 2, SCORE_HEIGHT // 2), interpolation=cv2.INTER_AREA)


def frame_time(index0: int) -> float:
    return round(index0 / FPS, 4)


class Toolbox:
    """Stateful tool executor for one run folder.

    Layout: `run_dir/workspace/` (the only place the model can read or write), `run_dir/launches/NNN_tool/`
    (runner outputs, unreachable by the model), `run_dir/revisions/scene_rNNN.py`, `run_dir/submission/`,
    `run_dir/images/` (images sent to the model, referenced from the trace), `run_dir/state.json`.
    """

    def __init__(
        self,
        run_dir: Path,
        video_path: Path,
        budget: Budget,
        *,
        run_timeout_s: float = 1800,
        memory_mb: int = 8192,
        runner: Callable[..., Any] | None = None,
        policy_check: Callable[[str], Any] | None = None,
        workspace: Path | None = None,
    ) -> None:
        self.run_dir = Path(run_dir).resolve()
        self.workspace = Path(workspace).resolve() if workspace else self.run_dir / "workspace"
        self.workspace.mkdir(parents=True, exist_ok=True)
        self._video_path = Path(video_path)  # private: never returned by any tool
        self._frames: np.ndarray | None = None
        self.budget = budget
        self.run_timeout_s = run_timeout_s
        self.memory_mb = memory_mb
        self._runner = runner
        self._policy = policy_check
        self.state_path = self.run_dir / "state.json"
        self.state: dict[str, Any] = {"revisions": [], "launches": [], "last_full_run": None, "finalized": None}
        if self.state_path.is_file():
            self.state = json.loads(self.state_path.read_text(encoding="utf-8"))

    # -- plumbing ---------------------------------------------------------------------------
    @property
    def scene_path(self) -> Path:
        return self.workspace / "scene.py"

    def save_state(self) -> None:
        write_json_atomic(self.state_path, self.state)

    def frames(self) -> np.ndarray:
        if self._frames is None:
            from physcodegym.metrics.video import load_video

            self._frames = load_video(self._video_path)  # decoded once per process
        return self._frames

    def runner(self) -> Callable[..., Any]:
        if self._runner is None:
            from physcodegym.sandbox.runner import run_program

            self._runner = run_program
        return self._runner

    def policy(self, text: str) -> list[dict]:
        if self._policy is None:
            from physcodegym.sandbox.policy import check_source

            self._policy = check_source
        rep = self._policy(text)
        items = getattr(rep, "violations", rep)  # a PolicyReport, or a plain list from an injected checker
        return [v if isinstance(v, dict) else _as_dict(v) for v in items]

    def resolve(self, rel: str, *, for_write: bool = False) -> Path:
        """A workspace path from a model-given relative path; refuses absolute paths, `..` and symlinks out."""
        if not rel or not isinstance(rel, str):
            raise ToolInputError("path must be a non-empty relative path inside the workspace")
        p = Path(rel)
        if p.is_absolute() or rel.startswith("~"):
            # the path is not echoed: a result never carries a location outside the workspace
            raise ToolInputError("absolute paths are not allowed; use a path relative to your workspace")
        if any(part == ".." for part in p.parts):
            raise ToolInputError(f"{rel!r}: '..' is not allowed; paths stay inside your workspace")
        root = self.workspace.resolve()
        full = root / p
        cur = root
        for part in p.parts:
            cur = cur / part
            if cur.is_symlink():
                raise ToolInputError(f"{rel!r}: symbolic links are not followed")
        try:
            full.resolve().relative_to(root)
        except ValueError as e:
            raise ToolInputError("the path resolves outside your workspace") from e
        if for_write and full.is_dir():
            raise ToolInputError(f"{rel!r} is a directory")
        return full

    def _new_launch_dir(self, tool: str) -> Path:
        n = len(self.state["launches"]) + 1
        d = self.run_dir / "launches" / f"{n:03d}_{tool}"
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        return d

    def _current_scene(self) -> tuple[str, str] | None:
        if not self.scene_path.is_file():
            return None
        text = self.scene_path.read_text(encoding="utf-8", errors="replace")
        return text, _sha(text)

    # -- dispatch ---------------------------------------------------------------------------
    def call(self, name: str, arguments: dict[str, Any] | None) -> ToolOutcome:
        tdef = TOOLS_BY_NAME.get(name)
        if tdef is None:
            return ToolOutcome({"error": f"unknown tool {name!r}; tools: {', '.join(TOOLS_BY_NAME)}"}, is_error=True)
        if self.state.get("finalized"):
            return ToolOutcome({"error": "the submission is already finalized; the run is over"}, is_error=True)
        try:
            args = tdef.args.model_validate(arguments or {})
        except ValidationError as e:
            probs = "; ".join(f"{'.'.join(str(x) for x in err['loc']) or '<args>'}: {err['msg']}" for err in e.errors())
            return ToolOutcome({"error": f"invalid arguments for {name}: {probs}"}, is_error=True)
        if tdef.launch and not self.budget.can_launch():
            return ToolOutcome(
                {
                    "error": f"launch budget exhausted ({self.budget.limits.max_launches} launches used); {name} was "
                    "not run"
                },
                is_error=True,
            )
        try:
            out = getattr(self, f"tool_{name}")(args)
        except ToolInputError as e:
            out = ToolOutcome({"error": str(e)}, is_error=True)
        self.save_state()
        return out

    # -- observation (no launch) ------------------------------------------------------------
    def tool_video_info(self, args: NoArgs) -> ToolOutcome:
        fr = self.frames()
        return ToolOutcome(
            {
                "duration_s": round(len(fr) / FPS, 4),
                "fps": FPS,
                "frames": int(len(fr)),
                "width": int(fr.shape[2]),
                "height": int(fr.shape[1]),
            }
        )

    def tool_get_frames(self, args: GetFramesArgs) -> ToolOutcome:
        from physcodegym.metrics.video import frame_index

        fr = self.frames()
        idx = [frame_index(t, len(fr)) for t in args.times]
        imgs = [_png(_label(fr[i], f"t={frame_time(i):.2f}s frame {i + 1}")) for i in idx]
        return ToolOutcome({"frames": [{"time_s": frame_time(i), "frame": i + 1} for i in idx]}, images=imgs)

    def tool_frame_grid(self, args: FrameGridArgs) -> ToolOutcome:
        fr = self.frames()
        if args.end < args.start:
            raise ToolInputError(f"end ({args.end}) is before start ({args.start})")
        idx = np.unique(
            np.clip(np.round(np.linspace(args.start, args.end, args.count) * FPS), 0, len(fr) - 1).astype(int)
        )
        tiles = [_label(_half(fr[i]), f"{frame_time(i):.2f}s") for i in idx]
        cols = min(4, len(tiles))
        rows = -(-len(tiles) // cols)
        h, w = tiles[0].shape[:2]
        grid = np.zeros((rows * h, cols * w, 3), np.uint8)
        for k, t in enumerate(tiles):
            r, c = divmod(k, cols)
            grid[r * h : (r + 1) * h, c * w : (c + 1) * w] = t
        return ToolOutcome(
            {
                "grid": {"rows": rows, "cols": cols},
                "frames": [{"time_s": frame_time(i), "frame": int(i) + 1} for i in idx],
            },
            images=[_png(grid)],
        )

    def tool_clip(self, args: ClipArgs) -> ToolOutcome:
        fr = self.frames()
        if args.end < args.start:
            raise ToolInputError(f"end ({args.end}) is before start ({args.start})")
        times = np.arange(args.start, args.end + 1e-9, 1.0 / args.rate)
        truncated = len(times) > 24
        times = times[:24]
        idx = np.unique(np.clip(np.round(times * FPS), 0, len(fr) - 1).astype(int))
        imgs = [_png(_label(_half(fr[i]), f"{frame_time(i):.2f}s")) for i in idx]
        return ToolOutcome(
            {"frames": [{"time_s": frame_time(i), "frame": int(i) + 1} for i in idx], "truncated_to_24": truncated},
            images=imgs,
        )

    # -- workspace files --------------------------------------------------------------------
    def tool_write_file(self, args: WriteFileArgs) -> ToolOutcome:
        data = args.text.encode("utf-8")
        if len(data) > MAX_WRITE_BYTES:
            raise ToolInputError(f"file too large ({len(data)} bytes; limit {MAX_WRITE_BYTES})")
        p = self.resolve(args.path, for_write=True)
        p.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_bytes(p, data)
        out: dict[str, Any] = {"written": args.path, "bytes": len(data)}
        if p == self.scene_path:
            sha = _sha(args.text)
            revs = self.state["revisions"]
            if not revs or revs[-1]["sha256"] != sha:
                n = len(revs) + 1
                rp = self.run_dir / "revisions" / f"scene_r{n:03d}.py"
                rp.parent.mkdir(parents=True, exist_ok=True)
                rp.write_bytes(data)
                revs.append({"revision": n, "sha256": sha, "file": str(rp.relative_to(self.run_dir))})
            out["revision"] = revs[-1]["revision"]
            viol = self.policy(args.text)
            out["policy_violations"] = viol
        return ToolOutcome(out)

    def tool_read_file(self, args: ReadFileArgs) -> ToolOutcome:
        p = self.resolve(args.path)
        if not p.is_file():
            listing = sorted(str(x.relative_to(self.workspace)) for x in self.workspace.rglob("*") if x.is_file())[:50]
            raise ToolInputError(f"{args.path!r} does not exist; workspace files: {listing}")
        raw = p.read_bytes()
        return ToolOutcome(
            {
                "path": args.path,
                "bytes": len(raw),
                "truncated": len(raw) > MAX_READ_BYTES,
                "text": raw[:MAX_READ_BYTES].decode("utf-8", errors="replace"),
            }
        )

    # -- launches ---------------------------------------------------------------------------
    def _launch(self, tool: str, mode: str, preview_frame: int | None = None) -> tuple[dict, Path]:
        cur = self._current_scene()
        if cur is None:
            raise ToolInputError("workspace/scene.py does not exist yet; write it with write_file first")
        text, sha = cur
        n = self.budget.use_launch(tool)
        out_dir = self._new_launch_dir(tool)
        program = out_dir / "out" / "scene.py"  # the runner keeps its copy of the program here too
        program.parent.mkdir()
        program.write_text(text, encoding="utf-8")
        # a launch never outlives the run's wall clock (at least a minute, so a last launch can still finish)
        timeout = min(self.run_timeout_s, max(60.0, self.budget.limits.wall_clock_s - self.budget.elapsed_s))
        rec = self.runner()(
            program,
            out_dir / "out",
            timeout_s=timeout,
            memory_mb=self.memory_mb,
            mode=mode,
            preview_frame=preview_frame,
            expected_frames=FRAMES,
        )
        r = _as_dict(rec)
        frames_dir = out_dir / "out" / "frames"
        n_frames = len(list(frames_dir.glob("*.png"))) if frames_dir.is_dir() else 0
        entry = {
            "launch": n,
            "tool": tool,
            "mode": mode,
            "dir": str(out_dir.relative_to(self.run_dir)),
            "scene_sha256": sha,
            "revision": self._revision_of(sha),
            "status": r.get("status"),
            "seconds": r.get("seconds"),
            "reason": r.get("reason"),
            "missing": r.get("missing") or [],
            "problems": r.get("problems") or [],
            "violations": r.get("violations") or [],
            "has_blend": (out_dir / "out" / "scene.blend").is_file(),
            "frames_found": n_frames,
        }
        self.state["launches"].append(entry)
        if mode == "full":
            self.state["last_full_run"] = len(self.state["launches"]) - 1
        if entry["has_blend"]:
            self.state["last_blend"] = str((out_dir / "out" / "scene.blend").relative_to(self.run_dir))
        return {**entry, "log_tail": _tail(r.get("log_tail") or "", 3000)}, out_dir / "out"

    def _revision_of(self, sha: str) -> int | None:
        for r in self.state["revisions"]:
            if r["sha256"] == sha:
                return r["revision"]
        return None

    def tool_run_scene(self, args: RunSceneArgs) -> ToolOutcome:
        entry, _ = self._launch("run_scene", args.mode)
        keys = (
            "launch",
            "mode",
            "status",
            "reason",
            "seconds",
            "missing",
            "problems",
            "violations",
            "has_blend",
            "frames_found",
            "revision",
            "log_tail",
        )
        data = {k: entry[k] for k in keys}
        return ToolOutcome(data, is_error=entry["status"] != "ok")

    def tool_render_preview(self, args: RenderPreviewArgs) -> ToolOutcome:
        entry, out = self._launch("render_preview", "preview", preview_frame=args.frame)
        pngs = (
            [out / "preview.png"]
            if (out / "preview.png").is_file()
            else sorted(out.rglob("*.png"), key=lambda p: p.stat().st_mtime)
        )
        data = {k: entry[k] for k in ("launch", "status", "reason", "seconds", "violations", "revision", "log_tail")}
        data["frame"] = args.frame
        if not pngs:
            data["error"] = "no preview image was produced"
            return ToolOutcome(data, is_error=True)
        return ToolOutcome(data, images=[pngs[-1].read_bytes()], is_error=entry["status"] != "ok")

    def tool_inspect_scene(self, args: NoArgs) -> ToolOutcome:
        blend = self.state.get("last_blend")
        if not blend or not (self.run_dir / blend).is_file():
            raise ToolInputError(
                "no scene.blend yet: run_scene must save one first (inspect_scene reads the latest saved scene)"
            )
        n = self.budget.use_launch("inspect_scene")
        out_dir = self._new_launch_dir("inspect_scene")
        out_json = out_dir / "structure.json"
        from physcodegym.sandbox import wall  # the saved scene may hold code or paths: read behind the wall

        src = (self.run_dir / blend).resolve()
        with wall.scratch_folder("pcg_inspect_") as scratch:
            cmd = launch.module_argv("physcodegym.agent.inspect_worker", [str(src), str(scratch / "structure.json")])
            res = wall.run_walled(cmd, scratch=scratch, readonly=[src.parent], timeout_s=min(600, self.run_timeout_s),
                                  memory_mb=4096, max_output=1 << 20)
            got = scratch / "structure.json"
            ok = res.returncode == 0 and got.is_file() and not got.is_symlink() and got.stat().st_size < (16 << 20)
            if ok:
                shutil.copyfile(got, out_json)
            status = "timeout" if res.timed_out else "ok" if ok else "failed"
            log = "inspection timed out" if res.timed_out else res.stdout + res.stderr
        (out_dir / "inspect.log").write_text(log, encoding="utf-8")
        self.state["launches"].append(
            {
                "launch": n,
                "tool": "inspect_scene",
                "mode": "inspect",
                "dir": str(out_dir.relative_to(self.run_dir)),
                "status": status,
                "blend": blend,
            }
        )
        if status != "ok":
            return ToolOutcome({"launch": n, "status": status, "log_tail": _tail(log, 2000)}, is_error=True)
        return ToolOutcome(
            {
                "launch": n,
                "status": "ok",
                "blend_from": blend.split("/")[1],
                "structure": json.loads(out_json.read_text()),
            }
        )

    # -- submission -------------------------------------------------------------------------
    def submission_problems(self) -> tuple[list[str], list[dict]]:
        """Why the current scene.py cannot be finalized (empty list: it can), and its policy violations."""
        cur = self._current_scene()
        if cur is None:
            return ["workspace/scene.py does not exist"], []
        text, sha = cur
        violations = self.policy(text)
        problems = [f"policy: line {v.get('line')}: {v.get('rule')}: {v.get('message')}" for v in violations]
        idx = self.state.get("last_full_run")
        if idx is None:
            problems.append("no full run yet: call run_scene (mode=full) on the final scene.py")
            return problems, violations
        last = self.state["launches"][idx]
        if last["scene_sha256"] != sha:
            problems.append(f"scene.py changed after the latest full run (launch {last['launch']}); run it again")
        if last["status"] != "ok":
            problems.append(f"the latest full run (launch {last['launch']}) ended with status {last['status']!r}")
        out = self.run_dir / last["dir"] / "out"
        if not (out / "scene.blend").is_file():
            problems.append("the latest full run saved no scene.blend")
        nf = len(list((out / "frames").glob("*.png"))) if (out / "frames").is_dir() else 0
        if nf != FRAMES and not (out / "render.mp4").is_file():
            problems.append(
                f"the latest full run rendered {nf} frames; {FRAMES} are required (frames/0001.png ... frames/0240.png)"
            )
        if last.get("missing"):
            problems.append(f"the latest full run is missing outputs: {last['missing'][:5]}")
        if last.get("problems"):
            problems.append(f"the latest full run's outputs are wrong: {last['problems'][:5]}")
        return problems, violations

    def tool_check_submission(self, args: NoArgs) -> ToolOutcome:
        problems, violations = self.submission_problems()
        return ToolOutcome({"ok": not problems, "problems": problems, "policy_violations": violations})

    def tool_finalize(self, args: NoArgs) -> ToolOutcome:
        problems, _ = self.submission_problems()
        if problems:
            return ToolOutcome({"finalized": False, "refused": True, "problems": problems}, is_error=True)
        last = self.state["launches"][self.state["last_full_run"]]
        src = self.run_dir / last["dir"] / "out"
        sub = self.run_dir / "submission"
        tmp = self.run_dir / ".submission.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        shutil.copytree(src, tmp)
        shutil.copy2(self.scene_path, tmp / "scene.py")
        if sub.exists():
            shutil.rmtree(sub)
        tmp.replace(sub)
        self.state["finalized"] = {
            "launch": last["launch"],
            "revision": last.get("revision"),
            "scene_sha256": last["scene_sha256"],
        }
        return ToolOutcome(
            {"finalized": True, "launch": last["launch"], "revision": last.get("revision")}, finalized=True
        )


def _as_dict(rec: Any) -> dict:
    if isinstance(rec, dict):
        return rec
    for meth in ("to_dict", "model_dump", "as_dict"):
        if hasattr(rec, meth):
            return getattr(rec, meth)()
    if hasattr(rec, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(rec)
    return dict(vars(rec))


_PROGRESS = re.compile(r"^(bake: frame \d+ :: \d+|.*\| Saved: 'frames/\d+\.png'|.*Fra:\d+ .*)$")


def _squash_progress(text: str) -> str:
    """Collapse runs of bake/render progress lines to their last one: the model needs errors, not 240 'Saved:' lines."""
    out: list[str] = []
    run = 0
    for line in text.splitlines():
        if _PROGRESS.match(line):
            if run and out:
                out[-1] = line
            else:
                out.append(line)
            run += 1
            continue
        if run > 1:
            out[-1] += f"   [{run} progress lines collapsed]"
        run = 0
        out.append(line)
    if run > 1:
        out[-1] += f"   [{run} progress lines collapsed]"
    return "\n".join(out)


def _tail(text: str, n: int) -> str:
    text = _squash_progress(text)
    return text if len(text) <= n else "..." + text[-n:]


def outcome_parts(out: ToolOutcome, budget_line: str) -> list[TextPart | ImagePart]:
    """What the model receives: the JSON result, the budget line, then the images."""
    parts: list[TextPart | ImagePart] = [TextPart(text=json.dumps(out.data, default=str) + "\n" + budget_line)]
    parts += [ImagePart(png_base64=base64.b64encode(b).decode("ascii")) for b in out.images]
    return parts
