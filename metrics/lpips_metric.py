"""S_lpips: mean per-frame clip(1 - d, 0, 1), d = LPIPS (AlexNet, v0.1) distance (SPEC §4).

torch / torchvision / lpips are the optional extra `.[lpips]`; everything else scores without them. The linear
calibration layers ship inside the lpips wheel, but the AlexNet backbone comes from the torch hub cache. When it
is absent (an offline machine) S_lpips is reported `uncomputable` with the path that was searched: this module
never triggers a download, and never substitutes a random backbone for a score. `random_backbone=True`
(lpips' `pnet_rand=True`) exists only to exercise the plumbing in tests; its results say so in their details.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import numpy as np
from physcodegym.metrics.results import MetricResult, MetricState

BACKBONE_FILE = "alexnet-owt-7be5be79.pth"  # torchvision AlexNet_Weights.IMAGENET1K_V1
INSTALL_HINT = "pip install -e '.[lpips]'"


def backbone_path() -> Path:
    """Where torchvision looks for the AlexNet weights: <torch hub dir>/checkpoints/<file>."""
    import torch

    return Path(torch.hub.get_dir()) / "checkpoints" / BACKBONE_FILE


def availability(random_backbone: bool = False) -> tuple[bool, str | None, dict]:
    """(usable, reason if not, details) without loading any model."""
    try:
        import lpips  # noqa: F401
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as e:
        return False, f"LPIPS needs the optional extra ({INSTALL_HINT}): {e}", {}
    if random_backbone:
        return True, None, {}
    p = backbone_path()
    if not p.is_file():
        return (
            False,
            f"AlexNet backbone weights not in the torch hub cache (searched {p}); this machine cannot download them",
            {"searched": str(p)},
        )
    return True, None, {"backbone_weights": str(p)}


def _device(device: str | None) -> str:
    import torch

    if device:
        return device
    return "cuda" if torch.cuda.is_available() else "cpu"


@functools.lru_cache(maxsize=2)
def _model(random_backbone: bool, device: str):
    import lpips
    import torch

    if device == "cpu":  # leave a core for the rest of the machine; torch's default may oversubscribe
        torch.set_num_threads(max(1, min(4, (os.cpu_count() or 2))))
    m = lpips.LPIPS(net="alex", version="0.1", pretrained=True, pnet_rand=random_backbone, verbose=False)
    return m.eval().to(device)


def lpips_distances(
    ref: np.ndarray,
    cand: np.ndarray,
    random_backbone: bool = False,
    batch_size: int = 8,
    device: str | None = None,
    progress: bool = False,
) -> np.ndarray:
    """Per-frame LPIPS distances of two (F, H, W, 3) uint8 videos; inputs scaled to [-1, 1], batched."""
    import torch

    if ref.shape != cand.shape:
        raise ValueError(f"video shapes differ: {ref.shape} vs {cand.shape}")
    dev = _device(device)
    model = _model(random_backbone, dev)
    out = np.empty(len(ref), np.float64)
    starts = range(0, len(ref), batch_size)
    if progress:
        from rich.progress import track

        starts = track(starts, description="LPIPS", transient=True)

    def to_t(a: np.ndarray) -> torch.Tensor:
        t = torch.from_numpy(np.ascontiguousarray(a)).to(dev).permute(0, 3, 1, 2).float()
        return t / 127.5 - 1.0

    with torch.inference_mode():
        for s in starts:
            d = model(to_t(ref[s : s + batch_size]), to_t(cand[s : s + batch_size]))
            out[s : s + batch_size] = d.reshape(-1).double().cpu().numpy()
    return out


def s_lpips(ref: np.ndarray, cand: np.ndarray, random_backbone: bool = False, device: str | None = None,
            **options: Any) -> MetricResult:
    """S_lpips, or `uncomputable` with the reason (and the searched path) when torch or the weights are absent.
    `options`: `lpips_distances`' batch_size and progress."""
    ok, reason, details = availability(random_backbone)
    if not ok:
        return MetricResult.missing("S_lpips", MetricState.uncomputable, reason, details=details)
    d = lpips_distances(ref, cand, random_backbone=random_backbone, device=device, **options)
    sim = np.clip(1.0 - d, 0.0, 1.0)
    details = {**details, "mean_distance": float(d.mean()), "frames": len(d), "device": _device(device)}
    if random_backbone:
        details["backbone"] = "random (pnet_rand=True): plumbing only, not a perceptual score"
    return MetricResult.ok("S_lpips", float(sim.mean()), per_frame=[float(v) for v in sim], details=details)
