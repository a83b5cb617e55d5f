"""Headless Chromium for the report tests: Debian's `chromium` driven by playwright (no browser download)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--autoplay-policy=no-user-gesture-required"]


def chromium_path() -> str:
    exe = shutil.which("chromium") or (CHROMIUM if Path(CHROMIUM).is_file() else None)
    if exe is None:
        raise RuntimeError("Debian's chromium is not installed: run `scripts/setup.sh test` (as root it installs it)")
    return exe


@contextlib.contextmanager
def browser_context(width: int = 1360, height: int = 900) -> Iterator:
    """A fresh persistent context (its own user-data-dir) of the system Chromium."""
    from playwright.sync_api import sync_playwright

    ud = tempfile.mkdtemp(prefix="pcg-chromium-")
    try:
        with sync_playwright() as p:
            ctx = p.chromium.launch_persistent_context(ud, executable_path=chromium_path(), headless=True, args=ARGS,
                                                       viewport={"width": width, "height": height})
            try:
                yield ctx
            finally:
                ctx.close()
    finally:
        shutil.rmtree(ud, ignore_errors=True)
