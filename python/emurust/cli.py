"""emurust: fast Game Boy emulation for reinforcement learning, bit-exact with PyBoy 2.8.1."""

from __future__ import annotations

import argparse
import os
import sys
import time


EPILOG = """\
Run "emurust COMMAND --help" for a command's options.
Exit status: 0 success, 1 a check failed, 2 bad usage or bad input."""

#: Shown while a command is not part of this build yet.
COMING = {"play": "play an embedded game, or watch an agent play it (coming soon)"}


def _command_table(sub: argparse._SubParsersAction, order: list[str]) -> str:
    """The commands and their one-line help, verify's checks expanded (argparse lists only the
    first level, and not commands that are still to come)."""
    helps = {a.dest: a.help or "" for a in getattr(sub, "_choices_actions", [])}
    rows = []
    for name in order + [n for n in helps if n not in order]:
        parser = sub.choices.get(name)
        if parser is None:
            if name in COMING:
                rows.append((name, COMING[name]))
            continue
        inner = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if inner:
            for a in getattr(inner[0], "_choices_actions", []):
                rows.append((f"{name} {a.dest}", a.help or ""))
        else:
            rows.append((name, helps.get(name, "")))
    width = max(len(n) for n, _ in rows) + 2
    return "commands:\n" + "\n".join(f"  {n:<{width}}{h}" for n, h in rows)


class UsageError(Exception):
    """Bad input that the user can fix: reported as one line, exit status 2."""


def _resolve_rom(arg: str | None) -> str:
    """A ROM path from the command line: a file, or the name of an embedded game."""
    import emurust

    if arg is None:
        return emurust.default_rom_path()
    if os.path.isfile(arg):
        return arg
    if arg in emurust.GAMES and not os.path.exists(arg):
        return emurust.game_rom_path(arg)
    if os.path.isdir(arg):
        raise UsageError(f"ROM is a directory, not a file: {arg}")
    raise UsageError(f"ROM not found: {arg}")


def _cmd_run(args: argparse.Namespace) -> int:
    """Play a ROM with a seeded random policy and report speed and, for our games, the score."""
    import random

    import emurust

    if args.frames < 1:
        raise UsageError(f"--frames must be at least 1 (got {args.frames})")
    if args.frame_skip < 1:
        raise UsageError(f"--frame-skip must be at least 1 (got {args.frame_skip})")
    rom = _resolve_rom(args.rom)
    try:
        gb = emurust.GameBoy(rom)
    except emurust.RomError as e:
        raise UsageError(f"cannot run {rom}: {e}") from None
    rng = random.Random(args.seed)
    buttons = list(emurust.BUTTONS)
    t0 = time.perf_counter()
    done = step = 0
    while done < args.frames:
        n = min(args.frame_skip, args.frames - done)
        gb.buttons = 0
        if step % 20 == 5:
            gb.button_press("start")  # begin / restart our games
        else:
            gb.button_press(rng.choice(buttons[:6]))
        done += n
        gb.tick(n, render=done == args.frames)
        step += 1
    dt = time.perf_counter() - t0
    print(f"ROM: {rom} ({gb.title!r})")
    print(f"ran {done} frames ({step} steps of up to {args.frame_skip}) in {dt:.2f} s: {done / dt:,.0f} frames/s on one core")
    if gb.title.startswith("EMURUST"):
        score = gb.read(0xC000) | gb.read(0xC001) << 8
        print(f"score {score}, lives {gb.read(0xC002)}, game over {gb.read(0xC003)}, hiscore {gb.read(0xC009) | gb.read(0xC00A) << 8}")
    if args.screenshot:
        from emurust.verify.png import write_png

        try:
            os.makedirs(os.path.dirname(os.path.abspath(args.screenshot)), exist_ok=True)
            write_png(args.screenshot, gb.screen)
        except OSError as e:
            raise UsageError(f"cannot write the screenshot: {e.strerror}: {args.screenshot}") from None
        print(f"last frame: {args.screenshot}")
    out = gb.serial_output()
    if out:
        print("serial output:")
        print(out.decode("latin-1"))
    return 0


def _add_run_parser(sub) -> None:
    p = sub.add_parser(
        "run",
        help="play a ROM with random buttons and report frames/s (no RL dependencies needed)",
        description="Play a ROM with seeded random buttons (START every 20 steps, to begin or restart "
        "our games) and report frames/s on one core; for the embedded games also the score. "
        "Nothing is written unless --screenshot is given.",
    )
    p.add_argument(
        "rom",
        nargs="?",
        metavar="ROM",
        help="a .gb file, or an embedded game: dodge, snake, runner (default: dodge)",
    )
    p.add_argument("--frames", type=int, default=3600, help="frames to run (default 3600, one minute of Game Boy time)")
    p.add_argument("--frame-skip", type=int, default=4, metavar="K", help="frames per random button choice (default 4)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random buttons (default 0)")
    p.add_argument("--screenshot", metavar="FILE", help="save the last frame as a PNG here (default: none)")
    p.set_defaults(func=_cmd_run)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: every command and its options."""
    parser = argparse.ArgumentParser(
        prog="emurust",
        usage="emurust [-h] [--version] COMMAND ...",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"emurust {__version__}")
    # The command list is written into the description below (argparse's own list shows
    # neither verify's checks nor commands still to come).
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", help=argparse.SUPPRESS, prog="emurust")

    _add_run_parser(sub)

    from . import train as _train

    _train.add_parser(sub)
    from . import play as _play  # emurust play MODEL | --random: returns per episode and a GIF

    _play.add_parser(sub)

    p_verify = sub.add_parser(
        "verify",
        help="check emurust against references: cpu (L1), rollout (L3), transfer (L4), report (L1-L3); pong-* (Pong vs its C reference)",
        description="Verification against references: the SM83 test vectors and PyBoy 2.8.1.",
    )
    vsub = p_verify.add_subparsers(dest="what", required=True, metavar="CHECK")
    from .verify import cpu as vcpu
    from .verify import report as vreport
    from .verify import rollout as vrollout

    vcpu.add_parser(vsub)
    vrollout.add_parser(vsub)
    vrollout.add_make_states_parser(vsub)
    from .verify import transfer as vtransfer

    vtransfer.add_parser(vsub)
    vreport.add_parser(vsub)
    from .verify import pong as vpong  # PufferLib's Pong against its C reference (L2-L4)

    vpong.add_parsers(vsub)

    from . import prompts

    prompts.add_parser(sub)
    from . import bench as _bench
    _bench.add_parser(sub)

    order = ["run", "train", "play", "verify", "prompt", "bench"]
    parser.description = __doc__.strip() + "\n\n" + _command_table(sub, order)
    return parser


_interrupted = False


def main(argv: list[str] | None = None) -> int:
    global _interrupted
    command = "emurust"
    try:
        args = build_parser().parse_args(argv)
        command = f"emurust {args.command}"
        from ._triton import keep_triton_unloaded

        keep_triton_unloaded()  # this process trains without compiled kernels (see _triton)
        return args.func(args)
    except UsageError as e:
        print(f"emurust: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Ctrl-C: one line, no traceback, the shell's status for SIGINT. Files are written
        # whole or not at all (see emurust._atomic), so nothing is left half-written.
        _interrupted = True
        print(f"{command}: interrupted", file=sys.stderr, flush=True)
        return 130


def console() -> None:
    """The `emurust` command (and `python -m emurust`): `main()`, then exit with its status.
    After Ctrl-C the process ends right away: the exit handlers run (logs are flushed), but
    not the interpreter's teardown, which takes seconds once PyTorch is loaded."""
    rc = main()
    if _interrupted:
        import atexit

        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    sys.exit(rc)


if __name__ == "__main__":
    console()
