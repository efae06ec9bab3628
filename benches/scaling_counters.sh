#!/usr/bin/env bash
# Issue 11's scaling question with hardware counters, on the 16-CPU benchmark machine:
# the same work per emulator (Dodge, frame skip 24) as
#   (1) one process, 16 envs on 1 thread             (what one core does)
#   (2) one process, 256 envs on 16 threads          (one batch, Rayon)
#   (3) 16 independent processes, 16 envs on 1 thread each, at the same time
# each under `perf stat` where the machine has perf, else under benches/perf_counters.py (the
# same counters through perf_event_open): cycles, instructions, cache misses, context switches,
# migrations; plus getrusage counts. Prints steps/s, efficiency
# against 16 x (1), and (2) / (3). Environment: SECONDS_EACH (default 8), OUT (default .).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-.}
PY=${PYTHON:-python3}
S=${SECONDS_EACH:-8}
EVENTS=task-clock,context-switches,cpu-migrations,cycles,instructions,cache-references,cache-misses,LLC-load-misses
if command -v perf >/dev/null && perf stat -e cycles true 2>/dev/null; then
    echo "perf: $(perf --version)"
    run() { # name, then the command; its counters go to $OUT/perf-<name>.csv
        local name=$1
        shift
        perf stat -x, -e "$EVENTS" -o "$OUT/perf-$name.csv" "$@"
    }
else
    # No perf tool (the lent machine): the same counters through perf_event_open.
    echo "perf: not installed; counters through benches/perf_counters.py"
    run() {
        local name=$1
        shift
        $PY benches/perf_counters.py --json "$OUT/perf-$name.json" -- "$@"
    }
fi
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
for f in sorted(out.glob("perf-*.csv")) + sorted(out.glob("perf-*.json")):
    if f.suffix == ".csv":
        rows = [l.split(",") for l in f.read_text().splitlines() if l and not l.startswith("#")]
        vals = {r[2]: r[0] for r in rows if len(r) > 2}
    else:
        j = json.loads(f.read_text())
        vals = {k: str(v) for k, v in j["counts"].items()}
        vals.update({k: "n/a" for k in j["unavailable"]})
    try:
        ipc = float(vals["instructions"]) / float(vals["cycles"])
        miss = float(vals["cache-misses"]) / float(vals["cache-references"])
        print(f"{f.stem}: IPC {ipc:.2f}, cache misses {miss:.1%} of references, "
              f"context switches {vals.get('context-switches')}, migrations {vals.get('cpu-migrations')}, "
              f"instructions {float(vals['instructions']):.3e}, cycles {float(vals['cycles']):.3e}")
    except (KeyError, ValueError, ZeroDivisionError):
        print(f"{f.stem}: {vals}")
PYEOF
