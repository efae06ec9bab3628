"""A pytest plugin that runs PyBoy's own test suite on PyBoy or on ``emurust.PyBoy``.

``python -m pytest -p emurust.pyboy_suite_plugin --pyboy-suite-impl emurust --pyboy-suite-report out.json
tests/test_x.py`` (run inside the working folder that ``tools/pyboy_suite.py`` lays out).

With ``--pyboy-suite-impl emurust`` the names a PyBoy user imports (``pyboy``, ``pyboy.pyboy``,
``pyboy.utils``, ``pyboy.api.*``, ``pyboy.plugins.game_wrapper_*``) resolve to emurust's modules
through ``sys.modules``, before any test module is imported. PyBoy's internals (``pyboy.core``,
its plugin manager, rewind) have no counterpart: importing them raises ``ModuleNotFoundError``.
PyBoy's command line (``pyboy.__main__``: an argument parser) is PyBoy's own module in both runs.

Both runs record every test's outcome and, for failures, the exception line into the JSON
report. A test that fails because a ROM file it names is missing (PyBoy's suite downloads ROMs;
this machine may lack some) is reported as skipped, "ROM unavailable", in both runs alike.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import json
import sys
import types
from pathlib import Path

import pytest

#: pyboy module name -> emurust module that stands in for it.
SHIM_MODULES = {
    "pyboy": "emurust.pyboy_api",
    "pyboy.pyboy": "emurust.pyboy_api.pyboy",
    "pyboy.utils": "emurust.pyboy_api.utils",
    "pyboy.api": "emurust.pyboy_api",
    "pyboy.api.constants": "emurust.pyboy_api.constants",
    "pyboy.api.gameshark": "emurust.pyboy_api.gameshark",
    "pyboy.api.memory_scanner": "emurust.pyboy_api.memory_scanner",
    "pyboy.api.screen": "emurust.pyboy_api.screen",
    "pyboy.api.sound": "emurust.pyboy_api.sound",
    "pyboy.api.sprite": "emurust.pyboy_api.sprite",
    "pyboy.api.tile": "emurust.pyboy_api.tile",
    "pyboy.api.tilemap": "emurust.pyboy_api.tilemap",
    "pyboy.plugins": "emurust.pyboy_api.plugins",
    "pyboy.plugins.base_plugin": "emurust.pyboy_api.plugins.base",
    "pyboy.plugins.game_wrapper2048": "emurust.pyboy_api.plugins.game_wrapper2048",
    "pyboy.plugins.game_wrapper_kirby_dream_land": "emurust.pyboy_api.plugins.kirby_dream_land",
    "pyboy.plugins.game_wrapper_pandoras_blocks": "emurust.pyboy_api.plugins.pandoras_blocks",
    "pyboy.plugins.game_wrapper_pokemon_gen1": "emurust.pyboy_api.plugins.pokemon_gen1",
    "pyboy.plugins.game_wrapper_pokemon_pinball": "emurust.pyboy_api.plugins.pokemon_pinball",
    "pyboy.plugins.game_wrapper_super_mario_bros_deluxe": "emurust.pyboy_api.plugins.super_mario_bros_deluxe",
    "pyboy.plugins.game_wrapper_super_mario_land": "emurust.pyboy_api.plugins.super_mario_land",
    "pyboy.plugins.game_wrapper_tetris": "emurust.pyboy_api.plugins.tetris",
    "pyboy.plugins.screen_recorder": "emurust.pyboy_api.plugins.screen_recorder",
}

#: PyBoy's own modules kept in the emurust run. ``pyboy.__main__``: PyBoy's command line is not
#: part of the ``PyBoy`` class's API, and emurust's command line is another program
#: (``emurust``). ``pyboy.core.serial``: test_serial.py imports its ``SerialSharedMemoryBuffer``
#: at module level for its link-cable tests (they need Pokémon ROMs, unavailable here, and
#: ``emurust.PyBoy(serial_shared_memory=...)`` raises NotImplementedError); the file's other
#: tests use the public API only.
PASS_THROUGH = ("pyboy.__main__", "pyboy.core.serial")

#: Names of ROM files: a missing one means "ROM unavailable here", not a failure.
_ROM_SUFFIXES = (".gb", ".gbc", ".bin", ".sgb")


class DownloadUnavailable(OSError):
    """PyBoy's conftest tried to download a test ROM: nothing is downloaded in these runs."""


def _no_download(url, *args, **kwargs):
    target = getattr(url, "full_url", url)
    raise DownloadUnavailable(f"ROM unavailable: PyBoy's suite would download {target}")


class _NoInternals(importlib.abc.MetaPathFinder):
    """Refuses ``pyboy.*`` modules that emurust has no counterpart of (PyBoy's internals)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "pyboy" or fullname.startswith("pyboy."):
            if fullname not in sys.modules:
                raise ModuleNotFoundError(
                    f"{fullname} is PyBoy-internal: emurust.PyBoy has no counterpart (out of scope for the emurust run)",
                    name=fullname,
                )
        return None


def _module_alias(pyboy_name: str, emurust_module: types.ModuleType, origin: str | None = None) -> types.ModuleType:
    """A module object named ``pyboy_name`` whose attributes are the emurust module's.

    A fresh module (not the emurust one itself) so that attaching submodules to it, as the import
    system does for ``pyboy.api`` or ``pyboy.__main__``, never changes emurust's own modules.
    """
    alias = types.ModuleType(pyboy_name, emurust_module.__doc__)
    alias.__dict__.update({k: v for k, v in vars(emurust_module).items() if k not in ("__name__", "__spec__", "__loader__")})
    alias.__spec__ = importlib.machinery.ModuleSpec(pyboy_name, None, origin=origin, is_package=True)
    alias.__path__ = []  # a package: its submodules are found in sys.modules
    setattr(alias, "__emurust_module__", emurust_module.__name__)
    return alias


def install_emurust_shim() -> dict[str, str]:
    """Resolve PyBoy's public module names to emurust's; returns {pyboy name: emurust name}."""
    passed_through = {name: importlib.import_module(name) for name in PASS_THROUGH}
    # emurust reads PyBoy's boot ROMs from the installed package's folder (found through
    # ``importlib.util.find_spec("pyboy").origin``): the alias keeps that origin.
    real_spec = sys.modules["pyboy"].__spec__
    real_origin = real_spec.origin if real_spec is not None else None
    for name in [n for n in sys.modules if n == "pyboy" or n.startswith("pyboy.")]:
        del sys.modules[name]
    aliases = {}
    for pyboy_name, emurust_name in SHIM_MODULES.items():
        origin = real_origin if pyboy_name == "pyboy" else None
        aliases[pyboy_name] = _module_alias(pyboy_name, importlib.import_module(emurust_name), origin)
    # Parents know their children (``from pyboy.api import tile``, ``pyboy.utils.WindowEvent``).
    for pyboy_name, module in aliases.items():
        parent, _, child = pyboy_name.rpartition(".")
        if parent in aliases and not hasattr(aliases[parent], child):
            setattr(aliases[parent], child, module)
    sys.modules.update(aliases)
    for name, module in passed_through.items():
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent not in sys.modules:  # an empty package: only the passed-through child in it
            package = types.ModuleType(parent)
            package.__path__ = []
            package.__spec__ = importlib.machinery.ModuleSpec(parent, None, is_package=True)
            sys.modules[parent] = package
            setattr(sys.modules[parent.rpartition(".")[0]], parent.rpartition(".")[2], package)
        setattr(sys.modules[parent], child, module)
    sys.meta_path.insert(0, _NoInternals())
    return dict(SHIM_MODULES)


def pytest_addoption(parser):
    group = parser.getgroup("pyboy-suite", "PyBoy's test suite on PyBoy or emurust")
    group.addoption("--pyboy-suite-impl", choices=("pyboy", "emurust"), default="pyboy", help="which implementation `pyboy` names")
    group.addoption("--pyboy-suite-report", default=None, help="write every test's outcome to this JSON file")


def pytest_configure(config):
    impl = config.getoption("--pyboy-suite-impl")
    config._pyboy_suite = {"impl": impl, "results": {}}
    import urllib.request

    urllib.request.urlopen = _no_download  # the same in both runs: only the ROMs laid out here
    if impl == "emurust":
        install_emurust_shim()


def _missing_rom(excinfo) -> str | None:
    if excinfo is None:
        return None
    if excinfo.errisinstance(DownloadUnavailable):
        return str(excinfo.value).removeprefix("ROM unavailable: ")
    if not excinfo.errisinstance(FileNotFoundError):
        return None
    err = excinfo.value
    name = getattr(err, "filename", None) or ""
    text = str(err)
    for candidate in (name, text):
        lowered = str(candidate).lower()
        if any(suffix in lowered for suffix in _ROM_SUFFIXES):
            return str(candidate)
    return None


def _message(report) -> str:
    """The exception line of a failure (``E   ...`` lines), else the report's last line."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message.strip().splitlines()[0][:300] if crash.message.strip() else ""
    if isinstance(report.longrepr, tuple):  # a skip: (file, line, reason)
        return str(report.longrepr[2])[:300]
    return str(report.longrepr).strip().splitlines()[-1][:300] if report.longrepr else ""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    missing = _missing_rom(call.excinfo) if call.when in ("setup", "call") else None
    if missing is not None and report.failed:
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"ROM unavailable: {missing}")


def pytest_runtest_logreport(report):
    config = _CONFIG.get("config")
    if config is None:
        return
    results = config._pyboy_suite["results"]
    entry = results.setdefault(report.nodeid, {"outcome": "passed", "message": ""})
    if report.when == "call" and report.passed:
        if hasattr(report, "wasxfail"):
            entry.update(outcome="xpassed")
        return
    if report.skipped:
        if hasattr(report, "wasxfail"):
            entry.update(outcome="xfailed", message=str(report.wasxfail)[:300])
        elif entry["outcome"] == "passed":
            entry.update(outcome="skipped", message=_message(report))
    elif report.failed:
        kind = "failed" if report.when == "call" else "error"
        if entry["outcome"] not in ("failed", "error"):
            entry.update(outcome=kind, message=_message(report))


def pytest_collectreport(report):
    config = _CONFIG.get("config")
    if config is None or not report.failed:
        return
    config._pyboy_suite["results"][report.nodeid] = {"outcome": "collection error", "message": _message(report)}


_CONFIG: dict = {}


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    _CONFIG["config"] = session.config


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    path = config.getoption("--pyboy-suite-report")
    if path:
        data = {"impl": config._pyboy_suite["impl"], "results": config._pyboy_suite["results"]}
        Path(path).write_text(json.dumps(data, indent=1, sort_keys=True))
