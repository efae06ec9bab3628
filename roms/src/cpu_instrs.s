; cpu_instrs: ALU ops and flags, rotates/shifts/bit ops, 16-bit arithmetic,
; ADD SP,e / LD HL,SP+e, jumps/calls/returns/RST, PUSH/POP.
;
; The instruction stubs and the expected CRC of each group come from
; roms/gen/cpu_instrs_gen.py (a Pan Docs reference model), assembled in as
; cpu_instrs_tests.inc.  For every group the ROM runs each stub over the same
; operand/flag loops, folds the results (A and F, or F and a 16-bit result)
; into a CRC-16/CCITT and compares with the expected value.
; Serial log: one line "<group> <crc> ok" per group; failure number = group
; index (1-based) as listed in the log.
USE_RST = 1
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"

	no_interrupt_handlers

CRCT   = 0xD000       ; CRC table: high bytes at D000, low bytes at D100
CRC_HI = VARS+0
CRC_LO = VARS+1
MEMB   = VARS+2       ; scratch byte for (HL) operand forms
SAVE_SP = VARS+3      ; 2 bytes
RES16  = VARS+5       ; 2 bytes, 16-bit result of K16 stubs
TRAMP  = VARS+7       ; 3 bytes: jp <stub>
LF     = VARS+10      ; list pointers of the current group (2 bytes each)
LA     = VARS+12
LB     = VARS+14
EXP    = VARS+16      ; expected CRC (2 bytes, little endian)
iF     = VARS+18
iA     = VARS+19
iB     = VARS+20
GP     = VARS+21      ; pointer into group_table (2 bytes)
GI     = VARS+23      ; group number (1-based)
KIND   = VARS+24
NST    = VARS+25

; rst handlers: A = 0x80 | vector
rst00: ld a,#0x80
	ret
rst08: ld a,#0x88
	ret
rst10: ld a,#0x90
	ret
rst18: ld a,#0x98
	ret
rst20: ld a,#0xA0
	ret
rst28: ld a,#0xA8
	ret
rst30: ld a,#0xB0
	ret
rst38: ld a,#0xB8
	ret

main:
	ld hl,#str_title
	call puts
	call crc_make_table
	call hand_checks
	ld hl,#group_table
	ld a,#1
	ld (GI),a
gloop:
	; HL = group entry: name, LF, LA, LB, EXP, kind, n, stubs...
	ld a,(hl+)
	ld e,a
	ld a,(hl+)
	ld d,a
	or e
	ret z                   ; end of table: all passed
	push de                 ; name
	ld de,#LF
	ld c,#8                 ; copy LF, LA, LB, EXP
1$:	ld a,(hl+)
	ld (de),a
	inc de
	dec c
	jr nz,1$
	ld a,(hl+)
	ld (KIND),a
	ld a,(hl+)
	ld (NST),a
	ld a,#0xFF
	ld (CRC_HI),a
	ld (CRC_LO),a
2$:	; run each stub
	ld a,#0xC3
	ld (TRAMP),a
	ld a,(hl+)
	ld (TRAMP+1),a
	ld a,(hl+)
	ld (TRAMP+2),a
	ld a,l
	ld (GP),a
	ld a,h
	ld (GP+1),a
	ld a,(KIND)
	or a
	jr nz,3$
	call run_k8
	jr 4$
3$:	call run_k16
4$:	ld hl,#GP
	ld a,(hl+)
	ld h,(hl)
	ld l,a
	ld a,(NST)
	dec a
	ld (NST),a
	jr nz,2$
	; report this group
	pop de
	push hl
	ld h,d
	ld l,e
	call puts
	ld a,#' 
	call putc
	ld a,(CRC_HI)
	ld h,a
	ld a,(CRC_LO)
	ld l,a
	call puthex16
	ld a,(EXP)
	cp l
	jr nz,5$
	ld a,(EXP+1)
	cp h
	jr nz,5$
	ld hl,#str_ok
	call puts
	ld hl,#GI
	inc (hl)
	pop hl
	jp gloop
5$:	ld hl,#str_exp
	call puts
	ld a,(EXP+1)
	call puthex8
	ld a,(EXP)
	call puthex8
	call newline
	ld a,(GI)
	ld b,a
	ld a,(CRC_HI)
	jp fail

; run_k8: for f in LF: for a in LA: for b in LB: A=a F=f B=b, call stub,
; crc(A), crc(F)
run_k8:
	xor a
	ld (iF),a
1$:	xor a
	ld (iA),a
2$:	xor a
	ld (iB),a
3$:	ld hl,#LB
	ld a,(iB)
	call list_get
	ld b,a
	ld hl,#LF
	ld a,(iF)
	call list_get
	ld e,a
	ld hl,#LA
	ld a,(iA)
	call list_get
	ld d,a
	push de
	pop af
	call TRAMP
	push af
	pop de
	ld a,d
	call crc_byte
	ld a,e
	call crc_byte
	ld hl,#LB
	ld de,#iB
	call next_index
	jr nz,3$
	ld hl,#LA
	ld de,#iA
	call next_index
	jr nz,2$
	ld hl,#LF
	ld de,#iF
	call next_index
	jr nz,1$
	ret

; run_k16: for f in LF: for x in LA: for y in LB: HL=x DE=y A=0 F=f,
; call stub (which ends in store_hl), crc(F), crc(RES16 lo), crc(RES16 hi)
run_k16:
	xor a
	ld (iF),a
1$:	xor a
	ld (iA),a
2$:	xor a
	ld (iB),a
3$:	ld hl,#LB
	ld a,(iB)
	call list_get16
	push hl
	ld hl,#LA
	ld a,(iA)
	call list_get16
	push hl
	ld hl,#LF
	ld a,(iF)
	call list_get
	ld c,a
	ld b,#0
	pop hl
	pop de
	push bc
	pop af
	call TRAMP
	push af
	pop de
	ld a,e
	call crc_byte
	ld a,(RES16)
	call crc_byte
	ld a,(RES16+1)
	call crc_byte
	ld hl,#LB
	ld de,#iB
	call next_index
	jr nz,3$
	ld hl,#LA
	ld de,#iA
	call next_index
	jr nz,2$
	ld hl,#LF
	ld de,#iF
	call next_index
	jr nz,1$
	ret

; K16 stubs end with `jp store_hl`: RES16 = HL, flags untouched.
store_hl:
	ld a,l
	ld (RES16),a
	ld a,h
	ld (RES16+1),a
	ret

; list_get: HL = address of a list pointer, A = index -> A = list[index].
; Lists are: count byte (0 = 256) followed by the bytes.  Preserves BC, DE.
list_get:
	push de
	ld e,a
	ld a,(hl+)
	ld h,(hl)
	ld l,a
	inc hl
	ld d,#0
	add hl,de
	ld a,(hl)
	pop de
	ret

; list_get16: like list_get for lists of words -> HL = list[index].  Clobbers DE.
list_get16:
	ld e,a
	ld d,#0
	sla e
	rl d
	ld a,(hl+)
	ld h,(hl)
	ld l,a
	inc hl
	add hl,de
	ld a,(hl+)
	ld h,(hl)
	ld l,a
	ret

; next_index: HL = address of list pointer, DE = address of index.
; index += 1; returns NZ while index != count (count 0 = 256 wraps to 0).
next_index:
	ld a,(hl+)
	ld h,(hl)
	ld l,a
	ld a,(de)
	inc a
	ld (de),a
	cp (hl)
	ret

; CRC-16/CCITT table, built at run time (poly 0x1021, MSB first)
crc_make_table:
	ld b,#0
1$:	ld d,b
	ld e,#0
	ld c,#8
2$:	sla e
	rl d
	jr nc,3$
	ld a,d
	xor #0x10
	ld d,a
	ld a,e
	xor #0x21
	ld e,a
3$:	dec c
	jr nz,2$
	ld h,#>CRCT
	ld l,b
	ld (hl),d
	inc h
	ld (hl),e
	inc b
	jr nz,1$
	ret

; crc_byte: crc = (crc << 8) ^ T[(crc >> 8) ^ A].  Preserves BC, DE, HL.
crc_byte:
	push bc
	push hl
	ld hl,#CRC_HI
	xor (hl)
	ld c,a
	inc hl
	ld b,(hl)
	ld h,#>CRCT
	ld l,c
	ld a,(hl)
	xor b
	ld (CRC_HI),a
	inc h
	ld a,(hl)
	ld (CRC_LO),a
	pop hl
	pop bc
	ret

; hand_checks: a few things easier to check directly (failure numbers 100+)
hand_checks:
	; CRC implementation sanity: CRC-16/CCITT-FALSE("123456789") = 0x29B1
	ld a,#0xFF
	ld (CRC_HI),a
	ld (CRC_LO),a
	ld hl,#str_check
1$:	ld a,(hl+)
	or a
	jr z,2$
	call crc_byte
	jr 1$
2$:	ld a,(CRC_HI)
	expect 0x29, 100
	ld a,(CRC_LO)
	expect 0xB1, 101
	; LD (nn),SP stores SP little endian
	ld (SAVE_SP),sp
	ld a,(SAVE_SP)
	expect 0xFC, 102        ; SP = 0xDFFC here (two return addresses pushed)
	ld a,(SAVE_SP+1)
	expect 0xDF, 103
	; LD SP,HL and PUSH writes at SP-1, SP-2 (high byte first at SP-1)
	ld hl,#0xC200
	ld sp,hl
	ld bc,#0x1234
	push bc
	ld sp,#0xDFFC
	ld a,(0xC1FF)
	expect 0x12, 104
	ld a,(0xC1FE)
	expect 0x34, 105
	ret

str_title: .asciz "cpu_instrs\n"
str_ok:    .asciz " ok\n"
str_exp:   .asciz " expected "
str_check: .asciz "123456789"

L_VALS8: .db 16, 0x00,0x01,0x0F,0x10,0x1F,0x3C,0x55,0x7F,0x80,0x81,0x99,0x9A,0xAA,0xF0,0xFE,0xFF
L_ONE:   .db 1, 0x00
L_FIN2:  .db 2, 0x10,0xE0
L_B4:    .db 4, 0x01,0x0F,0x80,0xFF
L_FIN16: .db 16, 0x00,0x10,0x20,0x30,0x40,0x50,0x60,0x70,0x80,0x90,0xA0,0xB0,0xC0,0xD0,0xE0,0xF0
L_W16:   .db 8
	.dw 0x0000,0x0001,0x00FF,0x0FFF,0x1000,0x7FFF,0x8000,0xFFFF
L_ALL256: .db 0
v = 0
	.rept 256
	.db v
v = v + 1
	.endm

	.include "cpu_instrs_tests.inc"
