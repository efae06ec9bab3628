#!/usr/bin/env bash
# Issue 11's scaling question with hardware counters, on the 16-CPU benchmark machine:
# the same work per emulator (Dodge, frame skip 24) as
#   (1) one process, 16 envs on 1 thread             (what one core does)
#   (2) one process, 256 envs on 16 threads          (one batch, Rayon)
#   (3) 16 independent processes, 16 envs on 1 thread each, at the same time
# each under `perf stat` where the machine has perf (cycles, instructions, cache misses,
# context switches, migrations), else with getrusage counts only. Prints steps/s, efficiency
# against 16 x (1), and (2) / (3). Environment: SECONDS_EACH (default 8), OUT (default .).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-.}
PY=${PYTHON:-python3}
S=${SECONDS_EACH:-8}
EVENTS=task-clock,context-switches,cpu-migrations,cycles,instructions,cache-references,cache-misses,LLC-load-misses
if command -v perf >/dev/null && perf stat -e cycles true 2>/dev/null; then
    PERF=(perf stat -x, -e "$EVENTS")
    echo "perf: $(perf --version)"
else
    PERF=()
    echo "perf: not available here (getrusage counts only)"
fi
run() { # name, then the command; its perf CSV goes to $OUT/perf-<name>.csv
    local name=$1
    shift
    if ((${#PERF[@]})); then
        "${PERF[@]}" -o "$OUT/perf-$name.csv" "$@"
    else
        "$@"
    fi
}
U=benches/scaling_counters.py
run one_core $PY $U --envs 16 --threads 1 --seconds "$S" | tee "$OUT/one_core.json"
run batch_256x16 $PY $U --envs 256 --threads 16 --seconds "$S" | tee "$OUT/batch.json"
run procs_16x16x1 bash -c "for i in \$(seq 0 15); do $PY $U --envs 16 --threads 1 --seconds $S --seed \$i & done; wait" \
    | tee "$OUT/procs.json"
$PY - "$OUT" <<'PYEOF'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
one = json.loads((out / "one_core.json").read_text())["steps_per_s"]
batch = json.loads((out / "batch.json").read_text())["steps_per_s"]
procs = sum(json.loads(l)["steps_per_s"] for l in (out / "procs.json").read_text().splitlines() if l.strip())
print(f"one core (16 envs, 1 thread): {one:,.0f} steps/s")
print(f"one batch, 256 envs on 16 threads: {batch:,.0f} steps/s, efficiency {batch / (16 * one):.0%}")
print(f"16 processes x 16 envs x 1 thread: {procs:,.0f} steps/s, efficiency {procs / (16 * one):.0%}")
print(f"batch / processes: {batch / procs:.2f}")
for f in sorted(out.glob("perf-*.csv")):
    rows = [l.split(",") for l in f.read_text().splitlines() if l and not l.startswith("#")]
    vals = {r[2]: r[0] for r in rows if len(r) > 2}
    try:
        ipc = float(vals["instructions"]) / float(vals["cycles"])
        miss = float(vals["cache-misses"]) / float(vals["cache-references"])
        print(f"{f.stem}: IPC {ipc:.2f}, cache misses {miss:.1%} of references, "
              f"context switches {vals.get('context-switches')}, migrations {vals.get('cpu-migrations')}, "
              f"LLC load misses {vals.get('LLC-load-misses')}")
    except (KeyError, ValueError, ZeroDivisionError):
        print(f"{f.stem}: {vals}")
PYEOF
