"""Two Gymnasium environments written against PyBoy 2.8.1 the way RL code in the wild is.

This file imports ``pyboy``. tests/test_pyboy_api.py runs it as it is and with ONE line
changed (``from pyboy import PyBoy`` -> ``from emurust import PyBoy``) and compares the two.
Nothing else in here may know about emurust.
"""

import io

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pyboy import PyBoy
from pyboy.utils import WindowEvent

ACTIONS = [
    [],
    [WindowEvent.PRESS_ARROW_LEFT],
    [WindowEvent.PRESS_ARROW_RIGHT],
    [WindowEvent.PRESS_ARROW_UP],
    [WindowEvent.PRESS_ARROW_DOWN],
    [WindowEvent.PRESS_BUTTON_A],
    [WindowEvent.PRESS_BUTTON_B],
    [WindowEvent.PRESS_BUTTON_START],
]
RELEASES = {
    WindowEvent.PRESS_ARROW_LEFT: WindowEvent.RELEASE_ARROW_LEFT,
    WindowEvent.PRESS_ARROW_RIGHT: WindowEvent.RELEASE_ARROW_RIGHT,
    WindowEvent.PRESS_ARROW_UP: WindowEvent.RELEASE_ARROW_UP,
    WindowEvent.PRESS_ARROW_DOWN: WindowEvent.RELEASE_ARROW_DOWN,
    WindowEvent.PRESS_BUTTON_A: WindowEvent.RELEASE_BUTTON_A,
    WindowEvent.PRESS_BUTTON_B: WindowEvent.RELEASE_BUTTON_B,
    WindowEvent.PRESS_BUTTON_START: WindowEvent.RELEASE_BUTTON_START,
}


class PixelEnv(gym.Env):
    """Screen pixels in, actions through send_input, reward from RAM, episodes start from a
    save state (the common "Pokémon Red agent" shape)."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, rom_path, init_frames=240, frameskip=4, max_steps=500, render_mode=None):
        self.pyboy = PyBoy(rom_path, window="null", sound_emulated=True)
        self.pyboy.set_emulation_speed(0)
        self.frameskip = frameskip
        self.max_steps = max_steps
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(len(ACTIONS))
        self.observation_space = spaces.Box(0, 255, shape=(72, 80, 3), dtype=np.uint8)
        self.pyboy.tick(init_frames, False)
        self.start_state = io.BytesIO()
        self.pyboy.save_state(self.start_state)
        self.steps = 0
        self.last_wram = 0

    def _obs(self):
        return self.pyboy.screen.ndarray[::2, ::2, :3].copy()

    def _wram_score(self):
        return sum(self.pyboy.memory[0xC000:0xC100]) + self.pyboy.memory[0xFF44]

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.start_state.seek(0)
        self.pyboy.load_state(self.start_state)
        self.pyboy.tick(1, True)
        self.steps = 0
        self.last_wram = self._wram_score()
        return self._obs(), {"frame": self.pyboy.frame_count}

    def step(self, action):
        for event in ACTIONS[int(action)]:
            self.pyboy.send_input(event)
        self.pyboy.tick(self.frameskip - 1, False)
        for event in ACTIONS[int(action)]:
            self.pyboy.send_input(RELEASES[event])
        self.pyboy.tick(1, True)
        self.steps += 1
        score = self._wram_score()
        reward = float(score - self.last_wram) / 256.0
        self.last_wram = score
        terminated = self.pyboy.memory[0xC000] == 0xFF
        truncated = self.steps >= self.max_steps
        info = {"pc": self.pyboy.register_file.PC, "sound": int(np.abs(self.pyboy.sound.ndarray.astype(int)).sum())}
        return self._obs(), reward, bool(terminated), truncated, info

    def render(self):
        return self.pyboy.screen.ndarray[:, :, :3].copy()

    def close(self):
        self.pyboy.stop(save=False)


class TetrisEnv(gym.Env):
    """The game wrapper's game area in, button presses out, score as reward."""

    def __init__(self, rom_path, max_steps=500):
        self.pyboy = PyBoy(rom_path, window="null")
        self.game = self.pyboy.game_wrapper
        self.game.start_game(timer_div=0x17)
        self.pyboy.game_area_mapping(self.game.mapping_compressed, 0)
        self.action_space = spaces.Discrete(5)
        self.observation_space = spaces.Box(0, 255, shape=(18, 10), dtype=np.uint32)
        self.max_steps = max_steps
        self.steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.game.reset_game(timer_div=0x17)
        self.steps = 0
        return self.pyboy.game_area(), {"score": self.game.score}

    def step(self, action):
        button = [None, "left", "right", "down", "a"][int(action)]
        if button:
            self.pyboy.button(button, delay=2)
        before = self.game.score
        self.pyboy.tick(3, False)
        self.steps += 1
        reward = float(self.game.score - before)
        info = {"lines": self.game.lines, "level": self.game.level, "next": self.pyboy.memory[0xC213]}
        return self.pyboy.game_area(), reward, bool(self.game.game_over()), self.steps >= self.max_steps, info

    def close(self):
        self.pyboy.stop()
