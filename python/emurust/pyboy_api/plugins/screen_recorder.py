"""The screen recorder of PyBoy 2.8.1, for ``emurust.PyBoy``.

``WindowEvent.SCREEN_RECORDING_TOGGLE`` starts and stops a GIF recording (Pillow),
``SCREEN_RECORDING_TOGGLE_MP4`` an MP4 one (H.264 video and AAC sound, encoded by the ``ffmpeg``
program from the raw RGBA frames and signed 8-bit stereo samples). As in PyBoy, one frame is
captured per ``tick()`` call (the picture that call left) and the file goes to
``./recordings/<cartridge title>-<YYYY.MM.DD-HH.MM.SS>.gif`` (or ``.mp4``), relative to the
current directory; raw MP4 data waits in a ``recordings/screenrec-*`` folder that is removed
afterwards. Frames are shown 20 ms each in the GIF (60 fps rounded to PyBoy's 10 ms steps).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time

from ..constants import COLS, ROWS
from ..log import get_logger
from ..utils import WindowEvent

logger = get_logger("pyboy.plugins.screen_recorder")

FPS = 60
GIF_FRAME_MS = int(round(1000 / FPS, -1))


class _Recording:
    """One recording in progress: its kind, where it goes and what was captured so far."""

    def __init__(self, kind: str, title: str):
        self.kind = kind
        folder = os.path.join(os.path.curdir, "recordings")
        os.makedirs(folder, mode=0o755, exist_ok=True)
        self.output_path = os.path.join(folder, time.strftime(f"{title}-%Y.%m.%d-%H.%M.%S") + f".{kind}")
        self.scratch = tempfile.mkdtemp(prefix="screenrec-", dir=folder)
        self.frames = 0
        self.images: list = []
        self.audio_bytes = 0
        self.video_path = os.path.join(self.scratch, "video.rgba")
        self.audio_path = os.path.join(self.scratch, "audio.s8")
        self.video = open(self.video_path, "wb") if kind == "mp4" else None
        self.audio = open(self.audio_path, "wb") if kind == "mp4" else None

    def close_files(self):
        for f in (self.video, self.audio):
            if f is not None:
                f.close()

    def discard(self):
        self.images = []
        shutil.rmtree(self.scratch, ignore_errors=True)


class ScreenRecorder:
    """Toggled by the recording events; captures in ``post_tick``; finishes on ``stop``."""

    def __init__(self, pyboy):
        self.pyboy = pyboy
        self.ffmpeg_bin = shutil.which("ffmpeg")
        self._recording: _Recording | None = None

    @property
    def recording_gif(self) -> bool:
        return self._recording is not None and self._recording.kind == "gif"

    @property
    def recording_mp4(self) -> bool:
        return self._recording is not None and self._recording.kind == "mp4"

    def handle_events(self, events):
        toggles = {WindowEvent.SCREEN_RECORDING_TOGGLE: "gif", WindowEvent.SCREEN_RECORDING_TOGGLE_MP4: "mp4"}
        for event in events:
            kind = toggles.get(event)
            if kind is None:
                continue
            if self._recording is not None and self._recording.kind == kind:
                self._finish()
            else:
                self._begin(kind)
            break  # one toggle per batch of events, as PyBoy
        return events

    def post_tick(self):
        rec = self._recording
        if rec is None:
            return
        if rec.kind == "gif":
            rec.images.append(self.pyboy.screen.image.copy())
        else:
            assert rec.video is not None and rec.audio is not None
            rec.video.write(self.pyboy.screen.ndarray.tobytes(order="C"))
            samples = self.pyboy.sound.ndarray.tobytes(order="C")
            rec.audio.write(samples)
            rec.audio_bytes += len(samples)
        rec.frames += 1

    def stop(self):
        if self._recording is not None:
            self._finish()

    def _begin(self, kind: str):
        if self._recording is not None:
            logger.warning("ScreenRecorder already active")
            return
        if kind == "gif":
            from .. import screen

            if screen.Image is None:
                logger.error('ScreenRecorder gif requires dependency "Pillow"')
                return
        if kind == "mp4" and not self.pyboy._sound_emulated:
            logger.error("ScreenRecorder mp4 requires sound emulation enabled")
            return
        if kind == "mp4" and self.ffmpeg_bin is None:
            logger.error('ScreenRecorder mp4 requires dependency "ffmpeg"')
            return
        self._recording = _Recording(kind, self.pyboy.cartridge_title)
        logger.info("ScreenRecorder started: %s", kind.upper())

    def _finish(self):
        rec = self._recording
        assert rec is not None
        self._recording = None
        logger.info("ScreenRecorder saving...")
        rec.close_files()
        saved = False
        if rec.frames == 0:
            logger.error("Screen recording failed: no frames")
        elif rec.kind == "gif":
            saved = self._write_gif(rec)
        else:
            saved = self._write_mp4(rec)
        if saved:
            logger.info("Screen recording saved in %s", rec.output_path)
        rec.discard()

    def _write_gif(self, rec: _Recording) -> bool:
        first, *rest = rec.images
        try:
            first.save(rec.output_path, save_all=True, append_images=rest, loop=0, duration=GIF_FRAME_MS, optimize=True, interlace=False)
        except Exception as e:  # the recording is lost, the emulator goes on
            logger.error("ScreenRecorder failed to encode GIF: %r", e)
            return False
        return True

    def _write_mp4(self, rec: _Recording) -> bool:
        if rec.audio_bytes == 0:
            logger.error("Screen recording failed: no audio samples were captured")
            return False
        video_in = ["-f", "rawvideo", "-pix_fmt", "rgba", "-s:v", f"{COLS}x{ROWS}", "-r", str(FPS), "-i", rec.video_path]
        audio_in = ["-f", "s8", "-ar", str(self.pyboy.sound.sample_rate), "-ac", "2", "-i", rec.audio_path]
        video_out = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-pix_fmt", "yuv420p"]
        audio_out = ["-c:a", "aac", "-b:a", "128k", "-shortest"]
        cmd = [self.ffmpeg_bin, "-y", *video_in, *audio_in, *video_out, *audio_out, rec.output_path]
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        if done.returncode != 0:
            logger.error("ffmpeg failed with code %d", done.returncode)
            if done.stderr:
                logger.error(done.stderr.decode(errors="replace"))
            return False
        return True
