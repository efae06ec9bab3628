"""``PyBoy.sound``: the audio samples of the latest frame (int8, interleaved stereo)."""

from __future__ import annotations


from . import utils

_FRAME_CYCLES = 70224
_CLOCK_RATE = 4_194_304


class Sound:
    """As ``pyboy.api.sound.Sound``. ``ndarray`` holds the (samples, 2) int8 values produced
    by the last frame that sampled sound (a copy in emurust)."""

    def __init__(self, pyboy, sample_rate, emulated):
        self._pyboy = pyboy
        self._emulated = emulated
        self.sample_rate = sample_rate
        self.raw_buffer_format = "b"
        samples_per_frame = (sample_rate * _FRAME_CYCLES + _CLOCK_RATE - 1) // _CLOCK_RATE
        self.raw_buffer_length = (samples_per_frame + 1) * 2

    @property
    def raw_buffer(self):
        """The whole sample buffer (``raw_buffer_length`` int8 values; valid up to
        ``raw_buffer_head``)."""
        buf, _ = self._pyboy._host.sound_buffer()
        return memoryview(buf)

    @property
    def raw_buffer_head(self):
        return self._pyboy._host.sound_buffer()[1] if self._emulated else 0

    @property
    def raw_ndarray(self):
        if not self._emulated:
            return utils.SoundEnabledError()
        buf, _ = self._pyboy._host.sound_buffer()
        return buf.reshape(-1, 2)

    @property
    def ndarray(self):
        """The samples of the last frame, shape ``(n, 2)``, int8."""
        if not self._emulated:
            raise utils.PyBoyFeatureDisabledError("Sound is not enabled!")
        return self._pyboy._gb.sound_samples()
