"""The ``emurust`` command line.

    emurust run [ROM] [--frames N]            run a ROM (default: the embedded game) and report
    emurust verify cpu --vectors DIR          SM83 single-step vectors (L1)
    emurust verify rollout ROM --frames N --seed S   emurust vs PyBoy 2.8.1, every frame (L3)
    emurust verify report ROM --out DIR       L1-L3 in one report (report.md, report.json)
    emurust prompt KIND [--set k=v] [--from-file k=PATH] [--out FILE]   recipe prompts (--list)
"""

from __future__ import annotations

import argparse
import sys
import time


def _cmd_run(args: argparse.Namespace) -> int:
    import emurust

    rom = args.rom or emurust.default_rom_path()
    gb = emurust.GameBoy(rom)
    t0 = time.perf_counter()
    gb.tick(args.frames, render=True)
    dt = time.perf_counter() - t0
    regs = gb.registers()
    print(f"ROM: {rom} ({gb.title!r})")
    print(f"ran {args.frames} frames in {dt:.3f} s: {args.frames / dt:,.0f} frames/s")
    print("registers: " + " ".join(f"{k}={v:#06x}" if isinstance(v, int) and not isinstance(v, bool) else f"{k}={v}" for k, v in regs.items()))
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
    p_run.add_argument("--frames", type=int, default=600)
    p_run.set_defaults(func=_cmd_run)

    p_verify = sub.add_parser("verify", help="verification against references")
    vsub = p_verify.add_subparsers(dest="what", required=True)
    from .verify import cpu as vcpu
    from .verify import report as vreport
    from .verify import rollout as vrollout

    vcpu.add_parser(vsub)
    vrollout.add_parser(vsub)
    vreport.add_parser(vsub)

    from . import prompts

    prompts.add_parser(sub)

    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
