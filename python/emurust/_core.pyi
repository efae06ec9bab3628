"""Type stubs of the Rust extension module ``emurust._core``."""

from os import PathLike
from typing import Any, Optional, Sequence, Union, overload

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
        cgb: Optional[bool] = None,
        sound_emulated: bool = True,
        sound_sample_rate: Optional[int] = None,
    ) -> None: ...
    @property
    def cgb(self) -> bool:
        """Game Boy Color hardware (chosen as PyBoy 2.8.1 chooses it; see ``emurust.GameBoy``)."""
    @property
    def cgb_mode(self) -> bool:
        """Game Boy Color mode: CGB hardware running a CGB cartridge (PyBoy's ``cgb_mode``)."""
    def vram_bank1(self) -> bytes:
        """Game Boy Color: VRAM bank 1 (8 KiB)."""
    def wram_banks(self) -> bytes:
        """Game Boy Color: the 32 KiB of work RAM, bank 0 first."""
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
    def idle_loop_fast_forward(self) -> bool:
        """The idle-loop and busy-loop fast-forwards' switch (on by default; same results either way)."""
    @idle_loop_fast_forward.setter
    def idle_loop_fast_forward(self, on: bool) -> None: ...
    @property
    def wait_loop_fast_paths(self) -> bool:
        """Every wait-loop fast path's switch, the short delay/fill/copy loops' among them (on by default; same results either way)."""
    @wait_loop_fast_paths.setter
    def wait_loop_fast_paths(self, on: bool) -> None: ...
    def wait_loop_stats(self) -> dict[str, int]:
        """How often each wait-loop fast path ran (statistics)."""
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
        """As PyBoy's ``memory[bank, addr]``: ROM banks at 0x0000-0x7FFF, VRAM banks 0-1 at 0x8000-0x9FFF,
        cartridge RAM banks at 0xA000-0xBFFF, work RAM banks 0-7 (4 KiB each) at 0xC000-0xDFFF."""
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

        Raises StateError for another version, a state of other hardware (DMG vs Game Boy Color),
        truncated data or a state that does not fit this cartridge; the emulator is then unchanged."""
    def cartridge_ram(self) -> bytes: ...
    def set_cartridge_ram(self, data: bytes) -> None: ...
    def battery_save(self) -> Optional[bytes]: ...
    def load_battery_save(self, data: bytes) -> None: ...
    @property
    def screen(self) -> npt.NDArray[np.uint8]:
        """Zero-copy read-only (144, 160, 4) RGBA view, as PyBoy's ``screen.ndarray``."""
    @property
    def screen_grey(self) -> npt.NDArray[np.uint8]:
        """Zero-copy read-only (144, 160) 8-bit grey view: on the DMG the red channel of ``screen``;
        on Game Boy Color hardware ``numpy.asarray(pyboy.screen.image.convert("L"))`` (PIL's luma)."""
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


class Host:
    """The hooks verification and the PyBoy-compatible API use on an emulator, kept off the
    user's GameBoy: ``Host(gb)`` reaches the same machine as ``gb``."""
    def __init__(self, gb: GameBoy) -> None: ...
    @property
    def gameboy(self) -> GameBoy: ...
    def set_pc_trace(self, on: bool) -> None:
        """Trace every instruction's address from now on (off by default: it costs time)."""
    def pc_trace(self) -> list[int]:
        """Addresses of the last instructions executed (up to 32, traced since
        ``set_pc_trace(True)``), oldest first; ValueError while the trace is off."""
    def ld_b_b(self) -> Optional[dict[str, int]]:
        """LD B,B (0x40), the test-ROM breakpoint: None before the first; else "count" (so far),
        "pc" of the first and the registers ("a".."l", "sp") when it executed."""

    def register(self, name: str) -> int: ...
    def read_cpu(self, addr: int) -> int:
        """A read as PyBoy's memory[addr] does it: a CPU read now, with its side effects."""
    def read_cpu_range(self, start: int, stop: int, step: int) -> list[int]: ...
    def set_breakpoints_enabled(self, on: bool) -> None:
        """0xDB as PyBoy's breakpoint opcode (only with begin_frame/run_to_break/single_step)."""
    def begin_frame(self, render: bool, sound: bool) -> None: ...
    def run_to_break(self) -> bool:
        """Run the frame to its end (True) or to a breakpoint (False)."""
    def single_step(self) -> bool: ...
    @property
    def frame_done(self) -> bool: ...
    def count_frame(self) -> None: ...
    def boot_rom_byte(self, i: int) -> Optional[int]: ...
    def set_boot_rom_byte(self, i: int, value: int) -> None: ...
    @property
    def boot_rom_mapped(self) -> bool: ...
    def override_rom(self, bank: int, offset: int, value: int) -> None: ...
    def vram_byte(self, i: int) -> int: ...
    def set_vram_byte(self, i: int, value: int) -> None: ...
    def set_vram_bank_byte(self, bank: int, i: int, value: int) -> None: ...
    def set_rtc_lock(self, locked: bool) -> None: ...
    def set_wram_bank_byte(self, bank: int, i: int, value: int) -> None: ...
    def wram_byte(self, i: int) -> int: ...
    def set_wram_byte(self, i: int, value: int) -> None: ...
    def cart_ram_byte(self, bank: int, offset: int) -> Optional[int]: ...
    def set_cart_ram_byte(self, bank: int, offset: int, value: int) -> None: ...
    def cartridge_info(self) -> dict[str, int]: ...
    def selected_banks(self) -> tuple[int, int]: ...
    def set_div(self, value: int) -> None: ...
    def line_parameters(self) -> list[bytes]: ...
    def sound_buffer(self) -> tuple[npt.NDArray[np.int8], int]: ...
    def pyboy_state_layout(self) -> tuple[int, int]: ...
    def tilemap_read(
        self, lcdc_map_bit: int, xs: list[int], ys: list[int], refresh: bool, map_offset: int, signed: bool
    ) -> tuple[list[list[int]], int, bool]:
        """PyBoy tile identifiers at map coordinates (0-31), and the map base and signedness."""
    def oam_read(self) -> tuple[bytes, int]:
        """OAM (160 bytes) and LCDC as PyBoy's sprite objects read them."""
    def tilemap_tile(self, lcdc_map_bit: int, x: int, y: int) -> tuple[int, int, bool]:
        """PyBoy's reads for tilemap[x, y]: the tile identifier, the map base and signedness."""
    def oam_entry(self, index: int) -> tuple[int, int, int, int, int]:
        """PyBoy's reads for get_sprite(index): four OAM bytes, then LCDC."""
    def tilemap_position_list(self) -> list[list[int]]:
        """PyBoy's screen.tilemap_position_list: per line [SCX, SCY, WX - 7, WY] as drawn."""


class PyBoyMemoryView:
    """``emurust.PyBoy.memory``: PyBoy's ``memory[...]`` forms with the common ones (an address,
    ``[bank, addr]``, slices) answered in Rust; the rest, and every error, by ``fallback`` (the
    Python view), so the messages stay PyBoy's."""
    def __init__(self, gb: GameBoy, fallback: Any, rom_banks: int, ram_banks: int) -> None: ...
    def __getitem__(self, key: Any) -> Any: ...
    def __setitem__(self, key: Any, value: Any) -> None: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Any: ...


class PyBoyRegisterFile:
    """``emurust.PyBoy.register_file``: CPU registers A, F, B, C, D, E, HL, SP, PC. Writes are
    masked to the register's width (F keeps its upper four bits)."""
    def __init__(self, pyboy: Any) -> None: ...
    A: int
    F: int
    B: int
    C: int
    D: int
    E: int
    HL: int
    SP: int
    PC: int


class TileMapBase:
    """The base of ``emurust.pyboy_api.tilemap.TileMap``: ``tilemap[x, y]`` answered in Rust."""
    map_offset: int
    signed_tile_data: bool
    _use_tile_objects: bool
    def _attach(self, gb: GameBoy, pyboy: Any, lcdc_bit: int) -> None: ...


def _send_input_method(cls: type, event_objects: list) -> Any:
    """The ``send_input`` method descriptor for ``cls`` (the PyBoy facade's hot path)."""
    ...


def run_vector_file(path: Union[str, PathLike[str]], max_failures: int = 10) -> dict: ...
def read_user_file(path: Union[str, PathLike[str]], what: str = "file") -> bytes:
    """The whole file, as the emulator reads ROMs and states: OSError subclasses as open() raises
    them, ValueError past 64 MiB (/dev/zero), FIFOs and devices read without blocking Ctrl-C."""
def set_num_threads(n: int) -> None:
    """Size of the thread pool that batches created later share (1-1024)."""
def get_num_threads() -> int:
    """Size of the shared thread pool: set_num_threads, else EMURUST_NUM_THREADS, else the CPUs."""

def default_actions() -> list[list[str]]:
    """The default discrete action set as lists of button names (no-op, each button, A/B with
    left/right)."""
def _postboot_snapshot(boot_rom: bytes, cgb: Optional[bool] = None) -> tuple[bytes, int]:
    """(state after `boot_rom` unmaps itself, the cycle its last frame started at); internal."""

_Action = Union[int, str, list[str]]
_Spec = tuple

class Batch:
    """N Game Boys running one ROM, stepped together in one call (GIL released, shared Rayon
    pool); see ``emurust.envs`` for the documented API."""

    def __init__(
        self,
        rom: _RomLike,
        num_envs: int,
        *,
        actions: Optional[list[_Action]] = None,
        frame_skip: int = 24,
        press_frames: int = 8,
        obs: Optional[Union[str, list[str]]] = None,
        ram: Optional[list[tuple[int, int]]] = None,
        # (addr, type, weight, delta) or a dict as emurust.rewards.parse_reward writes them
        reward: Optional[Sequence[Union[tuple[int, str, float, bool], dict[str, Any]]]] = None,
        # (addr, type, op, value), or (addr, type, op, value, group): all of a group must hold
        terminate: Optional[Sequence[Union[tuple[int, str, str, float], tuple[int, str, str, float, int]]]] = None,
        max_episode_steps: int = 0,
        noop_max: int = 0,
        reset_script: Optional[list[tuple[_Action, int]]] = None,
        start_state: Optional[Union[bytes, str, PathLike[str]]] = None,
        num_threads: Optional[int] = None,
        cgb: Optional[bool] = None,
        sound_emulated: bool = True,
        sound_sample_rate: Optional[int] = None,
        same_step_reset: bool = False,
        scheduler: Optional[str] = None,
    ) -> None: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def num_actions(self) -> int: ...
    @property
    def action_masks(self) -> list[int]:
        """Button mask of each action (bit 0 right, 1 left, 2 up, 3 down, 4 a, 5 b, 6 select, 7 start)."""
    @property
    def num_threads(self) -> int: ...
    @property
    def scheduler(self) -> str:
        """How steps are spread over the threads: "gang" or "rayon" (docs/scheduling.md)."""
    @property
    def frame_skip(self) -> int: ...
    @property
    def press_frames(self) -> int: ...
    @property
    def max_episode_steps(self) -> int: ...
    @property
    def obs_names(self) -> list[str]: ...
    @property
    def obs_shapes(self) -> dict[str, tuple[int, ...]]: ...
    @property
    def buffers(self) -> dict[str, np.ndarray]:
        """Read-only views of the outputs (a new dict each time): one per observation, "ram",
        "rewards", "terminated", "truncated"; overwritten by every step/reset."""
    @property
    def episode_steps(self) -> list[int]: ...
    @property
    def frame_counts(self) -> list[int]: ...
    def seed(self, seed: Union[int, list[Optional[int]]]) -> None: ...
    def reset(self, mask: Optional[npt.ArrayLike] = None) -> None: ...
    def step(self, actions: npt.ArrayLike, reset_mask: Optional[npt.ArrayLike] = None) -> None: ...
    def set_start_state(self, state: Optional[Union[bytes, str, PathLike[str]]], env: Optional[int] = None) -> None: ...
    def start_state(self, env: int) -> bytes: ...
    def save_state(self, env: int) -> bytes: ...
    def load_state(self, env: int, data: Union[bytes, str, PathLike[str]]) -> None: ...
    def read(self, env: int, addr: int, length: int = 1) -> bytes: ...
    def screen_rgb(self, env: int) -> npt.NDArray[np.uint8]: ...

class PongBatch:
    """N games of PufferLib's Pong (crates/emurust-pong), stepped in parallel with the GIL released."""
    def __init__(
        self,
        num_envs: int,
        *,
        width: float = 500.0,
        height: float = 640.0,
        paddle_width: float = 20.0,
        paddle_height: float = 70.0,
        ball_width: float = 32.0,
        ball_height: float = 32.0,
        paddle_speed: float = 8.0,
        ball_initial_speed_x: float = 10.0,
        ball_initial_speed_y: float = 1.0,
        ball_max_speed_y: float = 13.0,
        ball_speed_y_increment: float = 3.0,
        max_score: int = 21,
        frameskip: int = 1,
        max_episode_steps: int = 0,
        num_threads: Optional[int] = None,
        scheduler: Optional[str] = None,
    ) -> None: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def num_threads(self) -> int: ...
    @property
    def scheduler(self) -> str: ...
    @property
    def frameskip(self) -> int: ...
    def seed(self, seeds: list[Optional[int]]) -> None: ...
    def reset(self, obs: npt.NDArray[np.float32], mask: Optional[npt.NDArray[np.bool_]] = None) -> None: ...
    def step(
        self,
        actions: npt.NDArray[np.int64],
        obs: npt.NDArray[np.float32],
        rewards: npt.NDArray[np.float32],
        terminated: npt.NDArray[np.bool_],
        truncated: npt.NDArray[np.bool_],
        final_obs: npt.NDArray[np.float32],
    ) -> None: ...
    def run_steps(self, actions: npt.NDArray[np.int32], steps: int) -> float: ...
    def get_state(self, i: int) -> dict: ...
    def set_state(self, i: int, state: dict) -> None: ...
    def last_episode(self, i: int) -> tuple[float, float, float]: ...
    def scores(self, i: int) -> tuple[int, int]: ...


class RedV2Batch:
    """PokemonRedExperiments v2's environment for N emulators (see ``emurust.pokered_v2``).
    ``out``: (screens, health, level, badges, events, map, recent_actions, rewards, truncated),
    C-contiguous arrays with N rows, written in place."""

    def __init__(
        self,
        rom: _RomLike,
        num_envs: int,
        init_state: Union[bytes, str, PathLike[str]],
        map_offsets: list[tuple[int, int, int]],
        level_table: np.ndarray,
        *,
        action_freq: int = 24,
        max_steps: int = 163840,
        reward_scale: float = 1.0,
        explore_weight: float = 1.0,
        num_threads: Optional[int] = None,
        scheduler: Optional[str] = None,
    ) -> None: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def num_threads(self) -> int: ...
    @property
    def scheduler(self) -> str: ...
    def reset(self, out: tuple, mask: Optional[list[bool]] = None) -> None: ...
    def step(self, actions: np.ndarray, out: tuple) -> None: ...
    def read(self, env: int, addr: int, length: int = 1) -> bytes: ...
    def explore_map(self, env: int) -> bytes: ...
    def flags_logged(self, env: int) -> bytes: ...
    def episode_info(self, env: int) -> dict: ...
    def seen_coords(self, env: int) -> dict: ...
    def memory_bytes(self) -> int: ...
    def save_state(self, env: int) -> bytes: ...

class RedV2AsyncPool:
    """EnvPool-style asynchronous RedV2Batch (see ``emurust.pokered_v2.RedV2AsyncPool``)."""

    def __init__(
        self,
        rom: _RomLike,
        num_envs: int,
        init_state: Union[bytes, str, PathLike[str]],
        map_offsets: list[tuple[int, int, int]],
        level_table: np.ndarray,
        *,
        action_freq: int = 24,
        max_steps: int = 163840,
        reward_scale: float = 1.0,
        explore_weight: float = 1.0,
        num_threads: Optional[int] = None,
    ) -> None: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def num_threads(self) -> int: ...
    def send(self, env_ids: list[int], actions: np.ndarray) -> None: ...
    def recv(self, batch_size: int, out: tuple) -> list[int]: ...
    def episode_info(self, env: int) -> dict: ...
