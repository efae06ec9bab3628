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


# ---------------------------------------------------------------- community ROMs

#: The start of every skip reason for a missing corpus; the summary counts skips by it.
CORPUS_SKIP = "community ROM corpus not found"


def corpus_dir() -> pathlib.Path:
    """The community ROM corpus (mooneye/, mealybug/, acid2/, samesuite/, age/, games/):
    ``$EMURUST_TEST_ROMS``, else ``../shared/data/roms-dev`` beside the checkout."""
    from emurust.verify.suites import default_roms_dir

    return pathlib.Path(default_roms_dir(ROOT))


def corpus_expected() -> bool:
    """Where the corpus must be present: in CI, or when the user named it with EMURUST_TEST_ROMS
    (tests/run.sh sets it when it finds ../shared/data/roms-dev). There a missing corpus fails,
    so CI can never skip these tests silently; elsewhere (a fresh clone) they skip."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false") or bool(os.environ.get("EMURUST_TEST_ROMS"))


def corpus_missing_reason() -> str:
    return (
        f"{CORPUS_SKIP} at {corpus_dir()}: set EMURUST_TEST_ROMS to its folder "
        "(README, 'Community ROM corpus', says where it comes from)"
    )


def require_corpus() -> pathlib.Path:
    """The corpus folder; skips the test (or fails it where the corpus is expected) without it."""
    d = corpus_dir()
    if d.is_dir():
        return d
    if corpus_expected():
        pytest.fail(corpus_missing_reason() + " (expected here: CI or EMURUST_TEST_ROMS is set)")
    pytest.skip(corpus_missing_reason())


def corpus_path(*parts: str) -> str:
    """A file of the corpus; see require_corpus. A corpus without that file always fails."""
    p = require_corpus().joinpath(*parts)
    if not p.exists():
        pytest.fail(f"{p} is missing from the community ROM corpus at {corpus_dir()}")
    return str(p)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if CORPUS_SKIP in str(getattr(r, "longrepr", ""))]
    if skipped:
        terminalreporter.write_sep(
            "!",
            f"{len(skipped)} tests SKIPPED: {CORPUS_SKIP} at {corpus_dir()}; to run them: "
            "EMURUST_TEST_ROMS=/path/to/roms-dev bash tests/run.sh",
            yellow=True,
            bold=True,
        )
