#!/usr/bin/env python3
"""Generate roms/build/cpu_instrs_tests.inc: the instruction stubs, the group
table and the EXPECTED CRC of every group for cpu_instrs.s.

Each group is a list of stubs (small asm routines run by the drivers in
cpu_instrs.s) plus a reference model of what each stub must produce, written
from the Pan Docs instruction descriptions ("CPU Instruction Set", flags
Z N H C = bits 7 6 5 4 of F).  The generator runs the model over exactly the
same operand loops as the ROM and folds the outputs into a CRC-16/CCITT
(poly 0x1021, init 0xFFFF), which the ROM compares with its own CRC.

Loops (see run_k8 / run_k16 in cpu_instrs.s):
  K8 : for f in FIN: for a in ALIST: for b in BLIST:
         A=a, F=f, B=b; call stub; crc(A); crc(F)
  K16: for f in FIN: for x in W16: for y in W16:
         HL=x, DE=y, A=0, F=f; call stub (it stores a 16-bit result in RES16);
         crc(F); crc(RES16 lo); crc(RES16 hi)
"""
import sys

Z, N, H, C = 0x80, 0x40, 0x20, 0x10

VALS8 = [0x00, 0x01, 0x0F, 0x10, 0x1F, 0x3C, 0x55, 0x7F, 0x80, 0x81, 0x99, 0x9A, 0xAA, 0xF0, 0xFE, 0xFF]
ALL256 = list(range(256))
ONE = [0x00]
FIN2 = [0x10, 0xE0]  # C alone / everything but C: each flag seen both ways
B4 = [0x01, 0x0F, 0x80, 0xFF]
FIN16 = [i << 4 for i in range(16)]
W16 = [0x0000, 0x0001, 0x00FF, 0x0FFF, 0x1000, 0x7FFF, 0x8000, 0xFFFF]
E8 = [0x00, 0x01, 0x0F, 0x10, 0x7F, 0x80, 0xF0, 0xFF]  # ADD SP,e / LD HL,SP+e operands


def crc16(crc, byte):
    crc ^= byte << 8
    for _ in range(8):
        crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        crc &= 0xFFFF
    return crc


def flags(z, n, h, c):
    return (Z if z else 0) | (N if n else 0) | (H if h else 0) | (C if c else 0)


# ---- 8-bit ALU reference (Pan Docs) -------------------------------------
def add(a, b, f, carry=0):
    r = a + b + carry
    return r & 0xFF, flags((r & 0xFF) == 0, 0, (a & 15) + (b & 15) + carry > 15, r > 0xFF)


def sub(a, b, f, carry=0):
    r = a - b - carry
    return r & 0xFF, flags((r & 0xFF) == 0, 1, (a & 15) - (b & 15) - carry < 0, r < 0)


def cf(f):
    return 1 if f & C else 0


def daa(a, f):
    c = f & C
    if not f & N:
        if c or a > 0x99:
            a += 0x60
            c = C
        if f & H or (a & 0x0F) > 9:
            a += 0x06
    else:
        if c:
            a -= 0x60
        if f & H:
            a -= 0x06
    a &= 0xFF
    return a, (Z if a == 0 else 0) | (f & N) | c


def rot(kind, a, f, cb):
    """rotates/shifts; cb=True for the CB-prefixed forms (Z from result)."""
    oc = cf(f)
    if kind == "rlc":
        c = a >> 7; r = (a << 1 | c) & 0xFF
    elif kind == "rrc":
        c = a & 1; r = a >> 1 | c << 7
    elif kind == "rl":
        c = a >> 7; r = (a << 1 | oc) & 0xFF
    elif kind == "rr":
        c = a & 1; r = a >> 1 | oc << 7
    elif kind == "sla":
        c = a >> 7; r = a << 1 & 0xFF
    elif kind == "sra":
        c = a & 1; r = a >> 1 | (a & 0x80)
    elif kind == "srl":
        c = a & 1; r = a >> 1
    elif kind == "swap":
        c = 0; r = (a << 4 | a >> 4) & 0xFF
    return r, flags(cb and r == 0, 0, 0, c)


# ---- groups ---------------------------------------------------------------
# (name, kind, FIN, ALIST, BLIST, [(asm body, model)]) ; model(a,b,f)->(A,F)
# K16 model(x,y,f)->(F, RES16)
groups = []


def g8(name, fin, al, bl, stubs):
    groups.append((name, "K8", fin, al, bl, stubs))


def g16(name, fin, stubs):
    groups.append((name, "K16", fin, W16, W16, stubs))


MEM = "ld hl,#MEMB\n\tld (hl),b\n\t"  # put operand B into memory at (HL)
binops = [
    ("add", lambda a, b, f: add(a, b, f)),
    ("adc", lambda a, b, f: add(a, b, f, cf(f))),
    ("sub", lambda a, b, f: sub(a, b, f)),
    ("sbc", lambda a, b, f: sub(a, b, f, cf(f))),
    ("and", lambda a, b, f: (a & b, flags(a & b == 0, 0, 1, 0))),
    ("xor", lambda a, b, f: (a ^ b, flags(a ^ b == 0, 0, 0, 0))),
    ("or", lambda a, b, f: (a | b, flags(a | b == 0, 0, 0, 0))),
    ("cp", lambda a, b, f: (a, sub(a, b, f)[1])),
]
for op, m in binops:
    dst = "a," if op in ("add", "adc", "sbc") else ""
    g8(f"{op.upper()} A,B", FIN2, VALS8, VALS8, [(f"{op} {dst}b", m)])
    g8(f"{op.upper()} A,C/L", FIN2, VALS8, B4, [(f"ld c,b\n\t{op} {dst}c", m), (f"ld l,b\n\t{op} {dst}l", m)])
    g8(f"{op.upper()} A,(HL)", FIN2, VALS8, VALS8, [(f"{MEM}{op} {dst}(hl)", m)])
g8("ADD A,A", FIN2, VALS8, ONE, [("add a,a", lambda a, b, f: add(a, a, f)), ("adc a,a", lambda a, b, f: add(a, a, f, cf(f))),
                                  ("sub a", lambda a, b, f: sub(a, a, f)), ("sbc a,a", lambda a, b, f: sub(a, a, f, cf(f)))])


def inc8(a, b, f):
    r = (a + 1) & 0xFF
    return r, flags(r == 0, 0, (a & 15) == 15, f & C)


def dec8(a, b, f):
    r = (a - 1) & 0xFF
    return r, flags(r == 0, 1, (a & 15) == 0, f & C)


g8("INC/DEC r", FIN2, VALS8, ONE, [("inc a", inc8), ("dec a", dec8), ("ld d,a\n\tinc d\n\tld a,d", inc8), ("ld e,a\n\tdec e\n\tld a,e", dec8)])
g8("INC/DEC (HL)", FIN2, VALS8, ONE, [("ld hl,#MEMB\n\tld (hl),a\n\tinc (hl)\n\tld a,(hl)", inc8), ("ld hl,#MEMB\n\tld (hl),a\n\tdec (hl)\n\tld a,(hl)", dec8)])
g8("DAA", FIN16, ALL256, ONE, [("daa", lambda a, b, f: daa(a, f))])
g8("CPL/SCF/CCF", FIN16, VALS8, ONE, [
    ("cpl", lambda a, b, f: (a ^ 0xFF, (f & (Z | C)) | N | H)),
    ("scf", lambda a, b, f: (a, (f & Z) | C)),
    ("ccf", lambda a, b, f: (a, (f & Z) | (C - (f & C)))),
])
g8("RLCA/RRCA/RLA/RRA", FIN2, VALS8, ONE, [(k + "a", (lambda k: lambda a, b, f: rot(k, a, f, False))(k)) for k in ("rlc", "rrc", "rl", "rr")])
for k in ("rlc", "rrc", "rl", "rr", "sla", "sra", "srl", "swap"):
    m = (lambda k: lambda a, b, f: rot(k, a, f, True))(k)
    g8(f"{k.upper()} r/(HL)", FIN2, VALS8, ONE, [(f"{k} a", m), (f"ld b,a\n\t{k} b\n\tld a,b", m),
                                                  (f"ld hl,#MEMB\n\tld (hl),a\n\t{k} (hl)\n\tld a,(hl)", m)])
g8("BIT n,r", FIN2, VALS8, ONE, [(f"bit {n},a", (lambda n: lambda a, b, f: (a, flags(not (a >> n) & 1, 0, 1, f & C)))(n)) for n in range(8)]
   + [(f"ld h,a\n\tbit {n},h", (lambda n: lambda a, b, f: (a, flags(not (a >> n) & 1, 0, 1, f & C)))(n)) for n in (0, 7)]
   + [(f"ld hl,#MEMB\n\tld (hl),a\n\tbit {n},(hl)", (lambda n: lambda a, b, f: (a, flags(not (a >> n) & 1, 0, 1, f & C)))(n)) for n in (3, 4)])
g8("RES/SET n,r", FIN2, VALS8, ONE, [(f"res {n},a", (lambda n: lambda a, b, f: (a & ~(1 << n), f))(n)) for n in range(8)]
   + [(f"set {n},a", (lambda n: lambda a, b, f: (a | 1 << n, f))(n)) for n in range(8)]
   + [(f"ld hl,#MEMB\n\tld (hl),a\n\tset 5,(hl)\n\tres 0,(hl)\n\tld a,(hl)", lambda a, b, f: ((a | 0x20) & 0xFE, f))])


# conditional control flow: A=1 when the branch/call/return was taken
def cond(cc):
    return {"nz": lambda f: not f & Z, "z": lambda f: bool(f & Z), "nc": lambda f: not f & C, "c": lambda f: bool(f & C)}[cc]


ctl = []
for cc in ("nz", "z", "nc", "c"):
    t = (lambda t: lambda a, b, f: (1 if t(f) else 0, f))(cond(cc))
    ctl.append((f"ld a,#1\n\tjr {cc},1$\n\tld a,#0\n1$:", t))
    ctl.append((f"ld a,#1\n\tjp {cc},2$\n\tld a,#0\n2$:", t))
    ctl.append((f"ld a,#0\n\tcall {cc},3$\n\tjr 4$\n3$:\tld a,#1\n\tret\n4$:", t))
    ctl.append((f"call 5$\n\tjr 6$\n5$:\tld a,#1\n\tret {cc}\n\tld a,#0\n\tret\n6$:", t))
ctl.append(("ld hl,#7$\n\tld a,#0\n\tjp (hl)\n\tld a,#0x55\n7$:\tld a,#1", lambda a, b, f: (1, f)))
ctl.append(("call 8$\n\tjr 9$\n8$:\tld a,#0x42\n\treti\n9$:", lambda a, b, f: (0x42, f)))
for v in range(0, 0x40, 8):
    ctl.append((f"rst 0x{v:02X}", (lambda v: lambda a, b, f: (v | 0x80, f))(v)))
g8("JR/JP/CALL/RET/RST", FIN16, ONE, ONE, ctl)


def popaf(a, b, f):
    return a, a & 0xF0


g8("PUSH/POP", FIN2, VALS8, ONE, [
    ("ld b,a\n\tld c,a\n\tpush bc\n\tpop af", popaf),
    ("push af\n\tpop de\n\tld a,e", lambda a, b, f: (f, f)),
    ("ld h,a\n\tld l,#0x5A\n\tpush hl\n\tld hl,#0\n\tpop de\n\tld a,d\n\txor e", lambda a, b, f: (a ^ 0x5A, flags(a == 0x5A, 0, 0, 0))),
])


# ---- 16-bit -----------------------------------------------------------------
def addhl(x, y, f):
    r = x + y
    return (f & Z) | (H if (x & 0xFFF) + (y & 0xFFF) > 0xFFF else 0) | (C if r > 0xFFFF else 0), r & 0xFFFF


g16("ADD HL,rr", FIN2, [
    ("add hl,de", addhl),
    ("ld b,d\n\tld c,e\n\tadd hl,bc", addhl),
    ("add hl,hl", lambda x, y, f: addhl(x, x, f)),
    ("ld (SAVE_SP),sp\n\tld sp,hl\n\tld h,d\n\tld l,e\n\tadd hl,sp\n\tld a,(SAVE_SP)\n\tld c,a\n\tld a,(SAVE_SP+1)\n\tld b,a\n\tld a,c\n\tld c,l\n\tld l,a\n\tld a,h\n\tld h,b\n\tld sp,hl\n\tld h,a\n\tld l,c",
     addhl),
])
g16("INC/DEC rr", FIN2, [("inc hl", lambda x, y, f: (f, (x + 1) & 0xFFFF)), ("dec hl", lambda x, y, f: (f, (x - 1) & 0xFFFF)),
                         ("ld h,d\n\tld l,e\n\tinc de\n\tdec hl\n\tld a,e\n\tsub l\n\tld l,a\n\tld a,d\n\tsbc a,h\n\tld h,a\n\tld a,#0\n\tadd a,#0", lambda x, y, f: (Z, 2))])


def spe(x, e, f):
    r = (x + (e - 256 if e & 0x80 else e)) & 0xFFFF
    return flags(0, 0, (x & 15) + (e & 15) > 15, (x & 0xFF) + e > 0xFF), r


g16("ADD SP,e", FIN2, [(f"ld (SAVE_SP),sp\n\tld sp,hl\n\tadd sp,#{e - 256 if e & 0x80 else e}\n\tld (RES16),sp\n\tld hl,#SAVE_SP\n\tld a,(hl+)\n\tld h,(hl)\n\tld l,a\n\tld sp,hl\n\tld hl,#RES16\n\tld a,(hl+)\n\tld h,(hl)\n\tld l,a",
                        (lambda e: lambda x, y, f: spe(x, e, f))(e)) for e in E8])
g16("LD HL,SP+e", FIN2, [(f"ld (SAVE_SP),sp\n\tld sp,hl\n\tldhl sp,#{e - 256 if e & 0x80 else e}\n\tld a,l\n\tld (RES16),a\n\tld a,h\n\tld (RES16+1),a\n\tld hl,#SAVE_SP\n\tld a,(hl+)\n\tld h,(hl)\n\tld l,a\n\tld sp,hl\n\tld hl,#RES16\n\tld a,(hl+)\n\tld h,(hl)\n\tld l,a",
                          (lambda e: lambda x, y, f: spe(x, e, f))(e)) for e in E8])


# ---- emit -------------------------------------------------------------------
def expected(kind, fin, al, bl, stubs):
    crc = 0xFFFF
    for _, m in stubs:
        for f in fin:
            for a in al:
                for b in bl:
                    if kind == "K8":
                        ra, rf = m(a, b, f)
                        for byte in (ra & 0xFF, rf):
                            crc = crc16(crc, byte)
                    else:
                        rf, r = m(a, b, f)
                        for byte in (rf, r & 0xFF, r >> 8):
                            crc = crc16(crc, byte)
    return crc


LISTS = {id(VALS8): "L_VALS8", id(ALL256): "L_ALL256", id(ONE): "L_ONE", id(FIN2): "L_FIN2", id(B4): "L_B4", id(FIN16): "L_FIN16", id(W16): "L_W16"}


def main(out):
    o = ["; generated by roms/gen/cpu_instrs_gen.py -- do not edit", ""]
    o.append("group_table:")
    for gi, (name, kind, fin, al, bl, stubs) in enumerate(groups):
        o.append(f"\t.dw g{gi}_name, {LISTS[id(fin)]}, {LISTS[id(al)]}, {LISTS[id(bl)]}, 0x{expected(kind, fin, al, bl, stubs):04X}")
        o.append(f"\t.db {1 if kind == 'K16' else 0}, {len(stubs)}")
        o.append("\t.dw " + ", ".join(f"g{gi}_s{si}" for si in range(len(stubs))))
    o.append("\t.dw 0  ; end")
    for gi, (name, kind, fin, al, bl, stubs) in enumerate(groups):
        o.append(f"g{gi}_name: .asciz \"{name}\"")
        for si, (body, _) in enumerate(stubs):
            o.append(f"g{gi}_s{si}:\n\t{body}")
            o.append("\tjp store_hl" if kind == "K16" else "\tret")
    open(out, "w").write("\n".join(o) + "\n")
    print(f"cpu_instrs: {len(groups)} groups", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
