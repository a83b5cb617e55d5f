"""Pure computation of the video metrics (never bpy): decoding, SSIM, LPIPS, motion masks, aggregates, result types."""
