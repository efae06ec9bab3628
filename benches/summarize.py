"""Markdown summary of the suite's JSON files (those benches/device_suite.sh writes), against the
targets of issue 5.

    python benches/summarize.py DIR      # reads DIR/{compare,scaling,rl,share,memory}.json
"""

from __future__ import annotations

import json
import pathlib
import sys


def load(d: pathlib.Path, name: str):
    p = d / f"{name}.json"
    if not p.is_file():
        return None
    try:
        return json.loads(p.read_text())
    except json.JSONDecodeError as e:
        return {"error": f"unreadable: {e}"}


def verdict(ok) -> str:
    return "n/a" if ok is None else ("MET" if ok else "not met")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    d = pathlib.Path(argv[0] if argv else "device-results")
    lines: list[str] = []
    cmp = load(d, "compare")
    if cmp and "summary" in cmp:
        m = cmp["machine"]
        lines.append(f"### One core ({m.get('cpu_model')}, load {m.get('loadavg')})")
        lines.append(cmp.get("table_markdown", ""))
        # Issue 11's targets, per pattern, over every ROM and sound mode: 5x PyBoy with one frame in 24
        # drawn and with none drawn, 3x drawing every frame.
        targets = {"render": 3, "skip24": 5, "no_render": 5}
        em = [s for s in cmp["summary"] if s["engine"] == "emurust" and s.get("vs_pyboy")]
        for pattern, target in targets.items():
            got = [s["vs_pyboy"] for s in em if s["pattern"] == pattern]
            if got:
                worst = min(em, key=lambda s: s["vs_pyboy"] if s["pattern"] == pattern else 1e9)
                lines.append(f"- emurust vs PyBoy, {pattern}: min {min(got):.2f}x, median {sorted(got)[len(got) // 2]:.2f}x "
                             f"over {len(got)} ROM x sound cases (worst: {worst['rom']}, sound {worst.get('sound', 'on')}; "
                             f"target {target}x: {verdict(min(got) >= target)})")
        nat = [s for s in cmp["summary"] if s["engine"] in ("gambatte", "mgba")]
        for s in nat:
            e = next((x for x in cmp["summary"] if x["engine"] == "emurust" and x["rom"] == s["rom"]
                      and x["pattern"] == s["pattern"] and x.get("sound", "on") == s.get("sound", "on")), None)
            if e:
                lines.append(f"- emurust / {s['engine']} ({s['rom']}, {s['pattern']}): {e['fps'] / s['fps']:.2f}x")
    sc = load(d, "scaling")
    if sc and "scaling" in sc:
        s = sc["scaling"]
        lines.append(f"\n### Parallel scaling (Batch of {s.get('num_envs')} envs, frame skip 24)")
        lines.append("| threads | steps/s | speedup | efficiency |\n|---:|---:|---:|---:|")
        for r in s.get("rows", []):
            eff = r.get("efficiency")
            lines.append(f"| {r['threads']} | {r['steps_per_s']:,.0f} | {r.get('speedup') or 0:.2f} | "
                         f"{'' if eff is None else f'{100 * eff:.0f}%'} |")
        last = (s.get("rows") or [{}])[-1]
        if last.get("efficiency") is not None:
            lines.append(f"- efficiency at {last['threads']} threads: {100 * last['efficiency']:.0f}% "
                         f"(target 85%: {verdict(last['efficiency'] >= 0.85)})")
    rl = load(d, "rl")
    if rl:
        e = rl.get("envs", {})
        if "emurust_sb3" in e:
            lines.append(f"\n### RL, frame skip 24, {e.get('num_envs')} envs, {e.get('threads')} threads")
            lines.append(f"- envs alone: emurust SB3 VecEnv {e['emurust_sb3']['steps_per_s']:,.0f} steps/s, raw Batch "
                         f"{e['emurust_raw_batch']['steps_per_s']:,.0f}, PyBoy SubprocVecEnv "
                         f"{e.get('pyboy_subproc', {}).get('steps_per_s', float('nan')):,.0f}")
            if e.get("ratio_sb3_vs_pyboy"):
                lines.append(f"- envs alone ratio (SB3 VecEnv vs SubprocVecEnv): {e['ratio_sb3_vs_pyboy']:.2f}x "
                             f"(target 5x: {verdict(e['ratio_sb3_vs_pyboy'] >= 5)})")
        p = rl.get("ppo", {})
        for eng, r in (p.get("runs") or {}).items():
            lines.append(f"- PPO {eng} ({r['params']:,} params, {r['device']}): {r['steps_per_s']:,.0f} steps/s "
                         f"(steady {r.get('steady_steps_per_s', float('nan')):,.0f}), env {100 * r['env_share']:.0f}% of the time")
        if p.get("ratio"):
            lines.append(f"- PPO end to end ratio: {p['ratio']:.2f}x (target 2x: {verdict(p['ratio'] >= 2)})")
    sh = load(d, "share")
    if sh and "share" in sh:
        lines.append("\n### Share of PPO time in the environment")
        lines.append("| engine | policy | params | device | steps/s | env | policy (rollout) | training |\n"
                     "|---|---|---:|---|---:|---:|---:|---:|")
        for r in sh["share"].get("runs", []):
            t = r["seconds"]
            lines.append(f"| {r['engine']} | {r['policy']} | {r['params']:,} | {r['device']} | {r['steps_per_s']:,.0f} | "
                         f"{100 * r['env_s'] / t:.0f}% | {100 * r['policy_in_rollout_s'] / t:.0f}% | {100 * r['train_s'] / t:.0f}% |")
    mem = load(d, "memory")
    if mem and "memory" in mem:
        lines.append("\n### Memory")
        for r in mem["memory"].get("rows", []):
            if "error" in r:
                lines.append(f"- {r['rom']}: {r['error']}")
                continue
            lines.append(f"- {pathlib.Path(r['rom']).name} ({r['rom_bytes'] // 1024} KiB ROM), obs {r['obs']}, "
                         f"N={r['num_envs']}: {r['per_emulator_kb']:.1f} KiB per emulator; one step "
                         f"{r['one_step_s']:.2f} s ({r['steps_per_s']:,.0f} steps/s, {r['threads']} threads)")
        if "rom_shared" in mem["memory"]:
            lines.append(f"- ROM shared: {mem['memory']['rom_shared']} (a 4 MiB ROM adds "
                         f"{mem['memory']['per_emulator_growth_kb_for_4MiB_rom']:.1f} KiB per emulator, i.e. "
                         f"{mem['memory'].get('rom_copies_in_batch', float('nan')):.2f} copies of it in the batch)")
    print("\n".join(lines) if lines else f"no results in {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
