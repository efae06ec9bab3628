"""Minimal PNG writer (no Pillow needed): RGB or RGBA uint8 arrays."""

from __future__ import annotations

import struct
import zlib

import numpy as np


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_png(path: str, image: np.ndarray) -> None:
    img = np.ascontiguousarray(image, dtype=np.uint8)
    if img.ndim != 3 or img.shape[2] not in (3, 4):
        raise ValueError(f"expected an (H, W, 3|4) image, got shape {img.shape}")
    h, w, c = img.shape
    raw = b"".join(b"\x00" + img[y].tobytes() for y in range(h))
    color_type = 6 if c == 4 else 2
    data = b"\x89PNG\r\n\x1a\n"
    data += _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0))
    data += _chunk(b"IDAT", zlib.compress(raw, 9))
    data += _chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)


def side_by_side(ours: np.ndarray, ref: np.ndarray, scale: int = 2) -> np.ndarray:
    """emurust | PyBoy | difference (differing pixels in red over a dimmed reference)."""
    a = ours[..., :3].astype(np.uint8)
    b = ref[..., :3].astype(np.uint8)
    diff = (b // 3).copy()
    mask = np.any(ours != ref, axis=-1)
    diff[mask] = (255, 0, 0)
    gap = np.full((a.shape[0], 4, 3), 128, np.uint8)
    out = np.concatenate([a, gap, b, gap, diff], axis=1)
    return out.repeat(scale, axis=0).repeat(scale, axis=1)
