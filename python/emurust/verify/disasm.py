"""A compact SM83 disassembler for divergence reports: one instruction from its bytes.

Encodings from Pan Docs, "CPU Instruction Set" (the x/y/z decomposition of the opcode byte).
"""

from __future__ import annotations

_R = ("B", "C", "D", "E", "H", "L", "(HL)", "A")
_RP = ("BC", "DE", "HL", "SP")
_RP2 = ("BC", "DE", "HL", "AF")
_CC = ("NZ", "Z", "NC", "C")
_ALU = ("ADD A,", "ADC A,", "SUB ", "SBC A,", "AND ", "XOR ", "OR ", "CP ")
_X0Z2 = ("LD (BC),A", "LD A,(BC)", "LD (DE),A", "LD A,(DE)", "LD (HL+),A", "LD A,(HL+)", "LD (HL-),A", "LD A,(HL-)")
_X0Z7 = ("RLCA", "RRCA", "RLA", "RRA", "DAA", "CPL", "SCF", "CCF")
_ROT = ("RLC", "RRC", "RL", "RR", "SLA", "SRA", "SWAP", "SRL")
_ILLEGAL = {0xD3, 0xDB, 0xDD, 0xE3, 0xE4, 0xEB, 0xEC, 0xED, 0xF4, 0xFC, 0xFD}


def disassemble(code: bytes, pc: int = 0) -> tuple[int, str]:
    """(length, text) of the instruction at the start of `code` (located at `pc`, for jumps).
    Operands missing from `code` show as '??'."""
    if not code:
        return 1, "??"
    op = code[0]

    def n8(i=1):
        return f"${code[i]:02X}" if len(code) > i else "$??"

    def n16():
        return f"${code[1] | (code[2] << 8):04X}" if len(code) > 2 else "$????"

    def rel():
        if len(code) < 2:
            return "$????"
        e = code[1] - 256 if code[1] >= 128 else code[1]
        return f"${(pc + 2 + e) & 0xFFFF:04X}"

    x, y, z = op >> 6, (op >> 3) & 7, op & 7
    if op == 0xCB:
        if len(code) < 2:
            return 2, "CB ??"
        cb = code[1]
        cx, cy, cz = cb >> 6, (cb >> 3) & 7, cb & 7
        if cx == 0:
            return 2, f"{_ROT[cy]} {_R[cz]}"
        return 2, f"{('BIT', 'RES', 'SET')[cx - 1]} {cy},{_R[cz]}"
    if op in _ILLEGAL:
        return 1, f"ILLEGAL ${op:02X}"
    if x == 1:
        return 1, "HALT" if op == 0x76 else f"LD {_R[y]},{_R[z]}"
    if x == 2:
        return 1, f"{_ALU[y]}{_R[z]}"
    if x == 0:
        if z == 0:
            if y == 0:
                return 1, "NOP"
            if y == 1:
                return 3, f"LD ({n16()}),SP"
            if y == 2:
                return 2, "STOP"
            if y == 3:
                return 2, f"JR {rel()}"
            return 2, f"JR {_CC[y - 4]},{rel()}"
        if z == 1:
            return (3, f"LD {_RP[y >> 1]},{n16()}") if y % 2 == 0 else (1, f"ADD HL,{_RP[y >> 1]}")
        if z == 2:
            return 1, _X0Z2[y]
        if z == 3:
            return 1, f"{'INC' if y % 2 == 0 else 'DEC'} {_RP[y >> 1]}"
        if z in (4, 5):
            return 1, f"{'INC' if z == 4 else 'DEC'} {_R[y]}"
        if z == 6:
            return 2, f"LD {_R[y]},{n8()}"
        return 1, _X0Z7[y]
    # x == 3
    fixed = {
        0xC3: (3, f"JP {n16()}"), 0xC9: (1, "RET"), 0xCD: (3, f"CALL {n16()}"), 0xD9: (1, "RETI"),
        0xE0: (2, f"LDH (${0xFF00 + code[1]:04X}),A" if len(code) > 1 else "LDH ($FF??),A"),
        0xF0: (2, f"LDH A,(${0xFF00 + code[1]:04X})" if len(code) > 1 else "LDH A,($FF??)"),
        0xE2: (1, "LD ($FF00+C),A"), 0xF2: (1, "LD A,($FF00+C)"),
        0xE8: (2, f"ADD SP,{n8()}"), 0xF8: (2, f"LD HL,SP+{n8()}"),
        0xE9: (1, "JP HL"), 0xF9: (1, "LD SP,HL"),
        0xEA: (3, f"LD ({n16()}),A"), 0xFA: (3, f"LD A,({n16()})"),
        0xF3: (1, "DI"), 0xFB: (1, "EI"),
    }
    if op in fixed:
        return fixed[op]
    if z == 0:
        return 1, f"RET {_CC[y]}"
    if z == 1:
        return 1, f"POP {_RP2[y >> 1]}"
    if z == 2:
        return 3, f"JP {_CC[y]},{n16()}"
    if z == 4:
        return 3, f"CALL {_CC[y]},{n16()}"
    if z == 5:
        return 1, f"PUSH {_RP2[y >> 1]}"
    if z == 6:
        return 2, f"{_ALU[y]}{n8()}"
    return 1, f"RST ${y * 8:02X}"
