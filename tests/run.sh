#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need, then runs every test.
# Usage: bash tests/run.sh [--long]   (--long adds the soak runs: 10,000+ frame rollouts)
#
# Data: the SM83 vectors are in the repository (tests/data/sm83; SM83_VECTORS overrides).
# The community ROM corpus: EMURUST_TEST_ROMS, default ../shared/data/roms-dev; without it its tests
# skip (in CI, with CI set, they fail).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v sdcc >/dev/null 2>&1 || ! command -v makebin >/dev/null 2>&1; then
  echo "== installing sdcc (Debian package) to rebuild the test ROMs"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq sdcc >/dev/null; else sudo apt-get update -qq && sudo apt-get install -y -qq sdcc >/dev/null; fi
fi

# tests/test_pyboy_window.py: PyBoy's and emurust's SDL2 windows under a virtual display.
if ! command -v Xvfb >/dev/null 2>&1 || ! command -v xdotool >/dev/null 2>&1 || ! command -v xwininfo >/dev/null 2>&1 || ! command -v import >/dev/null 2>&1; then
  echo "== installing xvfb, xdotool, x11-utils, imagemagick (Debian packages) for the window tests"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq xvfb xdotool x11-utils imagemagick >/dev/null; else sudo apt-get update -qq && sudo apt-get install -y -qq xvfb xdotool x11-utils imagemagick >/dev/null; fi
fi

if [ -z "${EMURUST_TEST_ROMS:-}" ] && [ -d ../shared/data/roms-dev ]; then
  EMURUST_TEST_ROMS="$(cd ../shared/data/roms-dev && pwd)"
  export EMURUST_TEST_ROMS
fi
if [ -n "${EMURUST_TEST_ROMS:-}" ] && [ -d "$EMURUST_TEST_ROMS" ]; then
  echo "== community ROM corpus: $EMURUST_TEST_ROMS"
else
  echo "== community ROM corpus: not found; the tests that need it skip (CI: they fail). README: 'Community ROM corpus'"
fi

echo "== installing emurust and the test dependencies"
python3 -m pip install -q --upgrade pip >/dev/null 2>&1 || true
python3 -m pip install -q ".[test]"

echo "== lints: cargo fmt --check, cargo clippy -D warnings"
cargo fmt --all -- --check
cargo clippy -q --workspace --all-targets -- -D warnings
echo "== lints: ruff (Python errors: pyproject.toml [tool.ruff])"
python3 -m ruff check python tests benches tools examples
echo "== types: mypy (pyproject.toml [tool.mypy])"
python3 -m mypy python/emurust

# Debug build: overflow checks on, so arithmetic that would wrap silently in release fails here.
echo "== ($SECONDS s so far) cargo tests, debug build (whole workspace, SM83 vectors included)"
cargo test -q --workspace 2>&1 | tail -n 40

echo "== ($SECONDS s so far) cargo tests, release build (the core as it ships)"
cargo test -q --release -p emurust-core 2>&1 | tail -n 40

echo "== ($SECONDS s so far) pytest"
if [ "${1:-}" = "--long" ]; then export EMURUST_LONG=1; fi
python3 -m pytest -q tests
echo "== all tests passed in $SECONDS s"
