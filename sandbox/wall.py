"""The wall around every trusted process that opens a submitted scene (docs/THREAT_MODEL.md).

Why: a saved scene is not inert data. Blender runs Python stored in a scene at render time whatever Auto Run says
(a Freestyle style module in Python-scripting mode is a text block executed on every render, per view layer, with
any engine), and writes files through paths stored in it (point-cache names, File Output nodes, render output).
The scene program itself runs behind `sandbox.isolation`; the processes that come after it (the audit and its
re-simulation and re-render, counterfactual workers, the post-run media audit, inspect and preview tools) open
the same scene with the user's rights. This module puts them behind the same bubblewrap wall, with ONE policy:

- secrets absent: only the package's code is bound (a whitelist of its top-level modules: no `.git`, no tests,
  no submissions), with the task data folders (`tasks/packs`, `tasks/library`, `$PHYSCODEGYM_TASKS`) covered by
  empty read-only folders; no HOME, no config folders; an environment built from nothing (no keys);
- the interpreter and its packages read-only; the submitted run folder (or one .blend) READ-ONLY at its own path;
- exactly one writable folder, a fresh scratch folder (also HOME and TMPDIR), bound at its own path;
- no network (fresh namespaces), no capabilities, a new session, `--die-with-parent` (the lifeline) plus the
  parent-death signal of `core.limits`;
- memory bounded by address space (RLIMIT_AS, inherited by every grandchild) and, where this process may create
  one, a per-child cgroup (`memory.max`, `pids.max`); time bounded by `core.limits`' wall clock.

What comes back is what the child prints (bounded by `max_output`) or writes into the scratch folder; the caller
validates it (JSON it parses, arrays of known shape), never runs or trusts a file by name.

Where bwrap cannot run, `require_wall` refuses with `IsolationUnavailable` (the runner's rule) unless the caller
passed the unsafe flag (`isolation="none"`): then the child runs as a plain limited process with the scrubbed
environment, which is what `describe` says.

The trusted truth program's runs (task build, truth counterfactuals) need no wall, but never share a child with a
submitted scene: nothing here starts a truth program, and a walled child cannot see one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from physcodegym.core import launch
from physcodegym.core.limits import Limited, Started, start_limited
from physcodegym.sandbox import isolation

MODES = isolation.MODES
UNSAFE_FLAG = isolation.UNSAFE_FLAG
IsolationUnavailable = isolation.IsolationUnavailable
# top-level entries of the package root that a trusted child never needs: history (holds every truth.py ever
# committed), tests and their fixtures, other submissions, local environments other than the interpreter's own
EXCLUDED_TOP = frozenset({".git", "tests", "submissions", ".ci", ".ruff_cache", ".venv-harbor", "benchmarks"})
FILE_CAP_BYTES = 8 << 30  # RLIMIT_FSIZE of a walled child: no single file past this in its scratch folder
ENV_PASSTHROUGH = ("PHYSCODEGYM_BLENDER",)  # names, never values that could hold a secret (keys are not listed)


def require_wall(isolation_mode: str) -> str:
    """`isolation_mode` checked: 'bwrap' must be usable here (else IsolationUnavailable naming the unsafe flag)."""
    isolation.require(isolation_mode)
    return isolation_mode


def mode_for(unsafe: bool) -> str:
    """'none' when the caller explicitly passed the unsafe flag, else 'bwrap'."""
    return "none" if unsafe else "bwrap"


def describe(isolation_mode: str) -> str:
    """One line for a report: which wall a trusted child ran behind."""
    if isolation_mode == "none":
        return f"none ({UNSAFE_FLAG}: scrubbed environment and rlimits only; the scene could write anywhere)"
    return "bwrap (secrets absent; run folder read-only; writable: one scratch folder; no network)"


def package_binds(root: Path = launch.PACKAGE_ROOT) -> list[Path]:
    """The package's own code, entry by entry (a whitelist): Python packages and modules, the manifest."""
    out: list[Path] = []
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return out
    for e in entries:
        if e.name in EXCLUDED_TOP or e.name.startswith("."):
            continue
        if e.is_dir() and not e.is_symlink() and (e / "__init__.py").is_file():
            out.append(e)
        elif e.is_file() and not e.is_symlink() and (e.suffix == ".py" or e.name == "blender_manifest.toml"):
            out.append(e)
    return out


def import_path_binds() -> list[Path]:
    """This interpreter's import folders (inside a Blender binary: the extension's installed wheels), except any
    that holds the package root or is HOME itself: those would bring the whole checkout (history, tests) along."""
    home = os.environ.get("HOME")
    out: list[Path] = []
    for p in sys.path:
        if not p or not os.path.isdir(p):
            continue
        r = Path(p).resolve()
        if r == Path("/") or isolation._under(r, Path("/usr")) or isolation._under(launch.PACKAGE_ROOT, r) \
                or (home and r == Path(home).resolve()):
            continue
        out.append(r)
    return out


def _hidden(binds: list[Path]) -> list[Path]:
    """Secret folders that lie inside a bound folder (task data, HOME, configs): covered by an empty folder."""
    hide = set(isolation.hidden_paths())
    hide.update(launch.PACKAGE_ROOT / "tasks" / d for d in isolation.TASK_DATA_DIRS)
    hide.add(launch.PACKAGE_ROOT / ".git")  # history holds every truth ever committed (an input holding the checkout)
    out = []
    for h in sorted(hide):
        if any(isolation._under(h, b) and h != b for b in binds if b.is_dir()) and os.path.lexists(h):
            out.append(h)
    return out


def bwrap_command(cmd: list[str], *, scratch: Path, readonly: list[Path] = (), bwrap: str | None = None) -> list[str]:
    """bwrap with the trusted-child wall, then `cmd` unchanged (every path is bound at its own host path)."""
    exe = bwrap or isolation.find_bwrap()
    if not exe:
        raise IsolationUnavailable(
            f"the sandbox wall is unavailable: bubblewrap (bwrap) is not installed; {isolation.INSTALL_HINT}")
    scratch = Path(scratch).resolve()
    ro: list[Path] = []
    for r in isolation.interpreter_roots(blender_binary=launch.blender_binary()):
        ro.append(r)
    ro += package_binds()
    ro += import_path_binds()
    for p in readonly:
        ro.append(Path(p).resolve())
    args = [exe, *isolation._namespace_args(), *isolation._system_args()]
    seen: set[Path] = set()
    for p in ro:
        if p in seen or not p.exists():
            continue
        seen.add(p)
        args += ["--ro-bind", str(p), str(p)]
    for h in _hidden(ro):
        if h.is_dir():
            args += ["--perms", "0555", "--tmpfs", str(h)]
        else:
            args += ["--ro-bind", "/dev/null", str(h)]
    # the submitted input again, after the covers: a hidden folder cannot cover it (a run folder inside HOME stays
    # visible); then the covers of secrets inside the input itself (an input that holds a task pack shows none)
    inputs = [Path(p).resolve() for p in readonly if Path(p).exists()]
    for p in inputs:
        args += ["--ro-bind", str(p), str(p)]
    for h in _hidden(inputs):
        if h.is_dir():
            args += ["--perms", "0555", "--tmpfs", str(h)]
        else:
            args += ["--ro-bind", "/dev/null", str(h)]
    args += ["--bind", str(scratch), str(scratch), "--remount-ro", "/", "--chdir", str(scratch), "--"]
    return [*args, *cmd]


def walled_env(scratch: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The child's whole environment, built from nothing: HOME and TMPDIR in the scratch folder, no keys."""
    scratch = Path(scratch).resolve()
    home, tmp = scratch / "home", scratch / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "TEMP": str(tmp),
        "TMP": str(tmp),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "BLENDER_USER_RESOURCES": str(tmp / "blender_user"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "PHYSCODEGYM_WALLED": "1",  # the child knows it is walled: its own children need no second wall
    }
    if launch.PACKAGE_ROOT.name == launch.PACKAGE:  # an unpacked extension outside any venv (launch.child_env)
        env["PYTHONPATH"] = str(launch.PACKAGE_ROOT.parent)
    for k in ENV_PASSTHROUGH:
        if os.environ.get(k):
            env[k] = os.environ[k]
    if extra:
        env.update(extra)
    return env


def inside_wall() -> bool:
    """True in a process started by this module (its own children are inside the same wall already)."""
    return os.environ.get("PHYSCODEGYM_WALLED") == "1" and os.uname().nodename == "sandbox"  # bwrap --hostname


@contextlib.contextmanager
def scratch_folder(prefix: str = "pcg_wall_") -> Iterator[Path]:
    """A fresh scratch folder for one walled child, removed afterwards (links not followed)."""
    d = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def start_walled(
    cmd: list[str],
    *,
    scratch: Path,
    readonly: list[Path] = (),
    isolation_mode: str = "bwrap",
    timeout_s: float,
    memory_mb: int | None,
    env_extra: dict[str, str] | None = None,
    **limits: Any,
) -> Started:
    """Start `cmd` behind the wall (or, with `isolation_mode='none'`, plainly with the scrubbed environment).

    Inside a child that is already walled this adds no second wall (bwrap cannot nest: user namespaces are
    disabled in there), only the limits. Raises IsolationUnavailable when the wall cannot be built here."""
    env = walled_env(scratch, env_extra)
    if inside_wall() or isolation_mode == "none":
        if isolation_mode not in MODES:
            raise ValueError(f"isolation must be one of {MODES}, got {isolation_mode!r}")
        return start_limited(cmd, timeout_s=timeout_s, memory_mb=memory_mb, env=env, cwd=str(scratch), **limits)
    require_wall(isolation_mode)
    groups = isolation.make_cgroups(f"{os.getpid()}-t{next(_SEQ)}", memory_mb)
    argv = bwrap_command(cmd, scratch=scratch, readonly=list(readonly))

    def after_fork() -> None:  # in the child, before exec: no file past FILE_CAP, then into the cgroups
        import resource

        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_CAP_BYTES, FILE_CAP_BYTES))
        isolation.join_cgroups(groups)

    return start_limited(argv, timeout_s=timeout_s, memory_mb=memory_mb, env=env, cwd=str(scratch),
                         after_fork=after_fork,
                         on_exit=(lambda: isolation.remove_cgroups(groups)) if groups else None, **limits)


def run_walled(cmd: list[str], **kw: Any) -> Limited:
    """`start_walled(...).wait()`."""
    return start_walled(cmd, **kw).wait()


def _counter() -> Iterator[int]:
    n = 0
    while True:
        n += 1
        yield n


_SEQ = _counter()


def job_command(cmd: list[str], work: Path) -> tuple[list[str], dict[str, str]]:
    """(argv, env) for a panel background job that opens a scene copy in `work` and writes its result there: the
    job runner (`physcodegym_addon.jobs`) starts it with its own time accounting; the wall makes `work` its only
    writable folder (the scene copy inside it included) and hides everything else. Raises IsolationUnavailable
    where bwrap cannot run (the panel reports it, as it does for a run)."""
    require_wall("bwrap")
    work = Path(work).resolve()
    return bwrap_command(cmd, scratch=work), walled_env(work)
