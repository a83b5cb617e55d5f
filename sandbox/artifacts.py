"""One validated artifact set per run (SPEC §3, validated artifacts): checked once by the trusted runner, read back by
hash.

The scene program runs with `OUT/sandbox/` as its working folder and only writable place. After the child
(and its whole process group) is gone, `accept_outputs` looks at that scratch folder from the trusted side:

- only the contract names are considered (`scene.blend`, `frames/0001.png … NNNN.png` or `render.mp4`,
  `preview.png` in preview mode); anything else is listed as ignored and never read;
- each file is looked up with `lstat` (no link is followed, nothing but a regular file is opened, so a FIFO or
  a device cannot block), opened with `O_NOFOLLOW | O_NONBLOCK`, re-checked with `fstat` (regular, one link:
  a hard link to an outside inode is refused) and bounded in size;
- the header is read before anything decodes it: PNG IHDR (640x360), MP4 boxes (one video track, 640x360,
  N samples at 30 fps, not fragmented), `.blend` magic (plain, zstd or gzip) and its block list walked to the end
  (no linked library, movie clip or sound; the frame range of every scene within the task's bound);
- the bytes are hashed from the same descriptor and the file is renamed into `OUT/` (same file system); the
  inode is compared after the rename.

The runner writes `OUT/run.json` itself with the accepted files (`artifacts`: path -> sha256, size).
`validated_run` is how `score`, `audit`, `batch` and the report open a run folder: the record is read without
following links, the run must be `ok`, and every accepted file is verified against its recorded hash; any
break makes the run `invalid` with one reason, the same string everywhere. Pure standard library + zstandard.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import stat
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

WIDTH, HEIGHT, FPS = 640, 360, 30
FPS_TOLERANCE = 0.01
SCRATCH = "sandbox"
RECORD = "run.json"

# limits (bytes) -- generous for a 640x360 render, far below what would hurt the trusted side
MAX_PNG_BYTES = 8 * 1024 * 1024  # an uncompressed 640x360 RGBA PNG is ~0.9 MiB
MAX_VIDEO_BYTES = 512 * 1024 * 1024
MAX_BLEND_BYTES = 4 * 1024 * 1024 * 1024
MAX_BLEND_RAW_BYTES = 8 * 1024 * 1024 * 1024  # decompressed
MAX_RECORD_BYTES = 8 * 1024 * 1024
MAX_MOOV_BYTES = 32 * 1024 * 1024
MAX_SCRATCH_ENTRIES = 20000
MAX_BLEND_BLOCKS = 20_000_000
FRAME_SLACK = 240  # a scene may keep a pre-roll / tail beyond the rendered frames, within this bound
VIDEO_CODECS = {b"avc1", b"avc3", b"hvc1", b"hev1", b"mp4v", b"av01", b"vp09", b"FMP4", b"XVID", b"DIVX"}
REFUSED_BLOCKS = {
    b"LI\0\0": ("load-external-blend", "links a library"),
    b"MC\0\0": ("media-decode", "holds a movie clip"),
    b"SO\0\0": ("media-decode", "holds a sound"),
}
_O_READ = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_O_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class ArtifactError(Exception):
    """One output breaks the contract; the message is the reason (it names the file)."""


def safe_name(name: str | bytes) -> str:
    """A file name the program chose, as text that every record and terminal can hold.

    Names come from `os.scandir` as `str` with surrogate escapes where the bytes are not UTF-8; such a string cannot
    be encoded as UTF-8 JSON (the runner once crashed on it and wrote no record). A plain printable name is kept as
    it is; anything else (undecodable bytes, newlines and other control characters) is shown as its escaped Python
    repr of the raw bytes, e.g. `b'bad\\xff'` or `'a\\nb'`, so that two different names never print the same."""
    raw = name if isinstance(name, bytes) else os.fsencode(name)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return repr(raw)
    if text.isprintable():
        return text
    return repr(text)


def limits() -> dict[str, int]:
    """The bounds in force (recorded in run.json)."""
    return {
        "png_bytes": MAX_PNG_BYTES,
        "video_bytes": MAX_VIDEO_BYTES,
        "blend_bytes": MAX_BLEND_BYTES,
        "blend_raw_bytes": MAX_BLEND_RAW_BYTES,
        "record_bytes": MAX_RECORD_BYTES,
        "scratch_entries": MAX_SCRATCH_ENTRIES,
        "frame_slack": FRAME_SLACK,
    }


# ----------------------------------------------------------------------------------------------- file access


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def open_dir(root: Path) -> int:
    """A descriptor on a folder given by the trusted side (its own path may contain links; its content may not)."""
    return os.open(str(root), os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))


def _subdir(dfd: int, name: str, rel: str) -> int:
    try:
        st = os.lstat(name, dir_fd=dfd)
    except FileNotFoundError:
        raise
    if not stat.S_ISDIR(st.st_mode):
        raise ArtifactError(f"{rel} is {_kind(st.st_mode)}, not a folder")
    return os.open(name, _O_DIR, dir_fd=dfd)


def open_regular(root_fd: int, rel: str, max_bytes: int) -> tuple[int, os.stat_result]:
    """Open `rel` under `root_fd` without following any link; a regular file with one link, at most max_bytes.

    Raises FileNotFoundError when absent, ArtifactError when present but not acceptable."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise ArtifactError(f"{rel}: not a plain relative name")
    dfd = root_fd
    opened: list[int] = []
    try:
        for i, part in enumerate(parts[:-1]):
            dfd = _subdir(dfd, part, "/".join(parts[: i + 1]))
            opened.append(dfd)
        name = parts[-1]
        st = os.lstat(name, dir_fd=dfd)
        if not stat.S_ISREG(st.st_mode):
            raise ArtifactError(f"{rel} is {_kind(st.st_mode)}, not a regular file")
        try:
            fd = os.open(name, _O_READ, dir_fd=dfd)
        except OSError as e:
            raise ArtifactError(f"{rel} cannot be opened without following links: {e.strerror}") from e
        fst = os.fstat(fd)
        try:
            if not stat.S_ISREG(fst.st_mode) or (fst.st_ino, fst.st_dev) != (st.st_ino, st.st_dev):
                raise ArtifactError(f"{rel} changed while it was opened")
            if fst.st_nlink != 1:
                raise ArtifactError(
                    f"{rel} has {fst.st_nlink} hard links (a link to a file outside the run is refused)"
                )
            if fst.st_size > max_bytes:
                raise ArtifactError(f"{rel} is {fst.st_size} bytes (limit {max_bytes})")
            if fst.st_size == 0:
                raise ArtifactError(f"{rel} is empty")
        except BaseException:
            os.close(fd)
            raise
        return fd, fst
    finally:
        for d in opened:
            os.close(d)


def read_all(fd: int, size: int) -> bytes:
    chunks = []
    left = size
    while left > 0:
        b = os.read(fd, min(left, 1 << 20))
        if not b:
            break
        chunks.append(b)
        left -= len(b)
    return b"".join(chunks)


def _sha256_fd(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    h = hashlib.sha256()
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            break
        h.update(b)
    return h.hexdigest()


# ----------------------------------------------------------------------------------------------- headers


def png_header(head: bytes, rel: str) -> tuple[int, int]:
    """(width, height) from the IHDR of a PNG (no decode)."""
    if len(head) < 33 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR" or head[8:12] != b"\0\0\0\x0d":
        raise ArtifactError(f"{rel} is not a PNG (no IHDR header)")
    w, h, depth, ctype = struct.unpack(">IIBB", head[16:26])
    if depth not in (1, 2, 4, 8, 16) or ctype not in (0, 2, 3, 4, 6):
        raise ArtifactError(f"{rel} has an invalid PNG header (bit depth {depth}, colour type {ctype})")
    return int(w), int(h)


def check_png(head: bytes, rel: str) -> None:
    w, h = png_header(head, rel)
    if (w, h) != (WIDTH, HEIGHT):
        raise ArtifactError(f"{rel} is {w}x{h} (expected {WIDTH}x{HEIGHT})")


class _Boxes:
    """ISO BMFF box walk over a bounded byte string."""

    def __init__(self, data: bytes, rel: str) -> None:
        self.data, self.rel = data, rel

    def children(self, start: int, end: int) -> list[tuple[bytes, int, int]]:
        out = []
        off = start
        while off + 8 <= end and len(out) < 4096:
            size, typ = struct.unpack(">I4s", self.data[off : off + 8])
            hdr = 8
            if size == 1:
                if off + 16 > end:
                    break
                size = struct.unpack(">Q", self.data[off + 8 : off + 16])[0]
                hdr = 16
            elif size == 0:
                size = end - off
            if size < hdr or off + size > end:
                raise ArtifactError(f"{self.rel}: MP4 box {typ!r} overruns its parent")
            out.append((typ, off + hdr, off + size))
            off += size
        return out

    def find(self, start: int, end: int, typ: bytes) -> tuple[int, int] | None:
        for t, s, e in self.children(start, end):
            if t == typ:
                return s, e
        return None


def mp4_info(fh: BinaryIO, size: int, rel: str) -> dict[str, Any]:
    """Video stream facts from the MP4/MOV boxes alone (sizes, sample count, timescale); never decodes."""
    off = 0
    moov = None
    seen = []
    while off + 8 <= size and len(seen) < 256:
        fh.seek(off)
        head = fh.read(16)
        if len(head) < 8:
            break
        bsize, typ = struct.unpack(">I4s", head[:8])
        hdr = 8
        if bsize == 1:
            if len(head) < 16:
                break
            bsize, hdr = struct.unpack(">Q", head[8:16])[0], 16
        elif bsize == 0:
            bsize = size - off
        if bsize < hdr or off + bsize > size:
            raise ArtifactError(f"{rel}: MP4 box {typ!r} claims {bsize} bytes beyond the file ({size} bytes)")
        seen.append(typ)
        if typ == b"moof":
            raise ArtifactError(f"{rel}: fragmented MP4 is not accepted")
        if typ == b"moov":
            if bsize - hdr > MAX_MOOV_BYTES:
                raise ArtifactError(f"{rel}: MP4 index (moov) of {bsize} bytes exceeds {MAX_MOOV_BYTES}")
            fh.seek(off + hdr)
            moov = fh.read(bsize - hdr)
        off += bsize
    if not seen or seen[0] not in (b"ftyp", b"wide", b"free", b"moov", b"mdat", b"skip"):
        raise ArtifactError(f"{rel} is not an MP4/MOV file")
    if moov is None:
        raise ArtifactError(f"{rel}: no MP4 index (moov box)")
    bx = _Boxes(moov, rel)
    videos = []
    for typ, s, e in bx.children(0, len(moov)):
        if typ != b"trak":
            continue
        mdia = bx.find(s, e, b"mdia")
        if mdia is None:
            continue
        hdlr = bx.find(*mdia, b"hdlr")
        if hdlr is None or moov[hdlr[0] + 8 : hdlr[0] + 12] != b"vide":
            continue
        mdhd = bx.find(*mdia, b"mdhd")
        minf = bx.find(*mdia, b"minf")
        stbl = bx.find(*minf, b"stbl") if minf else None
        if mdhd is None or stbl is None:
            raise ArtifactError(f"{rel}: video track without media header or sample table")
        ver = moov[mdhd[0]]
        if ver == 1:
            timescale, duration = struct.unpack(">IQ", moov[mdhd[0] + 20 : mdhd[0] + 32])
        else:
            timescale, duration = struct.unpack(">II", moov[mdhd[0] + 12 : mdhd[0] + 20])
        stsd = bx.find(*stbl, b"stsd")
        stsz = bx.find(*stbl, b"stsz")
        stts = bx.find(*stbl, b"stts")
        if stsd is None or stsz is None or stts is None:
            raise ArtifactError(f"{rel}: video sample table incomplete (stsd/stsz/stts)")
        entries = struct.unpack(">I", moov[stsd[0] + 4 : stsd[0] + 8])[0]
        es = stsd[0] + 8
        if entries != 1 or es + 36 > stsd[1]:
            raise ArtifactError(f"{rel}: video track has {entries} sample descriptions (expected 1)")
        codec = moov[es + 4 : es + 8]
        w, h = struct.unpack(">HH", moov[es + 32 : es + 36])
        count = struct.unpack(">I", moov[stsz[0] + 8 : stsz[0] + 12])[0]
        n_tts = struct.unpack(">I", moov[stts[0] + 4 : stts[0] + 8])[0]
        if stts[0] + 8 + 8 * n_tts > stts[1] or n_tts > 100_000:
            raise ArtifactError(f"{rel}: time-to-sample table overruns its box")
        deltas = set()
        total = 0
        for c, d in struct.iter_unpack(">II", moov[stts[0] + 8 : stts[0] + 8 + 8 * n_tts]):
            total += c
            deltas.add(d)
        tw = th = None
        tkhd = bx.find(s, e, b"tkhd")
        if tkhd is not None and tkhd[1] - tkhd[0] >= 8:
            tw, th = (x >> 16 for x in struct.unpack(">II", moov[tkhd[1] - 8 : tkhd[1]]))
        fps = (timescale / next(iter(deltas))) if len(deltas) == 1 and next(iter(deltas)) else None
        videos.append(
            {
                "codec": codec.decode("latin-1"),
                "width": int(w),
                "height": int(h),
                "track_width": tw,
                "track_height": th,
                "frames": int(count),
                "stts_frames": int(total),
                "timescale": int(timescale),
                "duration_s": (duration / timescale) if timescale else None,
                "fps": fps,
                "_codec": codec,
            }
        )
    if len(videos) != 1:
        raise ArtifactError(f"{rel} has {len(videos)} video tracks (expected 1)")
    v = videos.pop()
    if v.pop("_codec") not in VIDEO_CODECS:
        raise ArtifactError(f"{rel}: video codec {v['codec']!r} is not accepted")
    return v


def validate_candidate_video(info: dict[str, Any], rel: str, expected_frames: int | None) -> None:
    if (info["width"], info["height"]) != (WIDTH, HEIGHT) or (
        info["track_width"] not in (None, 0) and (info["track_width"], info["track_height"]) != (WIDTH, HEIGHT)
    ):
        raise ArtifactError(f"{rel} is {info['width']}x{info['height']} (expected {WIDTH}x{HEIGHT})")
    if info["fps"] is None or abs(info["fps"] - FPS) > FPS_TOLERANCE:
        fps = "variable" if info["fps"] is None else f"{info['fps']:.3f}"
        raise ArtifactError(f"{rel} is {fps} fps (expected {FPS})")
    n = expected_frames
    if info["frames"] != info["stts_frames"]:
        raise ArtifactError(f"{rel}: sample tables disagree ({info['frames']} vs {info['stts_frames']} frames)")
    if n is not None and info["frames"] != n:
        raise ArtifactError(f"{rel} has {info['frames']} frames (expected {n}, {n / FPS:g} s at {FPS} fps)")
    if n is not None and info["duration_s"] is not None and abs(info["duration_s"] - n / FPS) > 1.5 / FPS:
        raise ArtifactError(f"{rel} lasts {info['duration_s']:.3f} s (expected {n / FPS:g} s)")


class _FdReader:
    """A file object over a descriptor we own (no re-open by path)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def seek(self, off: int, whence: int = 0) -> int:
        return os.lseek(self.fd, off, whence)

    def read(self, n: int = -1) -> bytes:
        if n < 0:
            n = 1 << 30
        return os.read(self.fd, n)

    def readable(self) -> bool:
        return True


class _Capped:
    def __init__(self, raw: Any, cap: int, rel: str) -> None:
        self.raw, self.cap, self.rel, self.n = raw, cap, rel, 0

    def read(self, n: int) -> bytes:
        b = self.raw.read(n)
        self.n += len(b)
        if self.n > self.cap:
            raise ArtifactError(f"{self.rel} decompresses beyond {self.cap} bytes")
        return b

    def exact(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            b = self.read(min(n - len(out), 1 << 20))
            if not b:
                break
            out += b
        return bytes(out)

    def skip(self, n: int) -> int:
        done = 0
        while done < n:
            b = self.read(min(n - done, 1 << 20))
            if not b:
                break
            done += len(b)
        return done


def blend_info(fd: int, rel: str, *, max_raw: int = MAX_BLEND_RAW_BYTES) -> dict[str, Any]:
    """Walk a .blend's block list (plain, zstd or gzip) from the header to ENDB without Blender.

    Returns the compression, header version, block counts of interest, the number of particle settings (PA
    blocks), the frame range of every scene (REND blocks) and `refused` [(rule, detail)] for blocks that load
    outside data (libraries, movie clips, sounds)."""
    os.lseek(fd, 0, os.SEEK_SET)
    magic = os.read(fd, 4)
    os.lseek(fd, 0, os.SEEK_SET)
    raw: Any = _FdReader(fd)
    compression = "none"
    if magic == b"\x28\xb5\x2f\xfd":
        import zstandard

        raw = zstandard.ZstdDecompressor().stream_reader(_FdReader(fd), read_across_frames=True, closefd=False)
        compression = "zstd"
    elif magic[:2] == b"\x1f\x8b":
        raw = gzip.GzipFile(fileobj=_FdReader(fd), mode="rb")  # type: ignore[arg-type]
        compression = "gzip"
    r = _Capped(raw, max_raw, rel)
    try:
        head = r.exact(12)
        if head[:7] != b"BLENDER":
            raise ArtifactError(f"{rel} is not a Blender file (no BLENDER header)")
        if head[7:9].isdigit():  # 5.0 header: BLENDER17-01v0500
            hsize = int(head[7:9])
            rest = r.exact(hsize - 12)
            full = head + rest
            if full[9:10] != b"-" or full[12:13] not in (b"v", b"V"):
                raise ArtifactError(f"{rel}: unknown .blend header {full!r}")
            fmt = int(full[10:12])
            little = full[12:13] == b"v"
            version = full[13:hsize].decode("latin-1")
            if fmt != 1:
                raise ArtifactError(f"{rel}: unknown .blend file format version {fmt}")
            bh, layout = 32, "large"
        else:
            if head[7:8] not in (b"_", b"-") or head[8:9] not in (b"v", b"V"):
                raise ArtifactError(f"{rel}: unknown .blend header {head!r}")
            little = head[8:9] == b"v"
            version = head[9:12].decode("latin-1")
            bh, layout = (24, "ptr8") if head[7:8] == b"-" else (20, "ptr4")
        end = "<" if little else ">"
        counts: dict[str, int] = {}
        particle_settings = 0  # PA blocks: no particle system can exist without one (the audit's CPU pinning)
        scenes: list[dict[str, int]] = []
        refused: list[tuple[str, str]] = []
        n = 0
        ended = False
        while n < MAX_BLEND_BLOCKS:
            b = r.exact(bh)
            if len(b) < bh:
                break
            n += 1
            code = b[:4]
            if layout == "large":
                _sdna, _old, length, _nr = struct.unpack(end + "iQqq", b[4:32])
            elif layout == "ptr8":
                length = struct.unpack(end + "i", b[4:8])[0]
            else:
                length = struct.unpack(end + "i", b[4:8])[0]
            if code == b"ENDB":
                ended = True
                break
            if length < 0:
                raise ArtifactError(f"{rel}: block {code!r} has a negative length")
            key = code.rstrip(b"\0").decode("latin-1", "replace")
            if code == b"PA\0\0":
                particle_settings += 1
            if code in REFUSED_BLOCKS or code in (b"SC\0\0", b"REND", b"IM\0\0"):
                counts[key] = counts.get(key, 0) + 1
            if code in REFUSED_BLOCKS and len(refused) < 20:
                rule, what = REFUSED_BLOCKS[code]
                refused.append((rule, f"scene.blend {what} (block {key}); outside data is not part of the contract"))
            if code == b"REND" and length >= 8:
                data = r.exact(length)
                if len(data) < length:
                    break
                sfra, efra = struct.unpack(end + "ii", data[:8])
                if len(scenes) < 64:
                    scenes.append({"frame_start": int(sfra), "frame_end": int(efra)})
                continue
            if r.skip(length) < length:
                break
        if not ended:
            raise ArtifactError(f"{rel} is truncated or not a complete Blender file (no ENDB block after {n} blocks)")
        return {
            "compression": compression,
            "version": version,
            "blocks": n,
            "counts": counts,
            "particle_settings": particle_settings,
            "scenes": scenes,
            "refused": refused,
        }
    except ArtifactError:
        raise
    except Exception as e:  # a corrupt compressed stream, a bad struct: not a Blender file we accept
        raise ArtifactError(f"{rel} cannot be read as a Blender file: {type(e).__name__}: {e}") from e


def check_scene_range(info: dict[str, Any], rel: str, expected_frames: int) -> None:
    bound = max(expected_frames, 1) + FRAME_SLACK
    if not info["scenes"]:
        raise ArtifactError(f"{rel} holds no scene")
    for sc in info["scenes"]:
        s, e = sc["frame_start"], sc["frame_end"]
        if e < s or s < -FRAME_SLACK or e > bound:
            raise ArtifactError(
                f"{rel}: scene frame range {s}..{e} is outside the task's bound "
                f"({-FRAME_SLACK}..{bound} for {expected_frames} rendered frames)"
            )


# ----------------------------------------------------------------------------------------------- acceptance


@dataclass
class Acceptance:
    """What `accept_outputs` found: accepted files (moved into OUT), and why the rest was not."""

    artifacts: dict[str, dict[str, Any]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    breaches: list[dict[str, str]] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def reason(self) -> str | None:
        bits = list(self.problems)
        if self.missing:
            bits.append(f"{len(self.missing)} missing output(s) (first: {self.missing[0]})")
        return "; ".join(bits) or None


def _accept_one(sfd: int, ofd: int, rel: str, max_bytes: int, check, acc: Acceptance) -> bool:
    """Check one file of the scratch folder and move it into OUT; False (with the problem recorded) if refused."""
    try:
        fd, st = open_regular(sfd, rel, max_bytes)
    except FileNotFoundError:
        acc.missing.append(rel)
        return False
    except ArtifactError as e:
        acc.problems.append(str(e))
        return False
    try:
        info = check(fd, st, rel)
        digest = info.pop("_sha256", None) if isinstance(info, dict) else None
        digest = digest or _sha256_fd(fd)
        d, _, name = rel.rpartition("/")
        src_dir = os.open(d, _O_DIR, dir_fd=sfd) if d else sfd
        dst_dir = os.open(d, _O_DIR, dir_fd=ofd) if d else ofd
        try:
            os.rename(name, name, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
            moved = os.lstat(name, dir_fd=dst_dir)
        finally:
            if d:
                os.close(src_dir)
                os.close(dst_dir)
        if (moved.st_ino, moved.st_dev) != (st.st_ino, st.st_dev) or not stat.S_ISREG(moved.st_mode):
            raise ArtifactError(f"{rel} was replaced while it was accepted")
        acc.artifacts[rel] = {"sha256": digest, "size": int(st.st_size)}
        if info:
            acc.info[rel] = info
        return True
    except ArtifactError as e:
        acc.problems.append(str(e))
        return False
    except OSError as e:  # e.g. a planted non-folder where the accepted file must go
        acc.problems.append(f"{rel} could not be accepted: {e.strerror or e}")
        return False
    finally:
        os.close(fd)


def decode_check_png(data: bytes, rel: str) -> None:
    """The PNG decodes (bounded: its IHDR was checked first) to 640x360, as the scorer will decode it."""
    import cv2
    import numpy as np

    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if img is None:
        raise ArtifactError(f"{rel} cannot be decoded as a PNG")
    if img.shape[:2] != (HEIGHT, WIDTH):
        raise ArtifactError(f"{rel} decodes to {img.shape[1]}x{img.shape[0]} (expected {WIDTH}x{HEIGHT})")


def _png_check(fd: int, st: os.stat_result, rel: str) -> dict:
    """Header first, then the same decode the scorer does, from the bytes that are hashed (one read)."""
    os.lseek(fd, 0, os.SEEK_SET)
    data = read_all(fd, st.st_size)
    check_png(data[:33], rel)
    decode_check_png(data, rel)
    return {"_sha256": hashlib.sha256(data).hexdigest()}


def _video_check(expected_frames: int):
    def fn(fd: int, st: os.stat_result, rel: str) -> dict:
        info = mp4_info(_FdReader(fd), st.st_size, rel)
        validate_candidate_video(info, rel, expected_frames)
        validate_decoded_video(f"/proc/self/fd/{fd}", rel, expected_frames)
        return info

    return fn


VIDEO_CHECK_TIMEOUT_S = 120.0
VIDEO_CHECK_MEMORY_MB = 3072


def validate_decoded_video(path: str, rel: str, expected_frames: int) -> None:
    """The stream decodes to exactly `expected_frames` 640x360 frames, in a child with a time and memory limit
    (a stream whose coded size disagrees with its container header stops there, not in the scorer)."""
    from physcodegym.core import launch
    from physcodegym.core.limits import run_limited

    cmd = launch.python_argv("physcodegym.metrics.decode_worker", [path, "-", "--frames", str(int(expected_frames))])
    res = run_limited(cmd, timeout_s=VIDEO_CHECK_TIMEOUT_S, memory_mb=VIDEO_CHECK_MEMORY_MB, pass_fds=_fd_of(path))
    if res.killed_reason:
        raise ArtifactError(f"{rel}: decoding stopped: {res.killed_reason}")
    if res.returncode != 0:
        msg = None
        for ln in res.stdout.splitlines()[::-1]:
            with contextlib.suppress(ValueError, AttributeError):
                msg = json.loads(ln).get("error")
                break
        raise ArtifactError(f"{rel}: {msg or f'decode exited {res.returncode}'}")


def _fd_of(path: str) -> tuple[int, ...]:
    return (int(path.rsplit("/", 1)[1]),) if path.startswith("/proc/self/fd/") else ()


def _blend_check(expected_frames: int, acc: Acceptance):
    def fn(fd: int, st: os.stat_result, rel: str) -> dict:
        info = blend_info(fd, rel)
        for rule, detail in info.pop("refused"):
            acc.breaches.append({"rule": rule, "detail": detail})
        check_scene_range(info, rel, expected_frames)
        return info

    return fn


def _listing(dfd: int, limit: int) -> list[str]:
    names = []
    with os.scandir(dfd) as it:
        for e in it:
            names.append(e.name)
            if len(names) > limit:
                raise ArtifactError(f"the run folder holds more than {limit} entries")
    return sorted(names)


def accept_outputs(scratch: Path, out: Path, mode: str, expected_frames: int) -> Acceptance:
    """Validate the contract outputs in `scratch` (the program's folder, the program gone) and move them into `out`.

    Never raises for what the folder holds: anything unexpected becomes a problem (the run is then invalid)."""
    t0 = time.perf_counter()
    try:
        acc = _accept_outputs(scratch, out, mode, expected_frames)
    except Exception as e:  # noqa: BLE001 - recorded as the run's reason
        acc = Acceptance(problems=[f"output validation failed: {type(e).__name__}: {e}"])
    acc.seconds = round(time.perf_counter() - t0, 4)
    return acc


def _accept_outputs(scratch: Path, out: Path, mode: str, expected_frames: int) -> Acceptance:
    acc = Acceptance()
    try:
        sfd = open_dir(scratch)
    except OSError as e:
        acc.problems.append(f"the program's folder cannot be opened: {e.strerror}")
        acc.missing.append("scene.blend")
        return acc
    ofd = open_dir(out)
    try:
        try:
            top = _listing(sfd, MAX_SCRATCH_ENTRIES)
        except ArtifactError as e:
            acc.problems.append(str(e))
            top = []
        wanted = (
            {"scene.blend"}
            | ({"frames", "render.mp4"} if mode == "full" else set())
            | ({"preview.png"} if mode == "preview" else set())
        )
        acc.ignored = [safe_name(n) for n in top if n not in wanted][:50]
        has_blend = "scene.blend" in top
        if has_blend or mode in ("full", "bake_only"):
            _accept_one(sfd, ofd, "scene.blend", MAX_BLEND_BYTES, _blend_check(expected_frames, acc), acc)
        if mode == "preview":
            _accept_one(sfd, ofd, "preview.png", MAX_PNG_BYTES, _png_check, acc)
        if mode == "full":
            _accept_render(sfd, ofd, top, expected_frames, acc)
    finally:
        os.close(sfd)
        os.close(ofd)
    return acc


def _accept_render(sfd: int, ofd: int, top: list[str], expected_frames: int, acc: Acceptance) -> None:
    frames_names: list[str] = []
    if "frames" in top:
        st = os.lstat("frames", dir_fd=sfd)
        if not stat.S_ISDIR(st.st_mode):
            acc.problems.append(f"frames is {_kind(st.st_mode)}, not a folder")
        else:
            ffd = os.open("frames", _O_DIR, dir_fd=sfd)
            try:
                frames_names = _listing(ffd, MAX_SCRATCH_ENTRIES)
            except ArtifactError as e:
                acc.problems.append(f"frames/: {e}")
            finally:
                os.close(ffd)
    if not frames_names and "render.mp4" in top:
        if "frames" in top:
            acc.ignored.append("frames")
        _accept_one(sfd, ofd, "render.mp4", MAX_VIDEO_BYTES, _video_check(expected_frames), acc)
        return
    if "render.mp4" in top:
        acc.ignored.append("render.mp4")  # frames/ wins, as before
    want = [f"{i:04d}.png" for i in range(1, expected_frames + 1)]
    extra = sorted(safe_name(n) for n in set(frames_names) - set(want))
    if extra:
        acc.problems.append(
            f"{len(extra)} unexpected file(s) in frames/ (expected only 0001..{expected_frames:04d}.png): "
            f"{', '.join(extra[:5])}{' …' if len(extra) > 5 else ''}"
        )
    have = set(frames_names)
    with contextlib.suppress(FileExistsError):
        os.mkdir("frames", 0o755, dir_fd=ofd)
    n_problems = len(acc.problems)
    present = []
    for n in want:
        if n in have:
            present.append(f"frames/{n}")
        else:
            acc.missing.append(f"frames/{n}")
    # PNG decoding releases the GIL: a small pool keeps the check of 240 frames well under a second
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        list(pool.map(lambda rel: _accept_one(sfd, ofd, rel, MAX_PNG_BYTES, _png_check, acc), present))
    # one line for many bad frames, naming the first (in frame order)
    bad = sorted(acc.problems[n_problems:])
    if len(bad) > 1:
        del acc.problems[n_problems:]
        acc.problems.append(f"{len(bad)} frame(s) refused (first: {bad[0]})")


# ----------------------------------------------------------------------------------------------- read side


@dataclass
class ValidatedRun:
    """A run folder as the trusted side sees it: the runner's record and the files it accepted, re-verified."""

    run_dir: Path
    valid: bool
    reason: str | None
    status: str | None
    record: dict[str, Any]
    artifacts: dict[str, dict[str, Any]]

    @property
    def render(self) -> str | None:
        """'frames' or 'video' (which accepted render the run has), or None."""
        if any(k.startswith("frames/") for k in self.artifacts):
            return "frames"
        return "video" if "render.mp4" in self.artifacts else None

    @property
    def blend(self) -> Path | None:
        return self.run_dir / "scene.blend" if "scene.blend" in self.artifacts else None

    def frame_names(self) -> list[str]:
        return sorted(k for k in self.artifacts if k.startswith("frames/"))


def invalid_reason(status: str | None, reason: str | None) -> str:
    """The one wording of why a run has no valid artifact, shared by score, audit, batch and the report."""
    if status == "invalid":
        return reason or "the run's artifact breaks the output contract"
    return f"run status is {status!r}" + (f": {reason}" if reason else "") + " (no valid artifact)"


def read_record(run_dir: Path) -> dict[str, Any]:
    """`run.json` read without following a link (a regular file with one link, bounded); ArtifactError otherwise."""
    rfd = open_dir(run_dir)
    try:
        try:
            fd, st = open_regular(rfd, RECORD, MAX_RECORD_BYTES)
        except FileNotFoundError as e:
            raise ArtifactError("no run record (run.json): the folder was not written by the runner") from e
        try:
            data = read_all(fd, st.st_size)
        finally:
            os.close(fd)
    finally:
        os.close(rfd)
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ArtifactError(f"run.json is not valid JSON: {e}") from e
    if not isinstance(doc, dict):
        raise ArtifactError("run.json is not a JSON object")
    return doc


RUN_MARKERS = (RECORD, "run.log", SCRATCH)


def is_run_folder(path: Path) -> bool:
    """A folder the runner wrote (or began to write): it holds run.json, run.log or the scratch folder `sandbox/`
    (the program writes only inside `sandbox/`, so it can remove none of them). A `scene.py` beside a `scene.blend`
    is not a marker: that is also how a user hands in a hand-made folder to audit. Such a folder is opened only
    through `validated_run`, never as a plain folder of files to audit or score: a folder whose record is missing
    or unreadable is `invalid` (links are not followed to decide)."""
    path = Path(path)
    return any(os.path.lexists(path / n) for n in RUN_MARKERS)


def validated_run(run_dir: Path, *, verify_hashes: bool = True, require_ok: bool = True) -> ValidatedRun:
    """The validated artifact set of a run folder, or `valid=False` with the reason. Never raises for the folder's
    faults."""
    run_dir = Path(run_dir)
    try:
        rec = read_record(run_dir)
    except (ArtifactError, OSError) as e:
        return ValidatedRun(
            run_dir, False, str(e) if isinstance(e, ArtifactError) else f"run.json cannot be read: {e}", None, {}, {}
        )
    status = rec.get("status")
    arts = rec.get("artifacts")
    if not isinstance(arts, dict) or rec.get("record_version") != RECORD_VERSION:
        return ValidatedRun(
            run_dir,
            False,
            "run.json was not written by this runner (no validated artifact list)",
            status if isinstance(status, str) else None,
            rec,
            {},
        )
    if require_ok and status != "ok":
        return ValidatedRun(run_dir, False, invalid_reason(status, rec.get("reason")), status, rec, dict(arts))
    if verify_hashes:
        try:
            verify_artifacts(run_dir, arts)
        except ArtifactError as e:
            return ValidatedRun(
                run_dir, False, f"accepted artifact no longer matches run.json: {e}", status, rec, dict(arts)
            )
    return ValidatedRun(run_dir, True, None, status, rec, dict(arts))


RECORD_VERSION = 2


def _expected(arts: dict[str, Any], rel: str) -> tuple[str, int]:
    meta = arts.get(rel)
    if not isinstance(meta, dict) or not isinstance(meta.get("sha256"), str) or not isinstance(meta.get("size"), int):
        raise ArtifactError(f"{rel} is not in the run's accepted artifacts")
    return meta["sha256"], meta["size"]


def _limit_for(rel: str) -> int:
    if rel.endswith(".blend"):
        return MAX_BLEND_BYTES
    if rel.endswith(".mp4"):
        return MAX_VIDEO_BYTES
    return MAX_PNG_BYTES


def read_verified(run_dir: Path, rel: str, arts: dict[str, Any], root_fd: int | None = None) -> bytes:
    """The bytes of one accepted file, read once without following links and checked against its recorded hash."""
    sha, size = _expected(arts, rel)
    rfd = open_dir(run_dir) if root_fd is None else root_fd
    try:
        try:
            fd, st = open_regular(rfd, rel, min(size, _limit_for(rel)))
        except FileNotFoundError as e:
            raise ArtifactError(f"{rel} is gone") from e
        try:
            data = read_all(fd, st.st_size)
        finally:
            os.close(fd)
    finally:
        if root_fd is None:
            os.close(rfd)
    if len(data) != size or hashlib.sha256(data).hexdigest() != sha:
        raise ArtifactError(f"{rel} does not match its recorded sha256")
    return data


def verify_artifacts(run_dir: Path, arts: dict[str, Any]) -> None:
    """Every accepted file still present, regular, one link, same size and sha256 (streamed)."""
    rfd = open_dir(run_dir)
    try:
        for rel in sorted(arts):
            sha, size = _expected(arts, rel)
            try:
                fd, st = open_regular(rfd, rel, _limit_for(rel))
            except FileNotFoundError as e:
                raise ArtifactError(f"{rel} is gone") from e
            try:
                if st.st_size != size or _sha256_fd(fd) != sha:
                    raise ArtifactError(f"{rel} does not match its recorded sha256")
            finally:
                os.close(fd)
    finally:
        os.close(rfd)


def copy_verified(run_dir: Path, rel: str, arts: dict[str, Any], dest: Path) -> Path:
    """Copy one accepted file (verified while copying) to a trusted place; returns dest."""
    data = read_verified(run_dir, rel, arts)
    fd = os.open(str(dest), os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return dest


# ----------------------------------------------------------------------------------------------- bare inputs


def _open_bare(path: Path, max_bytes: int) -> tuple[int, os.stat_result]:
    """A file given directly, opened as a run's files are (`open_regular` in its folder): fd and stat."""
    parent = open_dir(path.parent)
    try:
        return open_regular(parent, path.name, max_bytes)
    finally:
        os.close(parent)


def check_bare_video(path: Path, expected_frames: int | None) -> dict[str, Any]:
    """The header checks of a run's render.mp4, for a video given directly (score of a bare video)."""
    path = Path(path)
    fd, st = _open_bare(path, MAX_VIDEO_BYTES)
    try:
        info = mp4_info(_FdReader(fd), st.st_size, path.name)
        validate_candidate_video(info, path.name, expected_frames)
        return info
    finally:
        os.close(fd)


def check_bare_blend(path: Path, expected_frames: int | None = None) -> dict[str, Any]:
    """Header, block walk and refused blocks of a .blend given directly (audit of a .blend)."""
    path = Path(path)
    fd, _st = _open_bare(path, MAX_BLEND_BYTES)
    try:
        info = blend_info(fd, path.name)
    finally:
        os.close(fd)
    if expected_frames is not None:
        check_scene_range(info, path.name, expected_frames)
    return info
