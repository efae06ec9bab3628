"""``PyBoy(rom, window="SDL2")`` for ``emurust.PyBoy``: a window as PyBoy 2.8.1 opens one.

The same library as PyBoy (PySDL2 with the SDL2 binaries of ``pysdl2-dll``; ``pip install
"emurust[window]"``): a resizable window titled "PyBoy", 160x144 pixels times ``scale``, showing
``pyboy.screen`` after every ``tick()`` call, the sound played through an SDL audio device
(signed 8-bit stereo at the sound's sample rate, PyBoy's volume), and PyBoy's keys (the table
below). Emulation runs at real time by default (``set_emulation_speed``), paced by the sound
queue when sound plays, as PyBoy paces it.
"""

from __future__ import annotations

import ctypes
import time

from ..log import get_logger
from ..utils import PyBoyAssertException, PyBoyDependencyError, WindowEvent

logger = get_logger("pyboy.plugins.window_sdl2")

try:
    import sdl2
    import sdl2.ext
except ImportError:  # an optional dependency, as in PyBoy
    sdl2 = None

ROWS, COLS = 144, 160
#: Frames of sound kept queued ahead (PyBoy's thresholds): above the first the limiter waits,
#: above both together the queue is dropped (emulation ran ahead of real time).
SOUND_PREBUFFER_FRAMES = 3
SOUND_DESYNC_FRAMES = 4


def _key_tables():
    """PyBoy's keyboard: key -> event on press, key -> event on release; game controller
    buttons likewise."""
    k = sdl2
    press = {
        k.SDLK_UP: WindowEvent.PRESS_ARROW_UP, k.SDLK_DOWN: WindowEvent.PRESS_ARROW_DOWN,
        k.SDLK_RIGHT: WindowEvent.PRESS_ARROW_RIGHT, k.SDLK_LEFT: WindowEvent.PRESS_ARROW_LEFT,
        k.SDLK_a: WindowEvent.PRESS_BUTTON_A, k.SDLK_s: WindowEvent.PRESS_BUTTON_B,
        k.SDLK_RETURN: WindowEvent.PRESS_BUTTON_START, k.SDLK_BACKSPACE: WindowEvent.PRESS_BUTTON_SELECT,
        k.SDLK_SPACE: WindowEvent.PRESS_SPEED_UP, k.SDLK_COMMA: WindowEvent.PRESS_REWIND_BACK,
        k.SDLK_PERIOD: WindowEvent.PRESS_REWIND_FORWARD, k.SDLK_j: WindowEvent.DEBUG_MEMORY_SCROLL_DOWN,
        k.SDLK_k: WindowEvent.DEBUG_MEMORY_SCROLL_UP, k.SDLK_LSHIFT: WindowEvent.MOD_SHIFT_ON,
        k.SDLK_RSHIFT: WindowEvent.MOD_SHIFT_ON,
    }
    release = {
        k.SDLK_UP: WindowEvent.RELEASE_ARROW_UP, k.SDLK_DOWN: WindowEvent.RELEASE_ARROW_DOWN,
        k.SDLK_RIGHT: WindowEvent.RELEASE_ARROW_RIGHT, k.SDLK_LEFT: WindowEvent.RELEASE_ARROW_LEFT,
        k.SDLK_a: WindowEvent.RELEASE_BUTTON_A, k.SDLK_s: WindowEvent.RELEASE_BUTTON_B,
        k.SDLK_RETURN: WindowEvent.RELEASE_BUTTON_START, k.SDLK_BACKSPACE: WindowEvent.RELEASE_BUTTON_SELECT,
        k.SDLK_z: WindowEvent.STATE_SAVE, k.SDLK_x: WindowEvent.STATE_LOAD,
        k.SDLK_SPACE: WindowEvent.RELEASE_SPEED_UP, k.SDLK_p: WindowEvent.PAUSE_TOGGLE,
        k.SDLK_i: WindowEvent.SCREEN_RECORDING_TOGGLE, k.SDLK_u: WindowEvent.SCREEN_RECORDING_TOGGLE_MP4,
        k.SDLK_o: WindowEvent.SCREENSHOT_RECORD, k.SDLK_ESCAPE: WindowEvent.QUIT,
        k.SDLK_COMMA: WindowEvent.RELEASE_REWIND_BACK, k.SDLK_PERIOD: WindowEvent.RELEASE_REWIND_FORWARD,
        k.SDLK_LSHIFT: WindowEvent.MOD_SHIFT_OFF, k.SDLK_RSHIFT: WindowEvent.MOD_SHIFT_OFF,
        k.SDLK_F11: WindowEvent.FULL_SCREEN_TOGGLE, k.SDLK_c: WindowEvent.CYCLE_PALETTE,
        k.SDLK_l: WindowEvent.DEBUG_GAME_AREA_TOGGLE,
    }
    pad_press = {
        k.SDL_CONTROLLER_BUTTON_DPAD_UP: WindowEvent.PRESS_ARROW_UP, k.SDL_CONTROLLER_BUTTON_DPAD_DOWN: WindowEvent.PRESS_ARROW_DOWN,
        k.SDL_CONTROLLER_BUTTON_DPAD_RIGHT: WindowEvent.PRESS_ARROW_RIGHT, k.SDL_CONTROLLER_BUTTON_DPAD_LEFT: WindowEvent.PRESS_ARROW_LEFT,
        k.SDL_CONTROLLER_BUTTON_B: WindowEvent.PRESS_BUTTON_A, k.SDL_CONTROLLER_BUTTON_A: WindowEvent.PRESS_BUTTON_B,
        k.SDL_CONTROLLER_BUTTON_START: WindowEvent.PRESS_BUTTON_START, k.SDL_CONTROLLER_BUTTON_BACK: WindowEvent.PRESS_BUTTON_SELECT,
        k.SDL_CONTROLLER_BUTTON_GUIDE: WindowEvent.PRESS_SPEED_UP,
    }
    pad_release = {
        k.SDL_CONTROLLER_BUTTON_DPAD_UP: WindowEvent.RELEASE_ARROW_UP, k.SDL_CONTROLLER_BUTTON_DPAD_DOWN: WindowEvent.RELEASE_ARROW_DOWN,
        k.SDL_CONTROLLER_BUTTON_DPAD_RIGHT: WindowEvent.RELEASE_ARROW_RIGHT, k.SDL_CONTROLLER_BUTTON_DPAD_LEFT: WindowEvent.RELEASE_ARROW_LEFT,
        k.SDL_CONTROLLER_BUTTON_B: WindowEvent.RELEASE_BUTTON_A, k.SDL_CONTROLLER_BUTTON_A: WindowEvent.RELEASE_BUTTON_B,
        k.SDL_CONTROLLER_BUTTON_START: WindowEvent.RELEASE_BUTTON_START, k.SDL_CONTROLLER_BUTTON_BACK: WindowEvent.RELEASE_BUTTON_SELECT,
        k.SDL_CONTROLLER_BUTTON_LEFTSHOULDER: WindowEvent.STATE_SAVE, k.SDL_CONTROLLER_BUTTON_RIGHTSHOULDER: WindowEvent.STATE_LOAD,
        k.SDL_CONTROLLER_BUTTON_GUIDE: WindowEvent.RELEASE_SPEED_UP,
    }  # fmt: skip
    return press, release, pad_press, pad_release


class WindowSDL2:
    """The window: ``handle_events`` (each frame), ``post_tick`` (each ``tick()``),
    ``frame_limiter``, ``set_title``, ``paused``, ``stop``."""

    def __init__(self, pyboy, scale: int):
        if sdl2 is None:
            raise PyBoyDependencyError('Failed to import sdl2, needed for sdl2 window (pip install "emurust[window]")')
        self.pyboy = pyboy
        self.scale = scale
        self.fullscreen = False
        self._controller = None
        self._press, self._release, self._pad_press, self._pad_release = _key_tables()
        if sdl2.SDL_InitSubSystem(sdl2.SDL_INIT_VIDEO | sdl2.SDL_INIT_GAMECONTROLLER) < 0:
            raise PyBoyAssertException("SDL_InitSubSystem video failed: %s" % sdl2.SDL_GetError().decode())
        self._window = sdl2.SDL_CreateWindow(
            b"PyBoy", sdl2.SDL_WINDOWPOS_CENTERED, sdl2.SDL_WINDOWPOS_CENTERED, COLS * scale, ROWS * scale, sdl2.SDL_WINDOW_RESIZABLE
        )
        if not self._window:
            raise PyBoyAssertException("SDL_CreateWindow failed: %s" % sdl2.SDL_GetError().decode())
        sdl2.SDL_SetHint(sdl2.SDL_HINT_RENDER_VSYNC, b"0")  # the frame limiter paces, not the display
        self._renderer = sdl2.SDL_CreateRenderer(self._window, -1, sdl2.SDL_RENDERER_ACCELERATED)
        if not self._renderer:  # no GPU (a virtual display): SDL's software renderer
            self._renderer = sdl2.SDL_CreateRenderer(self._window, -1, sdl2.SDL_RENDERER_SOFTWARE)
        sdl2.SDL_RenderSetLogicalSize(self._renderer, COLS, ROWS)
        # ABGR8888 on a little-endian machine is R, G, B, A in memory: screen.ndarray's bytes.
        self._texture = sdl2.SDL_CreateTexture(self._renderer, sdl2.SDL_PIXELFORMAT_ABGR8888, sdl2.SDL_TEXTUREACCESS_STATIC, COLS, ROWS)
        sdl2.SDL_ShowWindow(self._window)
        self._ftime = time.perf_counter_ns()
        self._open_audio()

    def _open_audio(self):
        self.sound_support = False
        self.sound_paused = False
        if not self.pyboy._sound_emulated:
            return
        if sdl2.SDL_InitSubSystem(sdl2.SDL_INIT_AUDIO) < 0:
            logger.warning("SDL_InitSubSystem audio failed: %s", sdl2.SDL_GetError().decode())
            return
        rate = self.pyboy.sound.sample_rate
        self._spec_want = sdl2.SDL_AudioSpec(rate, sdl2.AUDIO_S8, 2, 128)  # kept alive: SDL holds pointers
        self._spec_have = sdl2.SDL_AudioSpec(0, 0, 0, 0)
        self._audio = sdl2.SDL_OpenAudioDevice(None, 0, self._spec_want, self._spec_have, 0)
        if self._audio <= 1:
            logger.warning("SDL_OpenAudioDevice failed: %s", sdl2.SDL_GetError().decode())
            return
        self._bytes_per_frame = 2 * rate // 60
        self._mix = (ctypes.c_ubyte * (2 * rate))()  # one second: more than a tick() brings
        sdl2.SDL_PauseAudioDevice(self._audio, 0)
        self.sound_support = True

    # ------------------------------------------------------------------ events

    def handle_events(self, events):
        for event in sdl2.ext.get_events():
            kind = event.type
            if kind == sdl2.SDL_QUIT:
                events.append(WindowEvent(WindowEvent.QUIT))
            elif kind == sdl2.SDL_KEYDOWN:
                events.append(WindowEvent(self._press.get(event.key.keysym.sym, WindowEvent.PASS)))
            elif kind == sdl2.SDL_KEYUP:
                events.append(WindowEvent(self._release.get(event.key.keysym.sym, WindowEvent.PASS)))
            elif kind == sdl2.SDL_WINDOWEVENT and event.window.windowID == sdl2.SDL_GetWindowID(self._window):
                if event.window.event == sdl2.SDL_WINDOWEVENT_FOCUS_LOST:
                    events.append(WindowEvent(WindowEvent.WINDOW_UNFOCUS))
                elif event.window.event == sdl2.SDL_WINDOWEVENT_FOCUS_GAINED:
                    events.append(WindowEvent(WindowEvent.WINDOW_FOCUS))
            elif kind == sdl2.SDL_CONTROLLERDEVICEADDED:
                self._controller = sdl2.SDL_GameControllerOpen(event.cdevice.which)
            elif kind == sdl2.SDL_CONTROLLERDEVICEREMOVED and self._controller is not None:
                sdl2.SDL_GameControllerClose(self._controller)
                self._controller = None
            elif kind == sdl2.SDL_CONTROLLERBUTTONDOWN:
                events.append(WindowEvent(self._pad_press.get(event.cbutton.button, WindowEvent.PASS)))
            elif kind == sdl2.SDL_CONTROLLERBUTTONUP:
                events.append(WindowEvent(self._pad_release.get(event.cbutton.button, WindowEvent.PASS)))
        for event in events:
            if event == WindowEvent.FULL_SCREEN_TOGGLE:
                self.fullscreen = not self.fullscreen
                sdl2.SDL_SetWindowFullscreen(self._window, sdl2.SDL_WINDOW_FULLSCREEN_DESKTOP if self.fullscreen else 0)
        return events

    # ------------------------------------------------------------------ picture and sound

    def post_tick(self):
        screen = self.pyboy.screen.ndarray
        sdl2.SDL_UpdateTexture(self._texture, None, screen.ctypes.data_as(ctypes.c_void_p), COLS * 4)
        sdl2.SDL_RenderCopy(self._renderer, self._texture, None, None)
        sdl2.SDL_RenderPresent(self._renderer)
        sdl2.SDL_RenderClear(self._renderer)
        if self.sound_support and not self.sound_paused:
            self._queue_sound()

    def _queue_sound(self):
        queued = sdl2.SDL_GetQueuedAudioSize(self._audio)
        if queued > self._bytes_per_frame * (SOUND_PREBUFFER_FRAMES + SOUND_DESYNC_FRAMES):
            sdl2.SDL_ClearQueuedAudio(self._audio)  # ran ahead of real time: start the queue anew
        samples = self.pyboy.sound.ndarray  # (n, 2) int8
        n = min(samples.size, len(self._mix))
        if n == 0:
            return
        data = samples.tobytes()[:n]
        ctypes.memset(self._mix, 0, n)
        src = (ctypes.c_ubyte * n).from_buffer_copy(data)
        sdl2.SDL_MixAudioFormat(self._mix, src, sdl2.AUDIO_S8, n, self.pyboy._sound_volume * 128 // 100)
        sdl2.SDL_QueueAudio(self._audio, self._mix, n)

    def frame_limiter(self, speed):
        """Sleep to ``speed`` times real time; with sound, keep a few frames of it queued."""
        frame_ns = (1.0 / (60.0 * speed)) * 1_000_000_000 if speed > 0 else 0
        if self.sound_support and speed > 0:
            buffered = sdl2.SDL_GetQueuedAudioSize(self._audio) / self._bytes_per_frame
            frame_ns = min(1.0, buffered - SOUND_PREBUFFER_FRAMES) * frame_ns if buffered > SOUND_PREBUFFER_FRAMES else 0
        self._ftime += int(frame_ns)
        now = time.perf_counter_ns()
        if speed > 0 and self._ftime > now:
            time.sleep(((self._ftime - now) // 1_000_000) / 1000)
        else:
            self._ftime = now

    def set_title(self, title: str):
        sdl2.SDL_SetWindowTitle(self._window, title.encode())

    def paused(self, pause: bool):
        self.sound_paused = pause
        if self.sound_support:
            sdl2.SDL_PauseAudioDevice(self._audio, 1 if pause else 0)

    def stop(self):
        if self.sound_support:
            sdl2.SDL_CloseAudioDevice(self._audio)
            self.sound_support = False
        if self._window:
            sdl2.SDL_DestroyWindow(self._window)
            self._window = None
            for _ in range(3):  # let the window system take the window away
                sdl2.ext.get_events()
                time.sleep(0.1)
