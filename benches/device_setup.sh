# Sourced by the device scripts, from the repository root: $OUT (made), $PY, and the carried
# wheels (.whl/, benches/README-device.md) installed into $SITE and put on PYTHONPATH;
# SKIP_INSTALL=1 keeps the current Python environment instead (how scripts are tried here).
OUT=${OUT:-$PWD/device-results}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
SITE=${SITE:-/tmp/site}
if [ -z "${SKIP_INSTALL:-}" ]; then
    $PY -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .whl/*.whl 2>&1 | grep -v "^WARNING"
    export PYTHONPATH=$SITE
fi
export PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
