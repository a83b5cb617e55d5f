"""Read an X window dump (`xwd -root` of the Xvfb screen) into an RGB numpy array.

Why: the window test's screenshots come from the X server, not from Blender (`screen.screenshot` draws black under
Xvfb's software GL), and XWD is a plain format numpy reads without ImageMagick: a big-endian header of 4-byte
words (header size, ..., width at word 4, height at word 5, bits per pixel at 11, bytes per line at 12, colour-map
entries at 19), the colour map (12 bytes an entry), then the pixels (32-bit BGRX on a 24-bit screen).
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np


def read_xwd(path: Path) -> np.ndarray:
    """The image as an (H, W, 3) uint8 RGB array; raises ValueError on a dump that is not 32-bit ZPixmap."""
    data = Path(path).read_bytes()
    words = struct.unpack(">25I", data[:100])
    header_size, width, height = words[0], words[4], words[5]
    bits_per_pixel, bytes_per_line, ncolors = words[11], words[12], words[19]
    byte_order = words[7]  # 0 LSBFirst, 1 MSBFirst
    if bits_per_pixel != 32:
        raise ValueError(f"{path}: {bits_per_pixel} bits per pixel; only 32 is read")
    start = header_size + 12 * ncolors
    raw = np.frombuffer(data, np.uint8, count=bytes_per_line * height, offset=start)
    px = raw.reshape(height, bytes_per_line)[:, : width * 4].reshape(height, width, 4)
    return px[:, :, [2, 1, 0]].copy() if byte_order == 0 else px[:, :, [1, 2, 3]].copy()


def to_png(xwd_path: Path, png_path: Path, scale: float = 1.0) -> np.ndarray:
    """Write the dump as a PNG (optionally scaled down, for docs/images) and return the full-size RGB array."""
    import cv2

    rgb = read_xwd(xwd_path)
    out = rgb if scale == 1.0 else cv2.resize(rgb, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    cv2.imwrite(str(png_path), cv2.cvtColor(out, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 9])
    return rgb
