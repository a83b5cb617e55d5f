"""Pure computation of the video metrics (never bpy): decoding, SSIM, LPIPS, motion masks, aggregates, result types."""

__all__ = [
    "aggregate",
    "lpips_metric",
    "motion",
    "plots",
    "results",
    "ssim",
    "video",
]  # the modules other packages may import
