"""One validated artifact set per run (SPEC §3, validated artifacts): poisoned outputs are invalid, the same way, in every command.

Two layers of tests, both against the real code:
- `accept_outputs` / `validated_run` on scratch folders made here (symlinks, hard links to outside files, FIFOs,
  huge header claims, a non-Blender scene.blend, a scene range of 10^9 frames, extra files, a program's own
  run.json), each next to its clean twin;
- real runs (bpy, behind the sandbox) of programs that finish normally but leave a poisoned artifact, then
  `run`, `score`, `audit --task` and a one-unit batch: every command ends within its limit, in bounded memory,
  never exits 1, and reports the same `invalid` reason; the clean twin run is accepted and its record verified.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
import threading
import zlib
from pathlib import Path

import pytest
from physcodegym.core.limits import run_limited
from physcodegym.sandbox import artifacts as A
from physcodegym.sandbox.runner import RunRecord, run_program
from progs import scene

REPO = Path(__file__).resolve().parents[2]
TASK = REPO / "tasks" / "packs" / "ball_bounce"
GIB = 1024.0


def png(w: int = 640, h: int = 360, body: bool = True) -> bytes:
    def chunk(t: bytes, d: bytes) -> bytes:
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    raw = zlib.compress(b"".join(b"\0" + b"\x40" * (w * 3) for _ in range(h))) if body else zlib.compress(b"\0" * 64)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


def mp4(path: Path, n: int = 30, fps: int = 30, size: tuple[int, int] = (640, 360)) -> Path:
    import cv2
    import numpy as np

    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, size)
    for i in range(n):
        vw.write(np.full((size[1], size[0], 3), (i * 7) % 255, np.uint8))
    vw.release()
    return path


@pytest.fixture(scope="session")
def good_blend(tmp_path_factory) -> Path:
    """A real (zstd-compressed) scene.blend saved by bpy in a child process, frames 1..3."""
    d = tmp_path_factory.mktemp("blend")
    code = ("import bpy, sys\nbpy.ops.wm.read_factory_settings(use_empty=True)\nsc = bpy.context.scene\n"
            "sc.frame_start, sc.frame_end = 1, 3\nbpy.ops.mesh.primitive_cube_add()\n"
            "bpy.ops.wm.save_as_mainfile(filepath=sys.argv[-1])\n")
    res = run_limited([sys.executable, "-c", code, str(d / "scene.blend")], timeout_s=120, memory_mb=None)
    assert res.returncode == 0, res.stderr[-2000:]
    return d / "scene.blend"


def _scratch(tmp: Path, good_blend: Path, n: int = 3) -> tuple[Path, Path]:
    out = tmp / "out"
    sc = out / "sandbox"
    (sc / "frames").mkdir(parents=True)
    (sc / "scene.blend").write_bytes(good_blend.read_bytes())
    for i in range(1, n + 1):
        (sc / "frames" / f"{i:04d}.png").write_bytes(png())
    return out, sc


def _accept(out: Path, sc: Path, n: int = 3, mode: str = "full") -> A.Acceptance:
    return A.accept_outputs(sc, out, mode, n)


# ------------------------------------------------------------------------------------------ scratch folders


def test_clean_twin_is_accepted_and_hashed(tmp_path, good_blend):
    out, sc = _scratch(tmp_path, good_blend)
    (sc / "run.json").write_text(json.dumps({"status": "ok", "artifacts": {}}))  # the program's own record: ignored
    (sc / "notes.txt").write_text("extra")
    acc = _accept(out, sc)
    assert acc.reason is None and not acc.breaches, acc.problems
    assert sorted(acc.artifacts) == ["frames/0001.png", "frames/0002.png", "frames/0003.png", "scene.blend"]
    assert acc.artifacts["scene.blend"]["sha256"] == hashlib.sha256(good_blend.read_bytes()).hexdigest()
    assert set(acc.ignored) == {"run.json", "notes.txt"} and not (out / "run.json").exists()
    assert (out / "frames" / "0003.png").read_bytes() == png() and not (sc / "scene.blend").exists()
    assert acc.info["scene.blend"]["compression"] == "zstd" and acc.info["scene.blend"]["scenes"] == [{"frame_start": 1, "frame_end": 3}]


def test_symlinks_are_refused(tmp_path, good_blend):
    other = mp4(tmp_path / "other.mp4", n=3)
    out, sc = _scratch(tmp_path, good_blend)
    os.remove(sc / "frames" / "0002.png")
    os.symlink(tmp_path / "outside.png", sc / "frames" / "0002.png")
    (tmp_path / "outside.png").write_bytes(png())
    acc = _accept(out, sc)
    assert "frames/0002.png is a symbolic link" in acc.reason and "frames/0002.png" not in acc.artifacts
    # render.mp4 as a link to another video, and frames/ as a link to a folder outside
    out2 = tmp_path / "o2"
    sc2 = out2 / "sandbox"
    sc2.mkdir(parents=True)
    (sc2 / "scene.blend").write_bytes(good_blend.read_bytes())
    os.symlink(other, sc2 / "render.mp4")
    assert "render.mp4 is a symbolic link" in _accept(out2, sc2).reason
    os.remove(sc2 / "render.mp4")
    os.symlink(tmp_path / "o2", sc2 / "frames")
    assert "frames is a symbolic link" in _accept(out2, sc2).reason


def test_hard_link_to_an_outside_file_is_refused(tmp_path, good_blend):
    out, sc = _scratch(tmp_path, good_blend)
    outside = tmp_path / "secret.blend"
    outside.write_bytes(good_blend.read_bytes())
    os.remove(sc / "scene.blend")
    os.link(outside, sc / "scene.blend")
    acc = _accept(out, sc)
    assert "scene.blend has 2 hard links" in acc.reason and "scene.blend" not in acc.artifacts
    assert outside.read_bytes() == good_blend.read_bytes()


@pytest.mark.parametrize("name", ["scene.blend", "frames/0001.png"])
def test_fifo_does_not_block(tmp_path, good_blend, name):
    out, sc = _scratch(tmp_path, good_blend)
    os.remove(sc / name)
    os.mkfifo(sc / name)
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("acc", _accept(out, sc)), daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive(), "validation blocked on a FIFO"
    assert f"{name} is a FIFO" in box["acc"].reason


def test_header_claims_are_checked_before_any_decode(tmp_path, good_blend):
    out, sc = _scratch(tmp_path, good_blend)
    (sc / "frames" / "0001.png").write_bytes(png(100000, 100000, body=False))
    acc = _accept(out, sc)
    assert "frames/0001.png is 100000x100000 (expected 640x360)" in acc.reason
    # an MP4 whose index claims a huge frame size / frame count: refused from the boxes alone
    good = mp4(tmp_path / "v.mp4", n=30).read_bytes()
    info = A.mp4_info(open(tmp_path / "v.mp4", "rb"), len(good), "v.mp4")
    assert (info["width"], info["height"], info["frames"], info["fps"]) == (640, 360, 30, 30.0)
    A.validate_candidate_video(info, "v.mp4", 30)
    i = good.index(b"stsz")
    huge = good[: i + 12] + struct.pack(">I", 10**9) + good[i + 16 :]
    bad = tmp_path / "huge.mp4"
    bad.write_bytes(huge)
    with pytest.raises(A.ArtifactError, match="sample tables disagree|1000000000 frames"):
        A.check_bare_video(bad, 30)
    j = good.index(b"avc1") if b"avc1" in good else good.index(b"mp4v")
    wide = good[: j + 28] + struct.pack(">HH", 60000, 60000) + good[j + 32 :]
    (tmp_path / "wide.mp4").write_bytes(wide)
    with pytest.raises(A.ArtifactError, match="60000x60000"):
        A.check_bare_video(tmp_path / "wide.mp4", 30)
    k = good.index(b"moov") - 4
    claim = good[:k] + struct.pack(">I", 2**31) + good[k + 4 :]
    (tmp_path / "claim.mp4").write_bytes(claim)
    with pytest.raises(A.ArtifactError, match="beyond the file"):
        A.check_bare_video(tmp_path / "claim.mp4", 30)


def test_the_block_walk_counts_particle_settings(tmp_path, good_blend):
    """`particle_settings` (PA blocks) tells the audit, before it imports Blender, whether its re-simulation must
    run on one CPU (SPH repeats only there): 0 in a scene without particles, 2 with two particle systems."""
    code = ("import bpy, sys\nbpy.ops.wm.read_factory_settings(use_empty=True)\n"
            "bpy.ops.mesh.primitive_plane_add()\nob = bpy.context.active_object\n"
            "ob.modifiers.new('a', 'PARTICLE_SYSTEM')\nob.modifiers.new('b', 'PARTICLE_SYSTEM')\n"
            "bpy.ops.wm.save_as_mainfile(filepath=sys.argv[-1])\n")
    res = run_limited([sys.executable, "-c", code, str(tmp_path / "pa.blend")], timeout_s=120, memory_mb=None)
    assert res.returncode == 0, res.stderr[-2000:]
    assert A.check_bare_blend(tmp_path / "pa.blend")["particle_settings"] == 2
    assert A.check_bare_blend(good_blend)["particle_settings"] == 0


def test_blend_checks(tmp_path, good_blend):
    import zstandard

    out, sc = _scratch(tmp_path, good_blend)
    (sc / "scene.blend").write_bytes(b"not a blend at all" * 10)
    assert "scene.blend is not a Blender file" in _accept(out, sc).reason
    raw = zstandard.ZstdDecompressor().stream_reader(open(good_blend, "rb"), read_across_frames=True).read()
    assert A.blend_info(os.open(good_blend, os.O_RDONLY), "x")["blocks"] > 10
    # the same scene, uncompressed and gzip-compressed, is accepted; truncated it is not
    import gzip

    for name, data in (("plain", raw), ("gz", gzip.compress(raw, 1))):
        p = tmp_path / f"{name}.blend"
        p.write_bytes(data)
        assert A.check_bare_blend(p, 240)["scenes"] == [{"frame_start": 1, "frame_end": 3}]
    (tmp_path / "cut.blend").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(A.ArtifactError, match="truncated"):
        A.check_bare_blend(tmp_path / "cut.blend")
    # a scene whose frame range says 1..10^9: outside the task's bound
    r = raw.index(b"REND")
    long = raw[: r + 32] + struct.pack("<ii", 1, 10**9) + raw[r + 40 :]
    (tmp_path / "long.blend").write_bytes(long)
    with pytest.raises(A.ArtifactError, match=r"frame range 1\.\.1000000000"):
        A.check_bare_blend(tmp_path / "long.blend", 240)
    # a library block (LI) is a refused load
    lib = raw[: r] + b"LI\0\0" + raw[r + 4 :]
    (sc / "scene.blend").write_bytes(lib)
    acc = _accept(out, sc)
    assert acc.breaches and acc.breaches[0]["rule"] == "load-external-blend"


def test_extra_frames_and_wrong_mode_outputs(tmp_path, good_blend):
    out, sc = _scratch(tmp_path, good_blend)
    (sc / "frames" / "0004.png").write_bytes(png())
    (sc / "frames" / "evil.png").write_bytes(png())
    acc = _accept(out, sc)
    assert "2 unexpected file(s) in frames/" in acc.reason


def test_validated_run_verifies_every_hash(tmp_path, good_blend):
    out, sc = _scratch(tmp_path, good_blend)
    acc = _accept(out, sc)
    rec = RunRecord(status="ok", artifacts=acc.artifacts, expected_frames=3)
    (out / "run.json").write_text(rec.model_dump_json())
    vr = A.validated_run(out)
    assert vr.valid and vr.render == "frames" and vr.blend == out / "scene.blend"
    assert A.read_verified(out, "frames/0001.png", vr.artifacts) == png()
    blend = (out / "scene.blend").read_bytes()
    (out / "scene.blend").write_bytes(blend[:-1] + bytes([blend[-1] ^ 1]))
    vr = A.validated_run(out)
    assert not vr.valid and "scene.blend does not match its recorded sha256" in vr.reason
    (out / "scene.blend").write_bytes(blend)
    os.remove(out / "frames" / "0002.png")
    os.symlink(out / "frames" / "0001.png", out / "frames" / "0002.png")
    assert "frames/0002.png is a symbolic link" in A.validated_run(out).reason
    os.remove(out / "run.json")
    os.symlink(tmp_path / "forged.json", out / "run.json")
    (tmp_path / "forged.json").write_text(rec.model_dump_json())
    assert "run.json is a symbolic link" in A.validated_run(out).reason
    os.remove(out / "run.json")
    (out / "run.json").write_text(json.dumps({"status": "ok"}))  # a record in the old (or a forged) shape
    assert "not written by this runner" in A.validated_run(out).reason


# ------------------------------------------------------------------------------------------ real runs

HEADER = "import bpy\nimport os\nimport struct\nimport zlib\n"
PNG_FN = '''
def png(w, h):
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    return (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\\0" * 64)) + chunk(b"IEND", b""))
os.makedirs("frames", exist_ok=True)
'''
POISON = {
    # name: (program body, the poisoned file, expected fragment of the one reason)
    "huge_ihdr": (PNG_FN + "open('frames/0001.png', 'wb').write(png(100000, 100000))\n"
                  "bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath('scene.blend'))\n", "frames/0001.png",
                  "frames/0001.png is 100000x100000"),
    "not_a_blend": (PNG_FN + "open('scene.blend', 'wb').write(b'BLENDERX not really' * 100)\n", "scene.blend",
                    "scene.blend: unknown .blend header"),
    "fifo_blend": ("os.mkfifo('scene.blend')\n", "scene.blend", "scene.blend is a FIFO"),
    # a link to another video (under the wall the reference is absent; the trusted side would follow it to the real one)
    "symlink_video": ("os.symlink('elsewhere.mp4', 'render.mp4')\n"
                      "bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath('scene.blend'))\n", "render.mp4",
                      "render.mp4 is a symbolic link"),
}


@pytest.fixture(scope="module")
def poisoned(tmp_path_factory) -> dict[str, tuple[Path, RunRecord]]:
    root = tmp_path_factory.mktemp("poison")
    out = {}
    for name, (body, _, _) in POISON.items():
        prog = root / f"{name}.py"
        prog.write_text(HEADER + body)
        d = root / name
        # the barrier is off: the wall and the validation must hold on their own
        out[name] = (d, run_program(prog, d, timeout_s=120, expected_frames=240, barrier=False))
    return out


def _cli(*args: str, timeout_s: float = 240) -> tuple[dict, float, float]:
    from physcodegym.core import launch

    res = run_limited(launch.cli_argv([*args, "--json"]), timeout_s=timeout_s, memory_mb=None)
    assert not res.timed_out, f"{args[0]} exceeded {timeout_s} s"
    assert res.returncode == 0, (args, res.returncode, res.stdout[-500:], res.stderr[-2000:])
    return json.loads(res.stdout), res.seconds, res.peak_memory_mb or 0.0


@pytest.mark.parametrize("name", sorted(POISON))
def test_poisoned_run_is_invalid_in_every_command(poisoned, name):
    d, rec = poisoned[name]
    _, poisoned_file, frag = POISON[name]
    assert rec.status == "invalid", (rec.status, rec.reason, rec.log_tail)
    assert frag in rec.reason and rec.seconds < 60
    assert json.loads((d / "run.json").read_text())["reason"] == rec.reason
    assert not (d / "sandbox").exists() and poisoned_file not in rec.artifacts and not os.path.lexists(d / poisoned_file)
    doc, secs, peak = _cli("score", "--task", str(TASK), "--candidate", str(d), "--metrics", "ssim,motion,val")
    assert doc["status"] == "invalid" and doc["invalid_reason"] == rec.reason
    assert doc["metrics"]["S_ssim"] == 0.0 and doc["metrics"]["S_val"] == 0.0 and peak < 4 * GIB
    doc, secs, peak = _cli("audit", str(d), "--task", str(TASK))
    assert doc["status"] == "invalid" and doc["invalid_reason"] == rec.reason and doc["S_val"] is None and doc["findings"] == []
    assert secs < 60 and peak < 4 * GIB


def test_one_unit_batch_reports_the_same_reason(tmp_path):
    from physcodegym.batch.units import UnitSpec, execute_unit, sha256_file

    prog = tmp_path / "scene.py"
    prog.write_text(HEADER + POISON["huge_ihdr"][0])  # plain file writes: passes the barrier, breaks the contract
    spec = UnitSpec(config="poison", task_id="ball_bounce", attempt="1", program=str(prog), task_folder=str(TASK),
                    unit_dir=str(tmp_path / "unit"), program_sha256=sha256_file(prog), task_sha256="x", timeout_s=120,
                    memory_mb=4096, metrics=["ssim"])
    row = execute_unit(spec.to_dict())
    rec = json.loads((tmp_path / "unit" / "run" / "run.json").read_text())
    assert rec["status"] == "invalid" and row["status"] == "invalid" and row["artifact"] is False
    assert row["reason"] == rec["reason"] and "frames/0001.png is 100000x100000" in row["reason"] and row["metrics"] is None
    from physcodegym.batch.accounting import task_values

    tv = task_values(row)
    assert tv["artifact"] is False and set(tv["values"].values()) == {0.0}  # no valid artifact: zero where counted


def test_clean_run_is_accepted_and_re_run_ignores_planted_links(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("task file")
    os.symlink(victim, out / ".scene.py.tmp")  # planted by an earlier program in the old layout
    os.symlink(victim, out / "frames")
    prog = tmp_path / "p.py"
    prog.write_text(scene(3))
    rec = run_program(prog, out, timeout_s=180, expected_frames=3)
    assert rec.status == "ok", (rec.reason, rec.log_tail)
    assert victim.read_text() == "task file" and not (out / "frames").is_symlink()
    assert sorted(rec.artifacts) == ["frames/0001.png", "frames/0002.png", "frames/0003.png", "scene.blend"]
    assert rec.validation["seconds"] >= 0 and rec.validation.get("media_audit_s")  # cost: benchmarks/validation_bench.py
    vr = A.validated_run(out)
    assert vr.valid, vr.reason
    from physcodegym.evaluator.scoring import load_candidate

    frames, vr2 = load_candidate(out, expected_frames=3)
    assert frames.shape == (3, 360, 640, 3) and vr2.valid
    doc, secs, peak = _cli("audit", str(out))
    assert doc["status"] == "ok" and "findings" in doc
    # the same folder after a file was swapped: invalid for score and audit alike
    (out / "frames" / "0002.png").write_bytes((out / "frames" / "0001.png").read_bytes())
    doc, _, _ = _cli("audit", str(out), "--task", str(TASK))
    assert doc["status"] == "invalid" and "frames/0002.png does not match" in doc["invalid_reason"] and doc["S_val"] is None


def test_video_render_is_decoded_once_in_a_limited_child(tmp_path, good_blend):
    out = tmp_path / "out"
    sc = out / "sandbox"
    sc.mkdir(parents=True)
    (sc / "scene.blend").write_bytes(good_blend.read_bytes())
    mp4(sc / "render.mp4", n=30)
    acc = _accept(out, sc, n=30)
    assert acc.reason is None and "render.mp4" in acc.artifacts and acc.info["render.mp4"]["frames"] == 30
    # a stream coded at 320x180 in a container whose boxes claim 640x360: the header passes, the decode does not
    small = mp4(tmp_path / "small.mp4", n=30, size=(320, 180)).read_bytes()
    j = small.index(b"mp4v")
    forged = small[: j + 28] + struct.pack(">HH", 640, 360) + small[j + 32 :]
    t = forged.index(b"tkhd")
    end = t - 4 + struct.unpack(">I", forged[t - 4 : t])[0]
    forged = forged[: end - 8] + struct.pack(">II", 640 << 16, 360 << 16) + forged[end:]
    out2 = tmp_path / "o2"
    (out2 / "sandbox").mkdir(parents=True)
    (out2 / "sandbox" / "render.mp4").write_bytes(forged)
    (out2 / "sandbox" / "scene.blend").write_bytes(good_blend.read_bytes())
    A.validate_candidate_video(A.mp4_info(open(out2 / "sandbox" / "render.mp4", "rb"), len(forged), "render.mp4"), "render.mp4", 30)
    acc = _accept(out2, out2 / "sandbox", n=30)
    assert "render.mp4: frame 1 decodes to 320x180" in acc.reason and "render.mp4" not in acc.artifacts
    # a PNG whose header is right and whose data is not: refused by the run, as the scorer would refuse it
    out3, sc3 = _scratch(tmp_path / "p", good_blend)
    (sc3 / "frames" / "0002.png").write_bytes(png()[:60])
    assert "frames/0002.png cannot be decoded" in _accept(out3, sc3).reason
