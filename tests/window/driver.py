"""Drives a real Blender window as a person would; runs INSIDE the Blender rootfs (Debian's python3, numpy, cv2,
Xvfb, xdotool, xwd), started by tests/window/test_real_window.py through scripts/blender --exec.

    python3 driver.py OUT_DIR SCENE.blend TASK_ID

Why a separate process inside the rootfs: the X server, Blender and the X tools must share one namespace, and
the window test must observe Blender only from outside (screen pixels, X input, the files ui_probe.py writes).
Steps: start Xvfb (`-displayfd`: a free display, no fixed number); start Blender on the run's scene with
ui_probe.py; screenshot; find the Load button on the screen by its look (template match of
templates/load_button.png), click the task field left of it, type the task id, Return, press Load; wait until the
scene holds the task; screenshot; find Run Audit the same way and press it; wait until the audit job ends;
screenshot; quit Blender through the probe. A click is a press and a release 0.15 s apart after the pointer
rested 0.4 s (an instant click only shows tooltips). Writes OUT_DIR/driver.json (steps, seconds, failure).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np

HERE = Path(__file__).resolve().parent
SCREEN = (1600, 900)


class Driver:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.steps: list[dict] = []
        self.t0 = time.monotonic()
        r, w = os.pipe()
        self.xvfb = subprocess.Popen(
            ["Xvfb", "-displayfd", str(w), "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24", "-nolisten", "tcp"],
            pass_fds=(w,),
            stdout=subprocess.DEVNULL,
            stderr=open(out / "xvfb.log", "w"),  # noqa: SIM115
        )
        os.close(w)
        got = b""
        while not got.endswith(b"\n"):  # Xvfb writes the number, then the newline: keep the pipe open for both
            chunk = os.read(r, 32)
            if not chunk:
                raise RuntimeError(f"Xvfb did not start: {(out / 'xvfb.log').read_text()[-500:]}")
            got += chunk
        self._display_pipe = r  # closed after Xvfb ends (it may write again on a server reset)
        self.display = ":" + got.decode().strip()
        self.env = dict(os.environ, DISPLAY=self.display, PCG_WIN_DIR=str(out))
        self.blender: subprocess.Popen | None = None

    def step(self, name: str, **info: object) -> None:
        self.steps.append({"step": name, "t": round(time.monotonic() - self.t0, 2), **info})
        (self.out / "driver.json").write_text(json.dumps({"steps": self.steps}, indent=1))

    def start_blender(self, blend: Path) -> None:
        self.blender = subprocess.Popen(
            ["blender", str(blend), "--python", str(HERE / "ui_probe.py")],
            env=self.env,
            stdout=open(self.out / "blender.log", "w"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
        )

    def state(self) -> dict:
        try:
            return json.loads((self.out / "state.json").read_text())
        except (OSError, ValueError):
            return {}

    def wait(self, what: str, pred, timeout: float) -> dict:  # noqa: ANN001
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.blender is not None and self.blender.poll() is not None:
                raise RuntimeError(f"Blender exited (status {self.blender.returncode}) while waiting for {what}")
            st = self.state()
            if st and pred(st):
                return st
            time.sleep(0.3)
        raise RuntimeError(f"timed out after {timeout:g} s waiting for {what}; last state: {json.dumps(self.state())}")

    def xdo(self, *args: str) -> None:
        subprocess.run(["xdotool", *args], env=self.env, check=True)

    def click(self, x: int, y: int) -> None:
        """Approach, rest, press, release: Blender activates a button on hover (a redraw, slow on software GL
        with a busy CPU) and only then takes the press."""
        self.xdo("mousemove", str(x - 3), str(y))
        time.sleep(0.3)
        self.xdo("mousemove", str(x), str(y))
        time.sleep(0.8)
        self.xdo("mousedown", "1")
        time.sleep(0.2)
        self.xdo("mouseup", "1")
        time.sleep(0.3)

    def shot(self, name: str) -> np.ndarray:
        """The whole screen now: OUT/name.xwd (read by the test) and the array for template search here."""
        path = self.out / f"{name}.xwd"
        subprocess.run(["xwd", "-root", "-silent", "-display", self.display, "-out", str(path)], check=True)
        data = path.read_bytes()
        words = np.frombuffer(data[:100], ">u4")
        hsize, w, h, bpl, ncol = int(words[0]), int(words[4]), int(words[5]), int(words[12]), int(words[19])
        px = np.frombuffer(data, np.uint8, count=bpl * h, offset=hsize + 12 * ncol).reshape(h, bpl)
        return px[:, : w * 4].reshape(h, w, 4)[:, :, :3].copy()  # BGR (LSB-first BGRX)

    def settle(self, name: str, timeout: float = 20.0, still: int = 4) -> np.ndarray:
        """Rest the pointer over the viewport (a report pop-up closes when the pointer leaves it) and take shots
        until `still` in a row are the same (panels animate when they open or grow, and software GL on a busy CPU
        redraws late); the last one is OUT/name.xwd."""
        self.xdo("mousemove", str(SCREEN[0] // 3), str(SCREEN[1] // 2))
        prev = self.shot(name)
        same = 1
        end = time.monotonic() + timeout
        while time.monotonic() < end and same < still:
            time.sleep(0.5)
            cur = self.shot(name)
            same = same + 1 if np.array_equal(cur, prev) else 1
            prev = cur
        return prev

    def find(self, template: str, screen: np.ndarray, region: list[int] | None) -> tuple[int, int, int, int, float]:
        """(left, top, width, height, score) of the best match of templates/<template> in the sidebar region
        (Blender's region x, y from the window's bottom-left), else anywhere."""
        tpl = cv2.cvtColor(cv2.imread(str(HERE / "templates" / template)), cv2.COLOR_BGR2GRAY)
        gray = cv2.cvtColor(screen, cv2.COLOR_BGR2GRAY)
        x0 = y0 = 0
        if region:
            rx, ry, rw, rh = region
            x0, y0 = rx, SCREEN[1] - (ry + rh)
            gray = gray[y0 : y0 + rh, x0 : x0 + rw]
        res = cv2.matchTemplate(gray, tpl, cv2.TM_CCOEFF_NORMED)
        _, score, _, (mx, my) = cv2.minMaxLoc(res)
        return x0 + mx, y0 + my, tpl.shape[1], tpl.shape[0], float(score)

    def press(self, template: str, what: str, threshold: float = 0.8) -> tuple[int, int, int, int]:
        """Find a button by its look and press it; fails when nothing on screen looks like it."""
        screen = self.settle(f"before_{template.split('.')[0]}")
        x, y, w, h, score = self.find(template, screen, self.state().get("ui_region"))
        self.step(f"found {what}", at=[x, y, w, h], score=round(score, 3))
        if score < threshold:
            raise RuntimeError(f"no {what} on the screen (best template match {score:.2f} < {threshold})")
        self.click(x + w // 2, y + h // 2)
        return x, y, w, h

    def press_until(self, template: str, what: str, pred, timeout: float, tries: int = 3) -> dict:  # noqa: ANN001
        """Press a button until the UI state shows its effect (`pred`), at most `tries` times: a press that
        Blender dropped (busy redrawing) is pressed again, as a person would."""
        for attempt in range(tries):
            self.press(template, what)
            end = time.monotonic() + (8.0 if attempt < tries - 1 else timeout)
            while time.monotonic() < end:
                st = self.state()
                if st and pred(st):
                    self.step(f"pressed {what}", attempts=attempt + 1)
                    return st
                time.sleep(0.3)
        raise RuntimeError(f"pressing {what} {tries} times had no effect; last state: {json.dumps(self.state())}")

    def close(self) -> None:
        (self.out / "quit").touch()
        if self.blender is not None:
            try:
                self.blender.wait(30)
            except subprocess.TimeoutExpired:
                self.blender.kill()
                self.blender.wait()
            self.step("blender exited", status=self.blender.returncode)
        self.xvfb.terminate()
        self.xvfb.wait(10)
        os.close(self._display_pipe)


def run(out: Path, blend: Path, task_id: str) -> None:
    d = Driver(out)
    d.step("xvfb", display=d.display)
    try:
        d.start_blender(blend)
        d.wait("the sidebar, full-window", lambda s: s.get("setup") and s.get("panel_registered"), 120)
        time.sleep(1.0)  # a few redraws after the layout change
        # the sidebar's PhysCodeGym tab; Blender may drop the very first press after the window maps: press again
        # (at most three times) until the Task panel's Load button is on the screen
        for attempt in range(3):
            d.press("physcodegym_tab.png", "PhysCodeGym tab", threshold=0.7)
            screen = d.settle("idle")
            x, y, w, h, score = d.find("load_button.png", screen, d.state().get("ui_region"))
            d.step("found Load button", at=[x, y, w, h], score=round(score, 3), attempt=attempt + 1)
            if score >= 0.8:
                break
        else:
            raise RuntimeError(f"no Load button on the screen (best template match {score:.2f} < 0.8)")
        d.step("idle", tab=d.state().get("tab"))
        # the task field is the text box left of Load in the same aligned row: click, type, Return
        d.click(x - 60, y + h // 2)
        d.xdo("key", "ctrl+a")
        d.xdo("type", "--delay", "60", task_id)
        d.xdo("key", "Return")
        time.sleep(0.5)
        d.wait("the task field to hold the task id", lambda s: s.get("scene", {}).get("task_ref") == task_id, 20)
        d.step("typed", task_ref=task_id)
        st = d.press_until("load_button.png", "Load button", lambda s: s.get("scene", {}).get("task_id") == task_id, 60)
        d.settle("task_loaded")
        d.step("task loaded", scene=st.get("scene"))
        d.press_until("run_audit_button.png", "Run Audit button", lambda s: "audit" in s.get("jobs", {}), 30)
        st = d.wait("the audit job to end", lambda s: not s["jobs"]["audit"]["running"], 300)
        d.settle("audit")
        d.step("audit done", scene=st.get("scene"), jobs=st.get("jobs"))
    except Exception as e:  # the test reads driver.json: say what failed, and keep a picture of the screen
        d.step("failed", error=f"{type(e).__name__}: {e}")
        try:
            d.shot("failed")
        except (OSError, subprocess.SubprocessError):
            pass
    finally:
        d.close()


if __name__ == "__main__":
    run(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
