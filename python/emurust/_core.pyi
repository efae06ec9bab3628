"""Type stubs of the Rust extension module ``emurust._core``."""

from os import PathLike
from typing import Optional, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str
BUTTONS: list[str]

class EmurustError(Exception): ...
class RomError(EmurustError): ...
class StateError(EmurustError): ...

_RomLike = Union[str, PathLike[str], bytes, bytearray]

class GameBoy:
    def __init__(
        self,
        rom: _RomLike,
        *,
        boot_rom: Optional[_RomLike] = None,
        sound_emulated: bool = True,
        sound_sample_rate: Optional[int] = None,
    ) -> None: ...
    @property
    def sound_emulated(self) -> bool: ...
    @property
    def sound_sample_rate(self) -> int: ...
    def tick(self, frames: int = 1, render: bool = True, sound: bool = True) -> None:
        """Run ``frames`` frames exactly as PyBoy's ``tick(frames, render, sound)``: only the last
        frame is drawn (if ``render``) and has its audio sampled (if ``sound``)."""
    @property
    def frame_count(self) -> int: ...
    @property
    def instructions(self) -> int:
        """Instructions executed since creation (statistics only)."""
    @property
    def cycles(self) -> int:
        """T-cycles since power-on (4.194304 MHz)."""
    @property
    def title(self) -> str: ...
    def registers(self) -> dict[str, int]:
        """a f b c d e h l hl sp pc (ints) and ime, halted (bools)."""
    def set_register(self, name: str, value: int) -> None: ...
    @overload
    def read(self, addr: int) -> int: ...
    @overload
    def read(self, addr: int, length: int) -> bytes: ...
    def write(self, addr: int, value: int) -> None:
        """Write as the CPU would (MBC registers and I/O react)."""
    def read_rom_bank(self, bank: int, addr: int) -> int: ...
    def read_banked(self, bank: int, addr: int) -> int:
        """As PyBoy's ``memory[bank, addr]``: ROM banks at 0x0000-0x7FFF, cartridge RAM banks at 0xA000-0xBFFF."""
    def serial_output(self) -> bytes:
        """Every byte written to the serial data register SB so far."""
    def clear_serial_output(self) -> None: ...
    def button_press(self, name: str) -> None: ...
    def button_release(self, name: str) -> None: ...
    buttons: int
    def save_state(self) -> bytes: ...
    def load_state(self, data: bytes) -> None:
        """Raises StateError for a corrupt or foreign state; the emulator is then unchanged."""
    def save_pyboy_state(self) -> bytes:
        """The machine as a PyBoy 2.8.1 save state, loadable by ``PyBoy.load_state``."""
    def load_pyboy_state(self, state: Union[bytes, str, PathLike[str]]) -> None:
        """Load a PyBoy 2.8.1 ``.state`` (bytes or path) of this ROM; continues exactly as PyBoy.

        Raises StateError for another version, a CGB state, truncated data or a state that does
        not fit this cartridge; the emulator is then unchanged."""
    def cartridge_ram(self) -> bytes: ...
    def set_cartridge_ram(self, data: bytes) -> None: ...
    def battery_save(self) -> Optional[bytes]: ...
    def load_battery_save(self, data: bytes) -> None: ...
    @property
    def screen(self) -> npt.NDArray[np.uint8]:
        """Zero-copy read-only (144, 160, 4) RGBA view, as PyBoy's ``screen.ndarray``."""
    @property
    def screen_grey(self) -> npt.NDArray[np.uint8]:
        """Zero-copy read-only (144, 160) 8-bit grey view."""
    @property
    def screen_shade(self) -> npt.NDArray[np.uint8]:
        """Zero-copy read-only (144, 160) view of shade indices 0-3."""
    def screen_rgba(self) -> npt.NDArray[np.uint8]:
        """A copy of ``screen``."""
    def screen_shades(self) -> npt.NDArray[np.uint8]:
        """A copy of ``screen_shade``."""
    def sound_samples(self) -> npt.NDArray[np.int8]:
        """Audio of the last sampled frame, (n, 2) int8 stereo, as PyBoy's ``sound.ndarray``.
        Raises :class:`EmurustError` without sound emulation (as PyBoy does)."""
    def pc_trace(self) -> list[int]:
        """Addresses of the last 32 instructions executed, oldest first."""

def run_vector_file(path: Union[str, PathLike[str]], max_failures: int = 10) -> dict: ...
