import os
import pathlib

import pytest

from emurust._triton import keep_triton_unloaded
from emurust.rom_header import with_checksums

# The tests train with plain PyTorch on the CPU; loading Triton's library crashed a CI run.
keep_triton_unloaded()

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The SM83 vectors: the repository's copy, or the directory SM83_VECTORS names.
VECTORS = pathlib.Path(os.environ.get("SM83_VECTORS") or ROOT / "tests" / "data" / "sm83")
LONG = os.environ.get("EMURUST_LONG") == "1"
#: Rollouts in the default suite compare memory, registers, I/O, the screen and sound at every
#: frame, and CPU cycles since power-on and STAT (which need PyBoy's save state, ~5x the cost of
#: the rest) every STATE_EVERY frames. Tests that need them every frame pass state_every=1.
STATE_EVERY = 10


def default_sigint():
    """For `subprocess.Popen(preexec_fn=...)` in the Ctrl-C tests: the child starts with SIGINT's
    default disposition, as a program started from a terminal does. A test runner started as a
    background job of a non-interactive shell (`cmd &`) ignores SIGINT, children inherit that,
    and Python then installs no KeyboardInterrupt handler: the tests would measure the runner's
    inheritance, not emurust."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def make_rom(cart_type=0x00, rom_banks=2, ram_code=0x00, title=b"TEST", program=b"\x18\xfe"):
    """A minimal valid ROM: `program` at 0x150, entry jumps there, correct checksums."""
    size = 0x4000 * rom_banks
    rom = bytearray(size)
    rom[0x100:0x104] = b"\x00\xc3\x50\x01"
    rom[0x134 : 0x134 + len(title)] = title
    rom[0x147] = cart_type
    rom[0x148] = {2: 0, 4: 1, 8: 2, 16: 3, 32: 4, 64: 5, 128: 6, 256: 7, 512: 8}[rom_banks]
    rom[0x149] = ram_code
    rom[0x150 : 0x150 + len(program)] = program
    return with_checksums(rom, global_too=True)


@pytest.fixture(scope="session")
def vectors_dir():
    if not VECTORS.is_dir():
        pytest.fail(f"SM83 vectors not found at {VECTORS}; set SM83_VECTORS to their directory")
    return VECTORS


# ---------------------------------------------------------------- community ROMs (optional)

COMMUNITY_TESTS = "test_community_roms.py"


def _community_roms_missing():
    from emurust.verify.suites import default_roms_dir

    d = default_roms_dir(ROOT)
    return None if os.path.isdir(d) else d


def pytest_collection_modifyitems(config, items):
    """With EMURUST_TEST_ROMS_OPTIONAL=1 and no community ROM folder, deselect those tests (and
    say so in the summary); otherwise they run, and fail when the folder is missing."""
    if os.environ.get("EMURUST_TEST_ROMS_OPTIONAL") != "1":
        return
    missing = _community_roms_missing()
    if missing is None:
        return
    gone = [it for it in items if it.nodeid.split("::")[0].endswith(COMMUNITY_TESTS)]
    if gone:
        items[:] = [it for it in items if it not in gone]
        config.hook.pytest_deselected(items=gone)
        config._emurust_community_deselected = (len(gone), missing)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    info = getattr(config, "_emurust_community_deselected", None)
    if info:
        n, missing = info
        terminalreporter.write_sep(
            "!", f"{n} community-ROM tests DESELECTED: no ROM folder at {missing} (EMURUST_TEST_ROMS_OPTIONAL=1); "
            "set EMURUST_TEST_ROMS to run them", yellow=True, bold=True
        )
