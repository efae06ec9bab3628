"""Animated GIFs of Game Boy frames: Pillow when it is installed, else a small GIF89a writer of
our own (global palette of at most 256 colours, LZW, looping).

    from emurust.gif import write_gif
    write_gif("play.gif", frames, fps=7.5)      # frames: (H, W) grey or (H, W, 3) RGB uint8 arrays
"""

from __future__ import annotations

import struct
from typing import Sequence

import numpy as np

__all__ = ["write_gif", "encode_gif", "read_gif_frames"]


def _as_rgb(frames: Sequence[np.ndarray]) -> np.ndarray:
    if len(frames) == 0:
        raise ValueError("write_gif needs at least one frame")
    out = []
    for f in frames:
        f = np.asarray(f)
        if f.dtype != np.uint8:
            raise TypeError(f"frames must be uint8, got {f.dtype}")
        if f.ndim == 3 and f.shape[0] == 1:  # (1, H, W) channel-first grey
            f = f[0]
        if f.ndim == 2:
            f = np.repeat(f[..., None], 3, axis=2)
        elif f.ndim == 3 and f.shape[2] == 4:
            f = f[..., :3]
        if f.ndim != 3 or f.shape[2] != 3:
            raise ValueError(f"frames must be (H, W), (H, W, 3) or (H, W, 4), got {np.asarray(f).shape}")
        out.append(f)
    shapes = {f.shape for f in out}
    if len(shapes) != 1:
        raise ValueError(f"all frames must have the same shape, got {sorted(shapes)}")
    return np.stack(out)


def _lzw(indices: np.ndarray, min_code_size: int) -> bytes:
    """GIF's variable-width LZW of a sequence of palette indices, packed LSB first."""
    clear, end = 1 << min_code_size, (1 << min_code_size) + 1
    out = bytearray()
    bits = nbits = 0
    code_size = min_code_size + 1

    def emit(code: int) -> None:
        nonlocal bits, nbits
        bits |= code << nbits
        nbits += code_size
        while nbits >= 8:
            out.append(bits & 0xFF)
            bits >>= 8
            nbits -= 8

    table: dict = {}
    next_code = end + 1
    emit(clear)
    data = indices.tobytes()
    prefix = data[0]
    for ch in data[1:]:
        key = (prefix, ch)
        code = table.get(key)
        if code is not None:
            prefix = code
            continue
        emit(prefix)
        if next_code < 4096:
            table[key] = next_code
            next_code += 1
            if next_code > (1 << code_size) and code_size < 12:
                code_size += 1
        else:  # table full: start again
            emit(clear)
            table.clear()
            next_code = end + 1
            code_size = min_code_size + 1
        prefix = ch
    emit(prefix)
    emit(end)
    if nbits:
        out.append(bits & 0xFF)
    return bytes(out)


def encode_gif(frames: Sequence[np.ndarray], fps: float = 10.0, loop: int = 0) -> bytes:
    """A looping GIF89a of `frames` at `fps` (delays are whole hundredths of a second)."""
    rgb = _as_rgb(frames)
    n, h, w, _ = rgb.shape
    packed = (rgb[..., 0].astype(np.uint32) << 16) | (rgb[..., 1].astype(np.uint32) << 8) | rgb[..., 2]
    colours, inverse = np.unique(packed, return_inverse=True)
    if len(colours) > 256:
        raise ValueError(f"frames have {len(colours)} colours; a GIF palette holds 256")
    inverse = inverse.reshape(n, h, w).astype(np.uint8)
    bits = max(1, int(len(colours) - 1).bit_length())  # palette of 2**bits entries
    palette = np.zeros((1 << bits, 3), np.uint8)
    palette[: len(colours), 0] = colours >> 16
    palette[: len(colours), 1] = (colours >> 8) & 0xFF
    palette[: len(colours), 2] = colours & 0xFF
    delay = max(1, int(round(100.0 / fps)))
    out = bytearray(b"GIF89a")
    out += struct.pack("<HHBBB", w, h, 0x80 | (bits - 1) << 4 | (bits - 1), 0, 0)
    out += palette.tobytes()
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", loop) + b"\x00"
    min_code_size = max(2, bits)
    for i in range(n):
        out += b"\x21\xf9\x04\x04" + struct.pack("<H", delay) + b"\x00\x00"  # keep the frame, delay
        out += b"\x2c" + struct.pack("<HHHHB", 0, 0, w, h, 0)
        data = _lzw(inverse[i].reshape(-1), min_code_size)
        out.append(min_code_size)
        for k in range(0, len(data), 255):
            chunk = data[k : k + 255]
            out.append(len(chunk))
            out += chunk
        out.append(0)
    out.append(0x3B)
    return bytes(out)


def write_gif(path: str, frames: Sequence[np.ndarray], fps: float = 10.0, *, use_pillow: bool | None = None) -> str:
    """Write `frames` as a looping animated GIF; returns the writer used ("pillow" or "emurust").
    ``use_pillow=None`` uses Pillow when it can be imported."""
    rgb = _as_rgb(frames)
    if use_pillow is None:
        try:
            import PIL.Image  # noqa: F401

            use_pillow = True
        except ImportError:
            use_pillow = False
    if use_pillow:
        from PIL import Image

        images = [Image.fromarray(f, "RGB") for f in rgb]
        images[0].save(path, save_all=True, append_images=images[1:], duration=max(10, int(round(1000.0 / fps))),
                       loop=0, optimize=False, disposal=1)
        return "pillow"
    with open(path, "wb") as f:
        f.write(encode_gif(list(rgb), fps))
    return "emurust"


def _lzw_decode(data: bytes, min_code_size: int, count: int) -> np.ndarray:
    clear, end = 1 << min_code_size, (1 << min_code_size) + 1
    code_size = min_code_size + 1
    table = [bytes([i]) for i in range(clear)] + [b"", b""]
    out = bytearray()
    prev = None
    pos = 0
    nbits = len(data) * 8
    bitbuf = int.from_bytes(data, "little")
    while pos + code_size <= nbits:
        code = (bitbuf >> pos) & ((1 << code_size) - 1)
        pos += code_size
        if code == clear:
            table = table[: end + 1]
            code_size = min_code_size + 1
            prev = None
            continue
        if code == end:
            break
        if prev is None:
            entry = table[code]
        elif code < len(table):
            entry = table[code]
            table.append(prev + entry[:1])
        elif code == len(table):
            entry = prev + prev[:1]
            table.append(entry)
        else:
            raise ValueError(f"bad LZW code {code}")
        out += entry
        prev = entry
        if len(table) == (1 << code_size) and code_size < 12:
            code_size += 1
    if len(out) < count:
        raise ValueError(f"LZW data too short: {len(out)} of {count} pixels")
    return np.frombuffer(bytes(out[:count]), np.uint8)


def read_gif_frames(data: bytes) -> tuple[list[np.ndarray], list[int]]:
    """Decode a GIF (global or local palettes, no interlacing) into full (H, W, 3) RGB frames and
    their delays in hundredths of a second. Enough to check what :func:`write_gif` wrote."""
    if data[:6] not in (b"GIF87a", b"GIF89a"):
        raise ValueError("not a GIF")
    w, h, flags, _, _ = struct.unpack("<HHBBB", data[6:13])
    pos = 13
    gpal = None
    if flags & 0x80:
        size = 3 << ((flags & 7) + 1)
        gpal = np.frombuffer(data[pos : pos + size], np.uint8).reshape(-1, 3)
        pos += size
    canvas = np.zeros((h, w, 3), np.uint8)
    frames, delays = [], []
    delay = 0
    while pos < len(data):
        b = data[pos]
        pos += 1
        if b == 0x3B:
            break
        if b == 0x21:
            label = data[pos]
            pos += 1
            block = bytearray()
            while data[pos]:
                block += data[pos + 1 : pos + 1 + data[pos]]
                pos += 1 + data[pos]
            pos += 1
            if label == 0xF9:
                delay = struct.unpack("<H", bytes(block[1:3]))[0]
            continue
        if b != 0x2C:
            raise ValueError(f"unexpected GIF block {b:#x} at {pos - 1}")
        x, y, fw, fh, fflags = struct.unpack("<HHHHB", data[pos : pos + 9])
        pos += 9
        pal = gpal
        if fflags & 0x80:
            size = 3 << ((fflags & 7) + 1)
            pal = np.frombuffer(data[pos : pos + size], np.uint8).reshape(-1, 3)
            pos += size
        if fflags & 0x40:
            raise ValueError("interlaced GIFs are not supported")
        if pal is None:
            raise ValueError("GIF frame without a palette")
        min_code_size = data[pos]
        pos += 1
        block = bytearray()
        while data[pos]:
            block += data[pos + 1 : pos + 1 + data[pos]]
            pos += 1 + data[pos]
        pos += 1
        idx = _lzw_decode(bytes(block), min_code_size, fw * fh).reshape(fh, fw)
        canvas[y : y + fh, x : x + fw] = pal[idx]
        frames.append(canvas.copy())
        delays.append(delay)
    return frames, delays
