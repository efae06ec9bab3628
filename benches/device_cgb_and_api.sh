#!/usr/bin/env bash
# On the lent 16-CPU device: CGB vs DMG frames/s of emurust and PyBoy (emurust bench --cgb off,on;
# ten benches at once, each pinned to its own core) and the PyBoy-API env speeds
# (benches/pyboy_api_throughput.py). Needs .whl-eq/ (emurust + pyboy wheels) and .corpus/roms-dev.
# Usage (device): OUT=dir bash benches/device_cgb_and_api.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-eq/*.whl 2>&1 | grep -v WARNING
cp -r python/emurust/. /tmp/site/emurust/
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
lscpu | grep -E "Model name|^CPU\(s\)"
# One bench per ROM (both sound modes in turn), on every other core (hyperthread siblings idle).
k=1
for rom in games/dodge.gb games/runner.gb games/snake.gb .corpus/roms-dev/games/libbet.gb .corpus/roms-dev/games/shock-lobster.gb; do
  n=$(basename $rom .gb)
  taskset -c $k python3 -m emurust.bench --roms $rom --engines emurust,pyboy --patterns render,skip24,no_render --sound on,off --cgb off,on --frames 6000 --repeat 3 --json $OUT/cgb_${n}.json --png '' > $OUT/cgb_${n}.log 2>&1 &
  k=$((k+2))
done
wait
for f in $OUT/cgb_*.log; do sed -n '/^| ROM/,$p' $f | grep -v "^| ROM\|^|---"; done
[ "${SKIP_API:-0}" = 1 ] && exit 0
python3 benches/pyboy_api_throughput.py --roms games/dodge.gb,.corpus/roms-dev/games/shock-lobster.gb --steps 3000 --repeat 3 --num-envs 16 --threads 1,16 --out $OUT/pyboy_api_throughput.json 2>&1 | grep -v SDL
