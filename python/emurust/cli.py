"""The ``emurust`` command line.

    emurust run [ROM] [--frames N]            play a ROM (default: the embedded game) randomly, report
    emurust verify cpu --vectors DIR          SM83 single-step vectors (L1)
    emurust verify rollout ROM|DIR... --frames N --seed S [--policy P] [--states DIR] [--cgb auto|off]
                                              emurust vs PyBoy 2.8.1, every frame (L3); a table for several
    emurust verify make-states ROM --frames 600,1800 --seed S --out DIR   PyBoy states mid-game
    emurust verify report ROM --out DIR       L1-L3 in one report (report.md, report.json)
    emurust prompt KIND [--set k=v] [--from-file k=PATH] [--out FILE]   recipe prompts (--list)
"""

from __future__ import annotations

import argparse
import sys
import time


def _cmd_run(args: argparse.Namespace) -> int:
    """Play a ROM with a seeded random policy and report speed and, for our games, the score."""
    import random

    import emurust
    from emurust.verify.png import write_png

    rom = args.rom or emurust.default_rom_path()
    gb = emurust.GameBoy(rom)
    rng = random.Random(args.seed)
    buttons = list(emurust.BUTTONS)
    t0 = time.perf_counter()
    steps = args.frames // args.frame_skip
    for step in range(steps):
        gb.buttons = 0
        if step % 20 == 5:
            gb.button_press("start")  # begin / restart our games
        else:
            gb.button_press(rng.choice(buttons[:6]))
        gb.tick(args.frame_skip, render=step == steps - 1)
    dt = time.perf_counter() - t0
    frames = steps * args.frame_skip
    print(f"ROM: {rom} ({gb.title!r})")
    print(f"ran {frames} frames ({steps} steps of {args.frame_skip}) in {dt:.2f} s: {frames / dt:,.0f} frames/s on one core")
    if gb.title.startswith("EMURUST"):
        score = gb.read(0xC000) | gb.read(0xC001) << 8
        print(f"score {score}, lives {gb.read(0xC002)}, game over {gb.read(0xC003)}, hiscore {gb.read(0xC009) | gb.read(0xC00A) << 8}")
    if args.screenshot:
        write_png(args.screenshot, gb.screen)
        print(f"last frame: {args.screenshot}")
    out = gb.serial_output()
    if out:
        print("serial output:")
        print(out.decode("latin-1"))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="emurust", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p_run = sub.add_parser("run", help="run a ROM (default: the embedded game)")
    p_run.add_argument("rom", nargs="?", help="ROM path (default: embedded game)")
    p_run.add_argument("--frames", type=int, default=3600)
    p_run.add_argument("--frame-skip", type=int, default=4)
    p_run.add_argument("--seed", type=int, default=0)
    p_run.add_argument("--screenshot", default="emurust-run.png", help="PNG of the last frame ('' for none)")
    p_run.set_defaults(func=_cmd_run)

    from . import train as _train

    _train.add_parser(sub)

    p_verify = sub.add_parser("verify", help="verification against references")
    vsub = p_verify.add_subparsers(dest="what", required=True)
    from .verify import cpu as vcpu
    from .verify import report as vreport
    from .verify import rollout as vrollout

    vcpu.add_parser(vsub)
    vrollout.add_parser(vsub)
    vrollout.add_make_states_parser(vsub)
    from .verify import transfer as vtransfer

    vtransfer.add_parser(vsub)
    vreport.add_parser(vsub)

    from . import prompts

    prompts.add_parser(sub)
    from . import bench as _bench
    _bench.add_parser(sub)

    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
