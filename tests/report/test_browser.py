"""The generated report in a real browser (Debian's headless Chromium): opens from disk with no console error,
every video loads, lasts 8 s and plays, the player keeps them in sync and steps frames, every link resolves,
the tables sort and filter. Screenshots go to results/ci-artifacts/report/ (CI keeps them)."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from browser import browser_context


def _open(ctx, url: str):
    page = ctx.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda ex: errors.append(f"page error: {ex}"))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url} {r.failure}"))
    page.goto(url, wait_until="load")
    return page, errors


def _wait_videos(page, timeout_s: float = 30) -> list[dict]:
    t0 = time.monotonic()
    while True:
        st = page.evaluate("Array.from(document.querySelectorAll('video')).map(v => ({src: v.currentSrc, ready: v.readyState, "
                           "duration: v.duration, error: v.error ? v.error.code : null}))")
        if all(v["ready"] >= 2 or v["error"] for v in st) or time.monotonic() - t0 > timeout_s:
            return st
        page.wait_for_timeout(200)


@pytest.fixture(scope="module")
def ctx():
    with browser_context() as c:
        yield c


def test_pages_open_with_no_console_error_and_every_link_resolves(report: dict, ctx, artifacts: Path) -> None:
    out = Path(report["out"])
    pages = [out / "index.html", *map(Path, report["pages"])]
    assert len(pages) == 2
    hrefs: set[str] = set()
    for p in pages:
        t0 = time.monotonic()
        page, errors = _open(ctx, p.as_uri())
        load_s = time.monotonic() - t0
        page.wait_for_timeout(500)
        assert not errors, f"{p.name}: {errors}"
        assert load_s < 5, f"{p.name} took {load_s:.1f} s to load"
        imgs = page.evaluate("Array.from(document.images).map(i => [i.alt, i.complete && i.naturalWidth > 0])")
        assert imgs and all(ok for _, ok in imgs), [a for a, ok in imgs if not ok]
        hrefs |= set(page.evaluate("Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"))
        page.close()
    assert len(hrefs) > 10
    anchors: dict[Path, set[str]] = {}
    for h in sorted(hrefs):
        u = urlsplit(h)
        assert u.scheme == "file", f"a link leaves the disk: {h}"
        target = Path(unquote(u.path))
        assert target.is_file(), f"broken link: {h}"
        if u.fragment:
            if target not in anchors:
                page, _ = _open(ctx, target.as_uri())
                anchors[target] = set(page.evaluate("Array.from(document.querySelectorAll('[id]')).map(e => e.id)"))
                page.close()
            assert u.fragment in anchors[target], f"link to a missing anchor: {h}"
    page, _ = _open(ctx, (out / "index.html").as_uri())
    page.screenshot(path=str(artifacts / "leaderboard.png"), full_page=True)
    print(f"\nscreenshots: {artifacts}")


def test_videos_load_play_in_sync_and_step_frames(report: dict, ctx, artifacts: Path) -> None:
    task_page = Path(report["pages"][0])
    page, errors = _open(ctx, task_page.as_uri())
    st = _wait_videos(page)
    # reference + the two configurations with an artifact; the crash has a placeholder with its reason
    assert len(st) == 3, st
    for v in st:
        assert v["error"] is None and v["ready"] >= 2, v
        assert abs(v["duration"] - 8.0) < 0.05, v
    assert "no valid artifact" in page.inner_text(".sync")
    page.click(".sync .play")
    page.wait_for_timeout(1200)
    page.click(".sync .play")  # pause: every video is put on the master's time
    page.wait_for_timeout(300)
    times = page.evaluate("Array.from(document.querySelectorAll('video')).map(v => [v.currentTime, v.paused])")
    assert all(p for _, p in times), times
    assert times[0][0] > 0.3, f"the reference did not play: {times}"
    assert max(t for t, _ in times) - min(t for t, _ in times) < 1 / 30, f"videos out of sync: {times}"
    f0 = int(page.input_value(".sync input[type=range]"))
    page.click(".sync .next")
    page.click(".sync .next")
    page.wait_for_timeout(400)
    f1 = int(page.input_value(".sync input[type=range]"))
    assert f1 == f0 + 2, (f0, f1)
    times = page.evaluate("Array.from(document.querySelectorAll('video')).map(v => v.currentTime)")
    assert all(abs(t - (f1 - 0.5) / 30) < 1e-3 for t in times), times
    # an event marker seeks to its start frame
    page.click(".timeline .ev >> nth=1")
    page.wait_for_timeout(300)
    assert int(page.input_value(".sync input[type=range]")) == 121
    assert not errors, errors
    page.screenshot(path=str(artifacts / "task.png"), full_page=True)
    finding = page.locator(".finding").first
    finding.scroll_into_view_if_needed()
    finding.screenshot(path=str(artifacts / "finding.png"))


def test_leaderboard_sorts_and_filters(report: dict, ctx) -> None:
    page, errors = _open(ctx, (Path(report["out"]) / "index.html").as_uri())
    table = "div[data-set=all_tasks][data-cat-eq=''] table"

    def configs() -> list[str]:
        return page.evaluate(f"Array.from(document.querySelectorAll(\"{table} tbody tr\")).map(r => r.cells[1].textContent)")

    col = page.locator(f"{table} th", has_text="S_tot")
    col.click()
    asc = configs()
    col.click()
    desc = configs()
    assert asc == desc[::-1] and len(asc) == 3 and desc[0] == "good" and desc[-1] == "broken", (asc, desc)
    page.select_option("select[data-filter=config]", "shortcut")
    visible = page.evaluate("Array.from(document.querySelectorAll('#units ~ table tbody tr')).filter(r => r.offsetParent !== null)"
                            ".map(r => r.cells[0].textContent)")
    assert visible == ["shortcut"], visible
    page.select_option("select[data-filter=config]", "")
    page.select_option("select[data-filter=set]", "produced_artifacts")
    shown = page.evaluate("Array.from(document.querySelectorAll('div[data-set]')).filter(d => d.offsetParent !== null)"
                          ".map(d => d.getAttribute('data-set'))")
    assert shown == ["produced_artifacts"], shown
    assert "n=0" in page.inner_text("div[data-set=produced_artifacts][data-cat-eq='']")  # broken produced nothing
    assert not errors, errors
