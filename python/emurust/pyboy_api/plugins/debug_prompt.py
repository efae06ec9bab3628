"""PyBoy 2.8.1's debug prompt (``PyBoy(rom, breakpoints="0:0150,-1:0,Main")``) for ``emurust.PyBoy``.

``breakpoints`` is a comma-separated list of ``bank:address`` (hexadecimal; bank -1 is the boot
ROM) or symbol labels. When the CPU reaches one that has no hook, the machine's state is printed
and a command read from standard input, as PyBoy does:

- ``c``: continue; ``c LABEL`` / ``c BANK:ADDR``: add that breakpoint and continue;
- ``n`` (or anything not listed): execute one instruction and stop again;
- ``b`` / ``b LABEL``: add a breakpoint (``b`` asks for it); ``bl``: list the breakpoints;
  ``sl``: list the symbols; ``d``: remove the breakpoint at PC; ``pdb``: Python's debugger.

The state printed has PyBoy's register, interrupt and LY lines; where PyBoy prints its internal
counters (the LCD's and timer's cycles to the next interrupt, the sound channel's timers) emurust
prints what its core has (docs/pyboy_api.md).
"""

from __future__ import annotations

from ...verify.disasm import disassemble
from ..log import get_logger

logger = get_logger("pyboy.plugins.debug_prompt")


class DebugPrompt:
    def __init__(self, pyboy, spec: str):
        self.pyboy = pyboy
        for item in (s.strip() for s in spec.split(",")):
            if not item:
                continue
            bank, addr = self.parse(item)
            if bank is None or addr is None:
                logger.error("Couldn't parse address or label: %s", item)
            else:
                pyboy._breakpoint_add(bank, addr)
                logger.info("Added breakpoint for address or label: %s", item)

    def parse(self, text: str):
        """(bank, address) of ``BANK:ADDR`` (hex) or of a symbol label; (None, None) if neither."""
        if ":" in text:
            bank, addr = text.split(":", 1)
            return int(bank, 16), int(addr, 16)
        try:
            return self.pyboy._lookup_symbol(text)
        except ValueError:
            return None, None

    def state_text(self) -> str:
        pb = self.pyboy
        gb = pb._gb
        host = pb._host
        r = gb.registers()
        pc = r["pc"]
        bank = pb._bank_of_pc(pc) if pc >= 0x4000 else 0
        labels = pb.rom_symbols.get(bank, {}).get(pc, [""])
        code = bytes(host.read_cpu((pc + i) & 0xFFFF) for i in range(3))
        length, text = disassemble(code, pc)
        operands = " ".join(f"{b:02X}" for b in code[1:length])
        return (
            "\n"
            f"A: {r['a']:02X}, F: {r['f']:02X}, B: {r['b']:02X}, C: {r['c']:02X}, D: {r['d']:02X}, E: {r['e']:02X}, "
            f"HL: {r['hl']:04X}, SP: {r['sp']:04X}, PC: {pc:04X} ({', '.join(labels)})\n"
            f"Opcode: [{text}] {operands} Interrupts - IME: {bool(r['ime'])}, "
            f"IE: {host.read_cpu(0xFFFF):08b}, IF: {host.read_cpu(0xFF0F) & 0x1F:08b}\n"
            f"LY:{host.read_cpu(0xFF44)}, LYC:{host.read_cpu(0xFF45)}\n"
            f"halted:{bool(r['halted'])}\n"
            f"cycles:{gb.cycles}\n"
        )

    def prompt(self) -> None:
        """PyBoy's read-eval loop at a stop; sets ``pyboy._step_latch`` for a single step."""
        pb = self.pyboy
        try:
            while True:
                if pb._window is not None:
                    pb._window.post_tick()
                print(self.state_text())
                cmd = input()
                if cmd == "c" or cmd.startswith("c "):
                    if cmd.startswith("c "):
                        bank, addr = self.parse(cmd.split(" ", 1)[1])
                        if bank is None or addr is None:
                            print("Couldn't parse address or label!")
                            continue
                        pb._breakpoint_add(bank, addr)
                    pb._step_latch = False
                    return
                if cmd == "sl":
                    for bank, addresses in pb.rom_symbols.items():
                        for addr, label in addresses.items():
                            print(f"{bank:02X}:{addr:04X} {label}")
                elif cmd == "bl":
                    for bank, addr in pb._breakpoints:
                        print(f"{bank:02X}:{addr:04X} {pb.rom_symbols.get(bank, {}).get(addr, '')}")
                elif cmd == "b" or cmd.startswith("b "):
                    where = cmd.split(" ", 1)[1] if cmd.startswith("b ") else input('Write address in the format of "00:0150" or search for a symbol label like "Main"\n')
                    bank, addr = self.parse(where)
                    if bank is None or addr is None:
                        print("Couldn't parse address or label!")
                    else:
                        pb._breakpoint_add(bank, addr)
                elif cmd == "d":
                    print("Removing breakpoint at current PC")
                    pb._breakpoint_waiting = None  # taken out at this stop; not put back
                elif cmd == "pdb":
                    import pdb

                    pdb.set_trace()
                    return
                else:
                    pb._step_latch = True
                    return
        except KeyboardInterrupt:
            pb.quitting = True
