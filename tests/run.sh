#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need, then runs every test.
# Usage: bash tests/run.sh [--long]   (--long adds the soak runs: 10,000+ frame rollouts)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v sdcc >/dev/null 2>&1 || ! command -v makebin >/dev/null 2>&1; then
  echo "== installing sdcc (Debian package) to rebuild the test ROMs"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq sdcc >/dev/null; else sudo apt-get update -qq && sudo apt-get install -y -qq sdcc >/dev/null; fi
fi

echo "== installing emurust and the test dependencies"
python3 -m pip install -q --upgrade pip >/dev/null 2>&1 || true
python3 -m pip install -q ".[test]"

echo "== cargo tests (core, CPU vectors)"
cargo test -q --release -p emurust-core 2>&1 | tail -n 40

echo "== pytest"
if [ "${1:-}" = "--long" ]; then export EMURUST_LONG=1; fi
python3 -m pytest -q tests
