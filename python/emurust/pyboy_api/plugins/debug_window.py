"""PyBoy 2.8.1's debug windows (``PyBoy(rom, debug=True)``) for ``emurust.PyBoy``.

The windows PyBoy opens, with its titles, sizes, scales and places, each redrawn after every
``tick()`` from what the emulator holds: "Background" and "Window" (the 32x32-tile maps at
9800/9C00 as LCDC selects them, with the screen's viewport outlined on the background),
"Sprite View" (the sprites alone, where the screen shows them), "Sprite Data" (the 40 sprites'
tiles), "Memory" (a hex view of 0x0000 on), "Game Area" (the game wrapper's game area as tiles)
and "Tile Data0" (and "Tile Data1" on a Game Boy Color: the 384 tiles of each VRAM bank).
What PyBoy's windows do on a mouse click (marking tiles, scrolling memory) emurust's don't
(docs/pyboy_api.md).
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..constants import COLS, ROWS, TILES
from ..log import get_logger
from ..utils import PyBoyAssertException

logger = get_logger("pyboy.plugins.debug")

try:
    import sdl2
    import sdl2.ext
except ImportError:
    sdl2 = None

_BITS = np.array([7, 6, 5, 4, 3, 2, 1, 0], dtype=np.uint8)


def decode_tiles(vram: bytes, count: int = TILES) -> np.ndarray:
    """(count, 8, 8) colour numbers 0-3 of the tiles at the start of a VRAM bank."""
    raw = np.frombuffer(vram, dtype=np.uint8, count=count * 16).reshape(count, 8, 2)
    lo = (raw[:, :, 0, None] >> _BITS) & 1
    hi = (raw[:, :, 1, None] >> _BITS) & 1
    return (lo | (hi << 1)).astype(np.uint8)


class _SdlView:
    """One window showing an RGBA array of (height, width) pixels, scaled."""

    def __init__(self, title: str, width: int, height: int, scale: int, x: int, y: int):
        self.title, self.width, self.height, self.scale = title, width, height, scale
        self.window = sdl2.SDL_CreateWindow(title.encode(), x, y, width * scale, height * scale, sdl2.SDL_WINDOW_RESIZABLE)
        self.renderer = sdl2.SDL_CreateRenderer(self.window, -1, sdl2.SDL_RENDERER_ACCELERATED) or sdl2.SDL_CreateRenderer(
            self.window, -1, sdl2.SDL_RENDERER_SOFTWARE
        )
        sdl2.SDL_RenderSetLogicalSize(self.renderer, width, height)
        self.texture = sdl2.SDL_CreateTexture(self.renderer, sdl2.SDL_PIXELFORMAT_ABGR8888, sdl2.SDL_TEXTUREACCESS_STATIC, width, height)
        self.pixels = np.zeros((height, width, 4), dtype=np.uint8)
        self.pixels[:, :, 3] = 0xFF
        sdl2.SDL_ShowWindow(self.window)

    def show(self):
        sdl2.SDL_UpdateTexture(self.texture, None, self.pixels.ctypes.data_as(ctypes.c_void_p), self.width * 4)
        sdl2.SDL_RenderCopy(self.renderer, self.texture, None, None)
        sdl2.SDL_RenderPresent(self.renderer)

    def set_title(self, title: str):
        sdl2.SDL_SetWindowTitle(self.window, title.encode("utf8"))

    def stop(self):
        sdl2.SDL_DestroyWindow(self.window)


class DebugWindows:
    """``handle_events``/``post_tick``/``stop`` like the main window; see the module docstring."""

    def __init__(self, pyboy):
        if sdl2 is None:
            logger.error("Failed to import sdl2, needed for debug window")
            self.views = {}
            return
        self.pyboy = pyboy
        self._own_event_pump = pyboy._window is None  # the SDL2 main window pumps them otherwise
        if sdl2.SDL_InitSubSystem(sdl2.SDL_INIT_VIDEO) < 0:
            raise PyBoyAssertException(f"SDL_InitSubSystem video failed: {sdl2.SDL_GetError().decode()}")
        tile_rows = (TILES * 8 // 128) * 8
        layout = [
            ("Background", 256, 256, 2, 0, 0),
            ("Window", 256, 256, 2, 512, 0),
            ("Sprite View", COLS, ROWS, 2, 1024, 0),
            ("Sprite Data", 80, 64, 3, 1024, ROWS * 2 + 68),
            ("Memory", 480, 576, 1, 1344, 0),
            ("Game Area", COLS, ROWS, 3, 1824, 0),
            ("Tile Data0", 128, tile_rows, 3, 0, 256 * 2 + 128),
        ]
        if pyboy._cgb:
            layout.append(("Tile Data1", 128, tile_rows, 3, 512, 256 * 2 + 128))
        self.views = {title: _SdlView(*args) for title, *args in [(t, t, w, h, s, x, y) for t, w, h, s, x, y in layout]}
        self._font = None

    def handle_events(self, events):
        if self.views and self._own_event_pump:
            for event in sdl2.ext.get_events():
                if event.type == sdl2.SDL_QUIT:
                    from ..utils import WindowEvent

                    events.append(WindowEvent(WindowEvent.QUIT))
        return events

    # ------------------------------------------------------------------ drawing

    def _palette(self) -> np.ndarray:
        """RGBA of colour numbers 0-3 through BGP, as the screen shows them (DMG)."""
        bgp = self.pyboy._host.read_cpu(0xFF47)
        return self.pyboy._palette_rgba[[(bgp >> (2 * c)) & 3 for c in range(4)]]

    def _tiles(self, bank: int) -> np.ndarray:
        gb = self.pyboy._gb
        host = self.pyboy._host
        vram = gb.vram_bank1() if bank else bytes(host.vram_byte(i) for i in range(TILES * 16))
        return decode_tiles(vram)

    def _map_pixels(self, tiles: np.ndarray, base: int, signed: bool) -> np.ndarray:
        host = self.pyboy._host
        ids = np.array([host.vram_byte(base - 0x8000 + i) for i in range(1024)], dtype=np.int32)
        if signed:
            ids = ((ids ^ 0x80) - 128) + 256
        return tiles[ids].reshape(32, 32, 8, 8).transpose(0, 2, 1, 3).reshape(256, 256)

    def post_tick(self):
        if not self.views:
            return
        host = self.pyboy._host
        palette = self._palette()
        tiles0 = self._tiles(0)
        lcdc = host.read_cpu(0xFF40)
        signed = not lcdc & 0x10
        bg = self._map_pixels(tiles0, 0x9C00 if lcdc & 0x08 else 0x9800, signed)
        win = self._map_pixels(tiles0, 0x9C00 if lcdc & 0x40 else 0x9800, signed)
        self.views["Background"].pixels[:] = palette[bg]
        self._outline_viewport(self.views["Background"].pixels, host.read_cpu(0xFF43), host.read_cpu(0xFF42))
        self.views["Window"].pixels[:] = palette[win]
        data = " [HIGH DATA (SIGNED) 0x8800-0x97FF]" if signed else " [LOW DATA (UNSIGNED) 0x8000-0x8FFF]"
        for title, high, which in (("Background", lcdc & 0x08, "[Background]"), ("Window", lcdc & 0x40, "[Window]")):
            where = " [HIGH MAP 0x9C00-0x9FFF]" if high else " [LOW MAP 0x9800-0x9BFF]"
            self.views[title].set_title(f"{title}{where}{data} {which}")
        self.views["Game Area"].set_title("Game Area [Mapping]")
        self._draw_sprites(tiles0, palette)
        self._draw_tile_data("Tile Data0", tiles0, palette)
        if "Tile Data1" in self.views:
            self._draw_tile_data("Tile Data1", self._tiles(1), palette)
        self._draw_memory()
        self._draw_game_area(tiles0, palette)
        for view in self.views.values():
            view.show()

    @staticmethod
    def _outline_viewport(pixels, scx, scy):
        red = np.array([0xFF, 0, 0, 0xFF], dtype=np.uint8)
        xs = (scx + np.arange(COLS)) % 256
        ys = (scy + np.arange(ROWS)) % 256
        pixels[ys[0], xs] = red
        pixels[ys[-1], xs] = red
        pixels[ys, xs[0]] = red
        pixels[ys, xs[-1]] = red

    def _draw_tile_data(self, title, tiles, palette):
        view = self.views[title]
        grid = tiles.reshape(TILES // 16, 16, 8, 8).transpose(0, 2, 1, 3).reshape(TILES // 16 * 8, 128)
        view.pixels[: grid.shape[0]] = palette[grid]

    def _draw_sprites(self, tiles, palette):
        host = self.pyboy._host
        oam = bytes(host.read_cpu(0xFE00 + i) for i in range(160))
        tall = bool(host.read_cpu(0xFF40) & 0x04)
        scene = self.views["Sprite View"].pixels
        data = self.views["Sprite Data"].pixels
        scene[:, :, :3] = 0xFF
        data[:, :, :3] = 0xFF
        for n in range(40):
            y, x, tile, attr = oam[4 * n : 4 * n + 4]
            ids = [tile & 0xFE, tile | 1] if tall else [tile]
            sprite = np.concatenate([tiles[i] for i in ids])
            if attr & 0x20:
                sprite = sprite[:, ::-1]
            if attr & 0x40:
                sprite = sprite[::-1]
            col, row = n % 10, n // 10
            data[row * 16 : row * 16 + sprite.shape[0], col * 8 : col * 8 + 8] = palette[sprite]
            for dy in range(sprite.shape[0]):
                sy = y - 16 + dy
                if not 0 <= sy < ROWS:
                    continue
                for dx in range(8):
                    sx = x - 8 + dx
                    if 0 <= sx < COLS and sprite[dy, dx]:
                        scene[sy, sx] = palette[sprite[dy, dx]]

    def _draw_memory(self):
        """36 lines of 16 bytes from 0x0000, as hex, drawn with Pillow's built-in font."""
        try:
            from PIL import Image, ImageDraw
        except ImportError:
            return
        host = self.pyboy._host
        view = self.views["Memory"]
        img = Image.new("RGBA", (view.width, view.height), (255, 255, 255, 255))
        draw = ImageDraw.Draw(img)
        for line in range(36):
            addr = line * 16
            values = " ".join(f"{host.read_cpu(addr + i):02X}" for i in range(16))
            draw.text((4, line * 16 + 2), f"{addr:04X}: {values}", fill=(0, 0, 0, 255))
        view.pixels[:] = np.asarray(img)

    def _draw_game_area(self, tiles, palette):
        view = self.views["Game Area"]
        view.pixels[:, :, :3] = 0xFF
        try:
            area = np.asarray(self.pyboy.game_area())
        except Exception:  # a wrapper without a game area: the window stays blank
            return
        h, w = min(area.shape[0], ROWS // 8), min(area.shape[1], COLS // 8)
        ids = np.clip(area[:h, :w], 0, TILES - 1)
        view.pixels[: h * 8, : w * 8] = palette[tiles[ids].transpose(0, 2, 1, 3).reshape(h * 8, w * 8)]

    def stop(self):
        for view in self.views.values():
            view.stop()
        self.views = {}
