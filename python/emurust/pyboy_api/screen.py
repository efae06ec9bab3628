"""``PyBoy.screen``: the picture in PyBoy 2.8.1's formats (RGBA, 144 rows of 160 pixels)."""

from __future__ import annotations


from . import utils
from .constants import COLS, ROWS

try:
    from PIL import Image
except ImportError:  # Pillow is optional, as in PyBoy
    Image = None


class Screen:
    """The screen buffer, as ``pyboy.api.screen.Screen``.

    ``ndarray`` is one (144, 160, 4) uint8 RGBA array for the emulator's lifetime: it shows
    the latest drawn frame (emurust's is read-only). ``image`` is a PIL image over the same
    buffer when Pillow is installed.
    """

    def __init__(self, pyboy):
        self._pyboy = pyboy
        self._attach(pyboy._screen_array)

    def _attach(self, array):
        self.ndarray = array
        self.raw_buffer = memoryview(self.ndarray).cast("B").cast("I", shape=(ROWS, COLS))
        self.raw_buffer_dims = (ROWS, COLS)
        self.raw_buffer_format = "RGBA"
        if Image is None:
            self.image = utils.PillowImportError()
        else:
            self._set_image()

    def _set_image(self):
        self.image = Image.frombuffer(self.raw_buffer_format, (COLS, ROWS), self.ndarray, "raw", "RGBA", 0, 1)

    @property
    def tilemap_position_list(self):
        """Per screen line ``[SCX, SCY, WX - 7, WY]`` as the line was drawn; all zeros while
        the LCD is off."""
        return self._pyboy._host.tilemap_position_list()

    def get_tilemap_position(self):
        """``((SCX, SCY), (WX - 7, WY))`` now."""
        gb = self._pyboy._gb
        return ((gb.read(0xFF43), gb.read(0xFF42)), (gb.read(0xFF4B) - 7, gb.read(0xFF4A)))
