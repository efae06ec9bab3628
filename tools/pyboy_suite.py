#!/usr/bin/env python3
"""Run PyBoy's own test suite on PyBoy 2.8.1 and on ``emurust.PyBoy``, and compare.

    python tools/pyboy_suite.py --pyboy-tests /path/to/PyBoy [--roms DIR] [--out DIR] [test_x.py ...]

``--pyboy-tests`` is a checkout of PyBoy's repository (its ``tests/``, ``extras/`` and
``pyboy/default_rom.gb`` are used; the installed ``pyboy`` package is the PyBoy that runs). PyBoy's
suite downloads its test ROMs; here nothing is downloaded: the ROMs come from ``--roms`` (the
community corpus, default ``$EMURUST_TEST_ROMS``) laid out where PyBoy's conftest looks for them,
and a test whose ROM is missing is reported as skipped ("ROM unavailable") in both runs.

Each run happens in a working folder of its own (a copy of the checkout's tests, outside this
repository), through the pytest plugin :mod:`emurust.pyboy_suite_plugin`. Prints the table
(file, tests run, pass on PyBoy, pass on emurust) and every test whose outcome differs, with its
message; ``--out`` gets ``pyboy_suite.json`` and ``pyboy_suite.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Files that reach into PyBoy's internals (``pyboy.core``, ``pyboy.mb``): not part of the API
#: that ``emurust.PyBoy`` reproduces.
OUT_OF_SCOPE = {
    "test_lcd.py": "pyboy.core.lcd internals (pyboy.mb.lcd)",
    "test_states.py": "pyboy.mb internals (per-component state comparison)",
    "test_interaction.py": "pyboy.core.interaction internals",
    "test_rewind.py": "pyboy.plugins.rewind internals",
    "test_mbc30.py": "pyboy.core.cartridge.load_cartridge internals",
}

PASSING = ("passed", "xfailed")  # an expected failure that happened is a pass of the suite


def corpus_dir() -> Path:
    env = os.environ.get("EMURUST_TEST_ROMS")
    return Path(env) if env else ROOT.parent / "shared" / "data" / "roms-dev"


# ------------------------------------------------------------------ ROM layout


def _rom_literals(test_file: Path) -> list[str]:
    return re.findall(r"[\"']([\w./+-]+\.gbc?)[\"']", test_file.read_text())


def lay_out_roms(test_roms: Path, tests_dir: Path, corpus: Path) -> dict[str, str]:
    """Links the corpus's ROMs where PyBoy's conftest expects its downloads. Returns
    {PyBoy's path under test_roms/: corpus file}. Folders PyBoy would download whole (mooneye,
    SameSuite) are created with the ROMs the corpus has; their other ROMs stay missing."""
    test_roms.mkdir(parents=True, exist_ok=True)
    linked: dict[str, str] = {}

    def link(rel: str, src: Path) -> None:
        dst = test_roms / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if not dst.exists():
            dst.symlink_to(src.resolve())
        linked[rel] = str(src)

    for name, rel in (("acid2/dmg-acid2.gb", "dmg_acid2.gb"), ("acid2/cgb-acid2.gb", "cgb_acid2.gbc")):
        if (corpus / name).is_file():
            link(rel, corpus / name)
    # The corpus flattens the suites' folders into file names: mooneye drops "acceptance/".
    for folder, suite, test_file, strip in (
        ("mooneye", "mooneye", "test_mooneye.py", "acceptance/"),
        ("SameSuite", "samesuite", "test_samesuite.py", ""),
    ):
        (test_roms / folder).mkdir(exist_ok=True)
        if not (tests_dir / test_file).is_file():
            continue
        for rom in _rom_literals(tests_dir / test_file):
            flat = (rom[len(strip) :] if strip and rom.startswith(strip) else rom).replace("/", "_")
            if (corpus / suite / flat).is_file():
                link(f"{folder}/{rom}", corpus / suite / flat)
    return linked


def prepare_workdir(checkout: Path, workdir: Path, corpus: Path) -> dict[str, str]:
    """A working folder as PyBoy's suite expects its current directory to be (a copy, so that
    tests which write files, e.g. next to a ROM or under extras/, leave the checkout alone)."""
    if not (checkout / "tests" / "conftest.py").is_file():
        raise SystemExit(f"{checkout} is not a PyBoy checkout (no tests/conftest.py)")
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.copytree(checkout / "tests", workdir / "tests", dirs_exist_ok=True)
    shutil.copytree(checkout / "extras", workdir / "extras", dirs_exist_ok=True)
    (workdir / "pyboy").mkdir(exist_ok=True)
    shutil.copyfile(checkout / "pyboy" / "default_rom.gb", workdir / "pyboy" / "default_rom.gb")
    return lay_out_roms(workdir / "test_roms", workdir / "tests", corpus)


def select_files(tests_dir: Path, wanted: list[str]) -> tuple[list[str], list[str]]:
    """(files to run, out-of-scope files present) among tests/test_*.py."""
    present = sorted(p.name for p in tests_dir.glob("test_*.py"))
    if wanted:
        unknown = [w for w in wanted if w not in present]
        if unknown:
            raise SystemExit(f"not in {tests_dir}: {', '.join(unknown)}")
        present = [p for p in present if p in wanted]
    return [p for p in present if p not in OUT_OF_SCOPE], [p for p in present if p in OUT_OF_SCOPE]


def run_suite(impl: str, workdir: Path, files: list[str], report: Path, timeout: float, extra: list[str]) -> dict:
    """One pytest run of the files on ``impl`` ("pyboy" or "emurust"); the plugin's report."""
    env = dict(os.environ)
    env.pop("PYTEST_SECRETS_KEY", None)  # PyBoy's encrypted commercial ROMs: never fetched
    env.pop("PYTEST_ADDOPTS", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    cmd = [
        sys.executable, "-m", "pytest", "-p", "emurust.pyboy_suite_plugin", "-p", "no:cacheprovider",
        "--pyboy-suite-impl", impl, "--pyboy-suite-report", str(report), "-q", "-rN", "--tb=short", "--continue-on-collection-errors",
        "--rootdir", str(workdir), *extra, *[f"tests/{f}" for f in files],
    ]  # fmt: skip
    log = report.with_suffix(".log")
    with open(log, "w") as out:
        proc = subprocess.run(cmd, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=timeout)
    if not report.is_file():
        tail = log.read_text()[-3000:]
        raise RuntimeError(f"pytest on {impl} wrote no report (exit {proc.returncode}); log {log}:\n{tail}")
    return json.loads(report.read_text())


# ------------------------------------------------------------------ the table


def _file_of(nodeid: str) -> str:
    return nodeid.split("::")[0].rsplit("/", 1)[-1]


def _not_collected(results: dict, nodeid: str) -> dict:
    """A test one run never saw: its file's collection error, if that is why."""
    file_error = results.get(nodeid.split("::")[0])
    return {"outcome": "not collected", "message": file_error["message"] if file_error else ""}


def _skip_reason(message: str) -> str:
    """A skip's reason, grouped: the ROM PyBoy would download, a corpus ROM missing, or the
    test's own reason (PyBoy's encrypted commercial ROMs: "Cannot access secrets")."""
    if "would download" in message:
        name = message.rsplit("/", 1)[-1].replace("LICENSE.", "").replace("SOURCE.", "")
        return "ROM unavailable: " + name.removesuffix(".txt").removesuffix(".zip")
    if message.startswith("ROM unavailable"):
        return "ROM unavailable: missing from the corpus"
    return message.removeprefix("Skipped: ")


def compare(pyboy: dict, emurust: dict, files: list[str], out_of_scope: list[str]) -> dict:
    """The comparison of two plugin reports ({"results": {nodeid: {outcome, message}}}).

    A test "ran" when at least one implementation did not skip it. Per file: tests run, passed on
    PyBoy, passed on emurust; and every test whose pass/fail differs, both ways, with messages."""
    p_res, e_res = pyboy["results"], emurust["results"]
    rows, differences, unavailable, skipped = [], [], {}, {}
    for name in files:
        ids = sorted({i for i in (*p_res, *e_res) if _file_of(i) == name and "::" in i})
        ran = p_pass = e_pass = 0
        for nodeid in ids:
            p = p_res.get(nodeid) or _not_collected(p_res, nodeid)
            e = e_res.get(nodeid) or _not_collected(e_res, nodeid)
            if p["outcome"] == "skipped" and e["outcome"] == "skipped":
                if p["message"].startswith("ROM unavailable"):
                    unavailable[nodeid] = p["message"]
                reason = _skip_reason(p["message"])
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            ran += 1
            p_ok, e_ok = p["outcome"] in PASSING, e["outcome"] in PASSING
            p_pass += p_ok
            e_pass += e_ok
            if p_ok != e_ok:
                differences.append(
                    {
                        "test": nodeid,
                        "pyboy": p["outcome"],
                        "emurust": e["outcome"],
                        "message": (e if p_ok else p)["message"],
                    }
                )
        rows.append({"file": name, "run": ran, "pyboy_pass": p_pass, "emurust_pass": e_pass})
    totals = {k: sum(r[k] for r in rows) for k in ("run", "pyboy_pass", "emurust_pass")}
    return {
        "rows": rows,
        "totals": totals,
        "differences": differences,
        "only_pyboy_passes": sum(1 for d in differences if d["pyboy"] in PASSING),
        "only_emurust_passes": sum(1 for d in differences if d["emurust"] in PASSING),
        "rom_unavailable": unavailable,
        "skipped_in_both": dict(sorted(skipped.items(), key=lambda kv: -kv[1])),
        "out_of_scope": {f: OUT_OF_SCOPE[f] for f in out_of_scope},
    }


def to_markdown(result: dict, header: str = "") -> str:
    lines = [header] if header else []
    lines += ["| file | tests run | pass on PyBoy | pass on emurust |", "|---|---:|---:|---:|"]
    for r in result["rows"]:
        if r["run"]:
            lines.append(f"| {r['file']} | {r['run']} | {r['pyboy_pass']} | {r['emurust_pass']} |")
    t = result["totals"]
    lines.append(f"| **total** | **{t['run']}** | **{t['pyboy_pass']}** | **{t['emurust_pass']}** |")
    skipped_files = [r["file"] for r in result["rows"] if not r["run"]]
    if skipped_files:
        lines += ["", "Every test skipped in both runs (ROMs unavailable here): " + ", ".join(skipped_files) + "."]
    if result.get("skipped_in_both"):
        reasons = "; ".join(f"{why} ({n})" for why, n in result["skipped_in_both"].items())
        lines += ["", f"Skipped in both runs, by reason (tests): {reasons}."]
    if result["out_of_scope"]:
        lines += ["", "Out of scope (PyBoy internals): " + ", ".join(f"{f} ({why})" for f, why in result["out_of_scope"].items()) + "."]
    lines += ["", f"Tests that pass on PyBoy and not on emurust: {result['only_pyboy_passes']}; "
              f"on emurust and not on PyBoy: {result['only_emurust_passes']}."]  # fmt: skip
    if result["differences"]:
        lines += ["", "| test | PyBoy | emurust | message |", "|---|---|---|---|"]
        for d in result["differences"]:
            msg = d["message"].replace("|", "\\|").replace("\n", " ")
            lines.append(f"| `{d['test']}` | {d['pyboy']} | {d['emurust']} | {msg} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pyboy-tests", required=True, type=Path, help="a checkout of PyBoy's repository")
    ap.add_argument("--roms", type=Path, default=None, help="the community ROM corpus (default $EMURUST_TEST_ROMS)")
    ap.add_argument("--out", type=Path, default=None, help="write pyboy_suite.json and pyboy_suite.md here")
    ap.add_argument("--workdir", type=Path, default=None, help="keep the working folders here (default: a temporary one)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per pytest run")
    ap.add_argument("-k", default=None, help="pytest's -k expression, for both runs")
    ap.add_argument("files", nargs="*", help="test files to run (default: all in scope)")
    args = ap.parse_args(argv)
    corpus = args.roms or corpus_dir()
    checkout = args.pyboy_tests.resolve()
    files, out_of_scope = select_files(checkout / "tests", args.files)
    extra = ["-k", args.k] if args.k else []
    base = args.workdir or Path(tempfile.mkdtemp(prefix="pyboy_suite_"))
    reports = {}
    for impl in ("pyboy", "emurust"):
        workdir = base / impl
        linked = prepare_workdir(checkout, workdir, corpus)
        print(f"{impl}: running {len(files)} files in {workdir} ({len(linked)} ROMs from {corpus})", flush=True)
        reports[impl] = run_suite(impl, workdir, files, base / f"{impl}.json", args.timeout, extra)
    result = compare(reports["pyboy"], reports["emurust"], files, out_of_scope)
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    result["pyboy_tests_commit"] = commit or None
    header = f"PyBoy's tests at {commit[:10] or checkout}, PyBoy 2.8.1 vs emurust.PyBoy:\n"
    md = to_markdown(result, header)
    print(md)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "pyboy_suite.json").write_text(json.dumps(result, indent=1))
        (args.out / "pyboy_suite.md").write_text(md)
    return 1 if result["only_pyboy_passes"] else 0


if __name__ == "__main__":
    sys.exit(main())
