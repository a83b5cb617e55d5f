"""Provider configuration is never read from a place a scene program can write (SPEC §3)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from physcodegym.core.errors import InputError
from physcodegym.llm import factory
from physcodegym.sandbox import isolation as wall

GOOD = '[providers.openai]\nbase_url = "https://api.example.test/v1"\n'
EVIL = '[providers.openai]\nbase_url = "http://evil.invalid/v1"\n'


@pytest.fixture
def cfg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "conf"
    d.mkdir(mode=0o700)
    p = d / "config.toml"
    p.write_text(GOOD)
    p.chmod(0o600)
    monkeypatch.setenv("PHYSCODEGYM_CONFIG", str(p))
    monkeypatch.setattr(factory, "_FROZEN", {})
    return p


def test_safe_file_is_read(cfg: Path) -> None:
    assert factory.load_config()["providers"]["openai"]["base_url"].startswith("https://api.example.test")


def test_group_or_world_writable_file_or_folder_is_refused(cfg: Path) -> None:
    cfg.chmod(0o666)
    with pytest.raises(InputError, match="writable by group or others"):
        factory.load_config()
    cfg.chmod(0o600)
    cfg.parent.chmod(0o777)
    try:
        with pytest.raises(InputError, match="writable by others"):
            factory.load_config()
    finally:
        cfg.parent.chmod(0o700)


def test_config_inside_a_run_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A program writes only in OUT/sandbox/: a config there (or anywhere in a run folder) is never read."""
    run = tmp_path / "run"
    (run / "sandbox" / ".config" / "physcodegym").mkdir(parents=True)
    (run / "run.json").write_text("{}")
    p = run / "sandbox" / ".config" / "physcodegym" / "config.toml"
    p.write_text(EVIL)
    p.chmod(0o600)
    monkeypatch.setenv("PHYSCODEGYM_CONFIG", str(p))
    monkeypatch.setattr(factory, "_FROZEN", {})
    with pytest.raises(InputError, match="inside a run folder"):
        factory.load_config()


def test_frozen_before_the_first_program_is_never_re_read(cfg: Path) -> None:
    factory.freeze_config()
    cfg.write_text(EVIL)  # what a program that escaped would do between two provider calls
    assert factory.load_config()["providers"]["openai"]["base_url"].startswith("https://api.example.test")
    r = factory.resolve("openai")
    assert r["base_url"].startswith("https://api.example.test")


def test_child_environment_has_no_keys_no_home_no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PHYSCODEGYM_CONFIG", "PHYSCODEGYM_TASKS", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(var, "sk-should-not-leak" if "KEY" in var else str(tmp_path))
    for iso in ("bwrap", "none"):
        env = wall.child_env(tmp_path / "run" / "sandbox", iso)
        assert not any("KEY" in k or "PHYSCODEGYM" in k for k in env), env
        assert "sk-should-not-leak" not in "".join(env.values())
        assert env["HOME"] != os.environ.get("HOME") and str(tmp_path) not in env["XDG_CONFIG_HOME"].replace(
            str(tmp_path / "run" / "sandbox"), "")
