"""The operating-system wall around a scene program (SPEC §3): bubblewrap (`bwrap`).

The child sees a read-only system (`/usr`, a short list of `/etc` entries), the interpreter and its
packages, the sandbox's own bootstrap code and its program file (read-only), and exactly one
writable folder: its scratch folder (`OUT/sandbox/`, also its working directory). Everything else
is absent rather than policed: no task packs, no reference video, no truth files, no HOME, no
parent `/proc` (a fresh PID namespace with its own `/proc`; nothing outlives the run), no network
(a fresh network namespace with no interfaces but loopback), a private `/tmp` of bounded size, a
minimal `/dev`, an empty environment except what the bootstrap needs, no capabilities and no
nested user namespaces. Resource limits (address space, file size, CPU, core dumps) are set by the
runner before `bwrap` is exec'd and are inherited by everything inside.

`--unsafe-no-isolation` (`isolation="none"`) runs the child as a plain process with only the
in-process audit hook and the rlimits; the run record says so. Without it, a host where bwrap cannot
run gets a clear refusal (`IsolationUnavailable`) instead of a silently weaker run.

Standard library only.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from physcodegym.core.determinism import SIMULATION_ENV

HERE = Path(__file__).resolve().parent  # sandbox/: bootstrap.py, barrier.py, rewrite.py (read-only in the child)
MODES = ("bwrap", "none")
UNSAFE_FLAG = "--unsafe-no-isolation"
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `apt-get install -y bubblewrap`, or run scripts/setup.sh as root) "
    f"or pass {UNSAFE_FLAG} to run without the operating-system wall"
)
# /etc entries a Python + Blender + Mesa child needs (dynamic loader, fonts, alternatives symlinks, time zone);
# nothing else of /etc is visible (no shadow, no ssh, no machine secrets).
ETC_ENTRIES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "fonts",
    "localtime",
    "drirc",
    "glvnd",
    "OpenCL",
    "vulkan",
    "mime.types",
    "passwd",
    "group",
    "nsswitch.conf",
    # public CA certificates (never /etc/ssl/private): Debian's python3-requests reads its bundle there at import
    # (certifi -> /etc/ssl/certs/ca-certificates.crt), so without it a child in Debian's Blender cannot even import
    # the CLI (the panel's audit in the Blender 4.3.2 of scripts/blender_rootfs.sh)
    "ssl/certs",
)
TOP_LEVEL_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
TMP_SIZE_BYTES = 1 << 30  # the private /tmp (memory-backed) is capped at 1 GiB
SHM_SIZE_BYTES = 256 << 20  # /dev/shm (POSIX shared memory, semaphores)
CHILD_HOME = "/tmp/pcg-home"  # both inside the private /tmp, and distinct from any run folder under /tmp
CHILD_TMP = "/tmp/pcg-tmp"


class IsolationUnavailable(RuntimeError):
    """bwrap is missing or cannot create its namespaces here; the message says what to do."""


@dataclass(frozen=True)
class Availability:
    """Whether bwrap can build the wall on this host, which binary, and why not."""

    available: bool
    bwrap: str | None
    version: str | None = None
    reason: str | None = None


def find_bwrap() -> str | None:
    return shutil.which("bwrap") or next((p for p in ("/usr/bin/bwrap", "/bin/bwrap") if os.access(p, os.X_OK)), None)


@functools.lru_cache(maxsize=4)
def check_available(bwrap: str | None = None) -> Availability:
    """Can bwrap build the wall here? Runs `/bin/true` (or the interpreter) inside the real namespaces once."""
    exe = bwrap or find_bwrap()
    if not exe:
        return Availability(False, None, reason="bubblewrap (bwrap) is not installed")
    try:
        v = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10)
        version = (v.stdout or v.stderr).strip().split()[-1] if (v.stdout or v.stderr).strip() else None
    except (OSError, subprocess.SubprocessError) as e:
        return Availability(False, exe, reason=f"bwrap cannot be executed: {e}")
    true = shutil.which("true") or "/bin/true"
    argv = [exe, *_namespace_args(), *_system_args(), "--", true]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=20, env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.SubprocessError) as e:
        return Availability(False, exe, version, reason=f"bwrap failed to start: {e}")
    if p.returncode != 0:
        err = (p.stderr or p.stdout).strip().splitlines()
        return Availability(
            False,
            exe,
            version,
            reason="bwrap cannot create its namespaces here: " + (err[-1] if err else f"exit {p.returncode}"),
        )
    return Availability(True, exe, version)


def require(mode: str) -> Availability | None:
    """The availability of `mode` ('bwrap' must be usable, 'none' needs nothing); raises IsolationUnavailable."""
    if mode not in MODES:
        raise ValueError(f"isolation must be one of {MODES}, got {mode!r}")
    if mode == "none":
        return None
    pr = check_available()
    if not pr.available:
        raise IsolationUnavailable(f"the sandbox wall is unavailable: {pr.reason}; {INSTALL_HINT}")
    return pr


def describe(mode: str, pr: Availability | None = None) -> str:
    """One line for the run record's `isolation` field."""
    if mode == "none":
        return f"none ({UNSAFE_FLAG}: in-process audit hook and rlimits only)"
    v = pr.version if pr else None
    return (
        f"bwrap {v or '?'} (namespaces: user, pid, net, ipc, uts, cgroup; read-only system; writable: scratch "
        "folder only)"
    )


# -- cgroup limits (best effort) -----------------------------------------------------------------
PIDS_MAX = 1024  # tasks (processes + threads) of one run: a fork bomb stops here, not at the host's pid_max
CGROUP_ROOT = Path("/sys/fs/cgroup")


def _own_cgroup_v1(controller: str) -> str | None:
    try:
        for ln in Path("/proc/self/cgroup").read_text().splitlines():
            _, ctrls, path = ln.split(":", 2)
            if controller in ctrls.split(","):
                return path
    except (OSError, ValueError):
        pass
    return None


def make_cgroups(tag: str, memory_mb: int | None) -> list[Path]:
    """Per-run cgroups (v1 `pids`/`memory` hierarchies, or v2 with those controllers delegated) when this
    process may create them; [] otherwise. The runner writes the child's pid into each `cgroup.procs`."""
    made: list[Path] = []
    limits = {"pids": {"pids.max": str(int(PIDS_MAX))}}
    if memory_mb:
        limits["memory"] = {
            "memory.limit_in_bytes": str(int(memory_mb * 1.5) << 20),
            "memory.max": str(int(memory_mb * 1.5) << 20),
        }
    v2 = CGROUP_ROOT / "cgroup.controllers"
    for ctrl, files in limits.items():
        base = None
        if (CGROUP_ROOT / ctrl / "cgroup.procs").exists():  # v1
            own = _own_cgroup_v1(ctrl) or "/"
            base = CGROUP_ROOT / ctrl / own.lstrip("/")
        elif v2.exists() and ctrl in v2.read_text().split():
            try:
                if ctrl not in (CGROUP_ROOT / "cgroup.subtree_control").read_text().split():
                    continue
            except OSError:
                continue
            base = CGROUP_ROOT
        if base is None:
            continue
        _sweep_stale(base)
        d = base / f"physcodegym-{tag}"
        try:
            d.mkdir()
        except OSError:
            continue
        ok = False
        for name, value in files.items():
            if (d / name).exists():
                try:
                    (d / name).write_text(value)
                    ok = True
                except OSError:
                    pass
        if ok:
            made.append(d)
        else:
            remove_cgroups([d])
    return made


def _sweep_stale(base: Path) -> None:
    """Remove empty per-run cgroups left by a runner that was killed (named physcodegym-<runner pid>-...)."""
    try:
        entries = list(base.glob("physcodegym-*"))
    except OSError:
        return
    for d in entries:
        try:
            pid = int(d.name.split("-")[1])
        except (IndexError, ValueError):
            continue
        if not Path(f"/proc/{pid}").exists():
            try:
                d.rmdir()
            except OSError:
                pass


def join_cgroups(groups: list[Path]) -> None:
    """Called in the child between fork and exec (runner preexec): move this process into the run's cgroups."""
    for d in groups:
        try:
            with open(d / "cgroup.procs", "w") as fh:
                fh.write(str(os.getpid()))
        except OSError:
            pass


def remove_cgroups(groups: list[Path]) -> None:
    """Remove the run's cgroups once empty (the kernel may need a moment after the last task is reaped)."""
    import time

    for d in groups:
        deadline = time.monotonic() + 15.0  # a thousand forked bpy processes take seconds to tear down
        while True:
            try:
                d.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                if time.monotonic() > deadline:
                    break
                kill_cgroup_members([d])
                time.sleep(0.05)


def describe_cgroups(groups: list[Path]) -> str:
    if not groups:
        return "no per-run cgroup (processes bounded by the timeout and the PID namespace only)"
    kinds = sorted(
        {
            k
            for d in groups
            for k in ("pids", "memory")
            if any(
                (d / f).exists() for f in (("pids.max",) if k == "pids" else ("memory.limit_in_bytes", "memory.max"))
            )
        }
    )
    return f"per-run cgroup: {'+'.join(kinds)} (pids.max {PIDS_MAX})"


def kill_cgroup_members(groups: list[Path]) -> int:
    """SIGKILL whatever is still in the run's cgroups (a detached child without the PID namespace); returns how many."""
    import signal

    n = 0
    for d in groups:
        try:
            pids = [int(x) for x in (d / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            continue
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                n += 1
            except OSError:
                pass
    return n


# -- argv ---------------------------------------------------------------------------------------
def _namespace_args() -> list[str]:
    return [
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--hostname",
        "sandbox",
    ]


def _system_args() -> list[str]:
    args: list[str] = ["--ro-bind", "/usr", "/usr"]
    for name in TOP_LEVEL_LINKS:
        p = Path("/") / name
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    for name in ETC_ENTRIES:
        p = Path("/etc") / name
        if p.exists():
            args += ["--ro-bind", str(p), str(p)]
    # /dev: bwrap's minimal set, the tmpfs under it read-only (it would hold half the RAM) and a small /dev/shm
    args += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(SHM_SIZE_BYTES),
        "--tmpfs",
        "/dev/shm",
        "--remount-ro",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(TMP_SIZE_BYTES),
        "--tmpfs",
        "/tmp",
        "--dir",
        CHILD_HOME,
        "--dir",
        CHILD_TMP,
    ]
    return args


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def interpreter_roots(python: str | None = None, blender_binary: str | None = None) -> list[Path]:
    """Folders the child needs read-only to run the interpreter, bpy and numpy (or a Blender binary)."""
    roots: set[Path] = set()
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        roots.add(Path(p))
    for k in ("stdlib", "platstdlib", "purelib", "platlib"):
        with_path = sysconfig.get_paths().get(k)
        if with_path:
            roots.add(Path(with_path))
    try:
        roots.update(Path(p) for p in site.getsitepackages())
    except AttributeError:
        pass
    for mod in ("bpy", "numpy"):  # where the modules a scene program needs actually live (may be outside prefix)
        try:
            spec = importlib.util.find_spec(mod)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin and spec.origin not in ("built-in", "frozen"):
            roots.add(Path(spec.origin).resolve().parent.parent)
    exe = Path(python or sys.executable)
    roots.add(exe.parent)
    roots.add(exe.resolve().parent.parent)  # the real interpreter behind a venv's symlink
    if blender_binary:
        roots.add(Path(blender_binary).resolve().parent)
    roots = {r.resolve() if r.exists() else r for r in roots}
    roots = {r for r in roots if r.exists() and str(r) not in ("/", "/usr") and not _under(r, Path("/usr"))}
    # keep only the outermost folders
    out = [r for r in sorted(roots, key=lambda p: len(p.parts)) if not any(o != r and _under(r, o) for o in roots)]
    return sorted(out)


# task data inside the tasks package (shipped packs, generated family members): truths live there
TASK_DATA_DIRS = ("packs", "library")


def hidden_paths() -> list[Path]:
    """Folders that must never be visible even if they sit inside a bound tree: task data, task roots, configs."""
    hide: set[Path] = set()
    try:
        spec = importlib.util.find_spec("physcodegym.tasks")
        if spec is not None and spec.origin:
            hide.update(Path(spec.origin).resolve().parent / d for d in TASK_DATA_DIRS)
    except (ImportError, ValueError):
        pass
    hide.update(HERE.parent / "tasks" / d for d in TASK_DATA_DIRS)
    for p in os.environ.get("PHYSCODEGYM_TASKS", "").split(os.pathsep):
        if p:
            hide.add(Path(p).expanduser())
    home = os.environ.get("HOME")
    if home:
        hide.add(Path(home))
    for var in ("XDG_CONFIG_HOME", "PHYSCODEGYM_CONFIG"):
        if os.environ.get(var):
            hide.add(Path(os.environ[var]).expanduser())
    out = []
    for h in hide:
        try:
            out.append(h.resolve())
        except OSError:
            continue
    return sorted(set(out))


# -- the fixed layout inside the wall ------------------------------------------------------------------
# The child sees its run folder, program, sandbox code and virtual environment at the same paths on every run,
# whatever the host's output folder or checkout is called. Why: Blender's SPH particle solver gives results that
# depend on the process's memory layout (measured: one CPU, address randomisation off, and liquid_duck still baked
# differently when only the length of the run folder's name changed), and every path string the child holds (its
# argv, module file names, cwd) moves that layout. With these fixed, the same program bakes the same liquid in
# every run folder, so a truth re-run reproduces its reference (SPEC §3, determinism).
WALL_ROOT = "/pcg"
WALL_RUN = f"{WALL_ROOT}/run"  # the scratch folder: cwd, the only writable place
WALL_CODE = f"{WALL_ROOT}/sandbox"  # bootstrap.py and its siblings (read-only)
WALL_VENV = f"{WALL_ROOT}/venv"  # the interpreter's virtual environment, when it runs in one (read-only)
WALL_PROGRAM_DIR = f"{WALL_ROOT}/program"  # the program copy (read-only)


def _venv_root(python: str | None) -> Path | None:
    """The virtual environment this interpreter runs in (relocatable: found from the executable's path), or None."""
    if python not in (None, sys.executable) or sys.prefix == sys.base_prefix:
        return None
    root = Path(sys.prefix).resolve()
    return root if (root / "pyvenv.cfg").is_file() and not _under(root, Path("/usr")) else None


@dataclass(frozen=True)
class Layout:
    """Where each bound host folder appears inside the wall, and how a host path reads from inside."""

    readonly: tuple[tuple[Path, str], ...]  # (host folder or file, path inside), bound read-only
    scratch: tuple[Path, str]  # (host scratch folder, path inside), bound writable

    def inside(self, host: str | Path) -> str:
        """The path inside the wall of a host path under one of the binds (the most specific wins); else as is."""
        p = Path(host)
        best: tuple[int, str] | None = None
        for src, dst in (*self.readonly, self.scratch):
            for cand in {Path(src), Path(src).resolve()}:
                if _under(p, cand) and (best is None or len(cand.parts) > best[0]):
                    rel = p.relative_to(cand)
                    best = (len(cand.parts), dst if rel == Path(".") else f"{dst}/{rel.as_posix()}")
        return best[1] if best else str(host)


def layout(
    scratch: Path,
    readonly_files: list[Path] = (),
    python: str | None = None,
    blender_binary: str | None = None,
) -> Layout:
    """The binds of one run: interpreter roots (the venv at WALL_VENV, the rest at their own paths), the sandbox code
    at WALL_CODE, the program copy under WALL_PROGRAM_DIR and the scratch folder at WALL_RUN."""
    venv = _venv_root(python)
    ro: list[tuple[Path, str]] = []
    for r in interpreter_roots(python, blender_binary):
        ro.append((r, WALL_VENV if venv is not None and r == venv else str(r)))
    ro.append((HERE, WALL_CODE))
    names: set[str] = set()
    for f in readonly_files:
        f = Path(f).resolve()
        name = f.name if f.name not in names else f"{len(names)}_{f.name}"
        names.add(name)
        ro.append((f, f"{WALL_PROGRAM_DIR}/{name}"))
    return Layout(tuple(ro), (Path(scratch).resolve(), WALL_RUN))


def bwrap_argv(
    child: list[str],
    *,
    scratch: Path,
    readonly_files: list[Path] = (),
    bwrap: str | None = None,
    python: str | None = None,
    blender_binary: str | None = None,
) -> list[str]:
    """The full command line: bwrap with the wall, then `child` (run with the scratch folder as cwd).

    `scratch` is the only writable host folder, bound at WALL_RUN; `readonly_files` (the program copy) are bound
    read-only under WALL_PROGRAM_DIR. `child` is written with host paths: every argument that names a bound path is
    rewritten to where the child sees it (see `Layout.inside`).
    """
    exe = bwrap or find_bwrap()
    if not exe:
        raise IsolationUnavailable(
            f"the sandbox wall is unavailable: bubblewrap (bwrap) is not installed; {INSTALL_HINT}"
        )
    lay = layout(scratch, readonly_files, python, blender_binary)
    args = [exe, *_namespace_args(), *_system_args()]
    for src, dst in lay.readonly:
        args += ["--ro-bind", str(src), dst]
    # anything secret that happens to live inside a bound tree is covered by an empty, read-only tmpfs
    folders = [src for src, _ in lay.readonly if src.is_dir()]
    for h in hidden_paths():
        if not any(_under(h, b) for b in folders):
            continue
        if h.is_dir():
            args += ["--perms", "0555", "--tmpfs", lay.inside(h)]
        elif h.exists():
            args += ["--ro-bind", "/dev/null", lay.inside(h)]
    args += ["--bind", str(lay.scratch[0]), WALL_RUN, "--remount-ro", "/", "--chdir", WALL_RUN, "--"]
    return [*args, *(lay.inside(a) if a.startswith("/") else a for a in child)]


def child_env(scratch: Path, isolation: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The child's whole environment: no keys, no HOME of the runner, no task roots, no config paths."""
    if isolation == "bwrap":
        home, tmp = CHILD_HOME, CHILD_TMP
    else:  # unsafe: still a private HOME and TMPDIR inside the scratch folder's sibling, never the runner's
        home, tmp = str(Path(scratch) / ".home"), str(Path(scratch) / ".tmp")
        Path(home).mkdir(parents=True, exist_ok=True)
        Path(tmp).mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": home,
        "TMPDIR": tmp,
        "TEMP": tmp,
        "TMP": tmp,
        "XDG_CONFIG_HOME": f"{home}/.config",
        "XDG_CACHE_HOME": f"{home}/.cache",
        "XDG_DATA_HOME": f"{home}/.local/share",
        "PYTHONDONTWRITEBYTECODE": "1",
        "BLENDER_USER_RESOURCES": f"{tmp}/blender_user",
        "OMP_NUM_THREADS": "1",  # fixed, not the host's: the environment's size is part of the child's memory layout
    }
    env.update(SIMULATION_ENV)  # bakes repeat exactly whatever ran before them in the process (core.determinism)
    if extra:
        env.update(extra)
    return env
