; short_loops: the short delay, fill and copy loops games run every frame (an emulator may run
; them without its interpreter: crates/emurust-core/src/gameboy/short_loop.rs), with the LCD
; on, in every combination of:
;   - the loop: DEC r / JR NZ (B from 0 = 256, 1, 2 and 37; A from 90), LD (HL+),A / DEC C /
;     JR NZ (160 bytes), LD (HL-),A / DEC E / JR NZ, a fill from DFF8 up across E000 (echo RAM,
;     which mirrors C000: it writes 'R' there), a fill from FFF8 up across IE (FFFF) and into
;     ROM (0000: ignored), LD A,(HL+) / LD (DE),A / INC DE / DEC B or C / JR NZ from ROM and
;     from work RAM onto itself two bytes on, into HRAM across IE, from VRAM (reads depend on
;     the LCD's mode), the 16-bit count copy (DEC BC / LD A,C / OR B or LD A,B / OR C / JR NZ,
;     0x300 bytes from ROM), and the stride fill up to a mark (CP L / RET Z / LD (HL),r /
;     ADD HL,DE or BC / JR, as the first Pokemon games clear their shadow OAM), from L 0x00 and
;     0x10 to A 0xA0, the copies from DE to HL+ (8- and 16-bit counts) and the 16-bit count
;     fill (LD A,D / LD (HL+),A / DEC BC / LD A,B / OR C / JR NZ);
;   - interrupts: none; a timer overflowing every 64 T with IME off (the emulator's time
;     slices end inside the loops); a timer every 256 T and the HBlank STAT interrupt with IME
;     on (handlers between iterations).
; After each loop every register (F included), DIV and LY go into two running sums
; (sums.inc), and after each mode the bytes the loops wrote; the test suite compares the
; machine with PyBoy's at every frame. With no interrupts the ROM checks what the fills and
; copies wrote, and prints the sums.
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"
	.include "sums.inc"

isr_vblank = isr_count
isr_serial = isr_none
isr_joypad = isr_none
isr_timer = isr_count
isr_stat = isr_count

COUNT    = 0xFFF0          ; interrupts handled (HRAM; the HRAM fills end below it)
IME_ON   = 0xFFF1          ; nonzero in the mode with IME on
IE_MODE  = 0xFFF2          ; the mode's IE (the fill across FFFF writes IE)
FILL     = 0xC200          ; 160 bytes
FILL_DN  = 0xC2FF          ; 64 bytes down from here
COPY     = 0xC300          ; 100 bytes from rom_table
OVERLAP  = 0xC380          ; 40 bytes copied 2 on
LONG     = 0xC400          ; 0x300 bytes from ROM 0x0200
MARK     = 0xC700          ; every 4th byte to 0xA0, then every 8th from 0x10
VCOPY    = 0xC7C0          ; 32 bytes from VRAM
DECOPY   = 0xC800          ; 48 bytes from rom_table, DE to HL
LFILL    = 0xC840          ; 0x120 bytes of 0x3C
DELONG   = 0xC980          ; 0x80 bytes from ROM 0x0600, DE to HL

isr_count:
	push af
	ldh a,(COUNT&0xFF)
	inc a
	ldh (COUNT&0xFF),a
	ldh a,(IME_ON&0xFF)
	or a
	jr z,1$
	pop af
	reti
1$:	pop af
	ret

; regs: every register, F, DIV and LY into the sums (keeps every register)
regs:
	push af
	push hl
	push af
	call record             ; A
	pop hl
	ld a,l
	call record             ; F
	pop hl
	ld a,b
	call record
	ld a,c
	call record
	ld a,d
	call record
	ld a,e
	call record
	ld a,h
	call record
	ld a,l
	call record
	ldh a,(rDIV)
	call record
	ldh a,(rLY)
	call record
	pop af
	ret

; sum_bytes: HL = first, BC = count, into the sums
sum_bytes:
	ld a,(hl+)
	call record
	dec bc
	ld a,b
	or c
	jr nz,sum_bytes
	ret

; delay: B = count (DEC B / JR NZ)
delay_b:
1$:	dec b
	jr nz,1$
	jp regs

; fill_to_mark: HL = start, A = mark, B = value, DE = stride; returns when L = A
fill_to_mark_de:
	cp l
	ret z
	ld (hl),b
	add hl,de
	jr fill_to_mark_de

; the same with the stride in BC and the value in A's register pair partner D
fill_to_mark_bc:
	cp l
	ret z
	ld (hl),d
	add hl,bc
	jr fill_to_mark_bc

; loops: every loop once, registers logged after each
loops:
	ld b,#0
	call delay_b
	ld b,#1
	call delay_b
	ld b,#2
	call delay_b
	ld b,#37
	call delay_b
	ld a,#90
1$:	dec a
	jr nz,1$
	call regs
	; fill up, 160 bytes
	ld hl,#FILL
	ld c,#160
	ld a,#0x5A
2$:	ld (hl+),a
	dec c
	jr nz,2$
	call regs
	; fill down, 64 bytes
	ld hl,#FILL_DN
	ld e,#64
	ld a,#0xA5
3$:	ld (hl-),a
	dec e
	jr nz,3$
	call regs
	; fill across E000 (echo RAM mirrors C000: 'R' keeps RESULT as it is)
	ld hl,#0xDFF8
	ld b,#12
	ld a,#'R
4$:	ld (hl+),a
	dec b
	jr nz,4$
	call regs
	; fill across IE and into ROM (writes IE, then 0000: a write to no MBC)
	ld hl,#0xFFF8
	ld d,#10
	ldh a,(IE_MODE&0xFF)
5$:	ld (hl+),a
	dec d
	jr nz,5$
	call regs
	; copy from ROM
	ld hl,#rom_table
	ld de,#COPY
	ld b,#100
6$:	ld a,(hl+)
	ld (de),a
	inc de
	dec b
	jr nz,6$
	call regs
	; copy onto itself two bytes on
	ld hl,#OVERLAP
	ld de,#OVERLAP+2
	ld c,#40
7$:	ld a,(hl+)
	ld (de),a
	inc de
	dec c
	jr nz,7$
	call regs
	; copy into HRAM across IE (the bytes of rom_table there: IE gets one of them)
	ld hl,#rom_table+0x20
	ld de,#0xFFF8
	ld c,#8
8$:	ld a,(hl+)
	ld (de),a
	inc de
	dec c
	jr nz,8$
	ldh a,(IE_MODE&0xFF)
	ldh (rIE),a
	call regs
	; copy from VRAM (what is read depends on the LCD's mode)
	ld hl,#0x9800
	ld de,#VCOPY
	ld c,#32
9$:	ld a,(hl+)
	ld (de),a
	inc de
	dec c
	jr nz,9$
	call regs
	; 16-bit count copies from ROM
	ld hl,#0x0200
	ld de,#LONG
	ld bc,#0x0180
10$:	ld a,(hl+)
	ld (de),a
	inc de
	dec bc
	ld a,c
	or b
	jr nz,10$
	call regs
	ld bc,#0x0180
11$:	ld a,(hl+)
	ld (de),a
	inc de
	dec bc
	ld a,b
	or c
	jr nz,11$
	call regs
	; copies from DE to HL, 8-bit and 16-bit counts
	ld de,#rom_table+0x40
	ld hl,#DECOPY
	ld c,#48
12$:	ld a,(de)
	ld (hl+),a
	inc de
	dec c
	jr nz,12$
	call regs
	ld de,#0x0600
	ld hl,#DELONG
	ld bc,#0x0080
13$:	ld a,(de)
	ld (hl+),a
	inc de
	dec bc
	ld a,c
	or b
	jr nz,13$
	call regs
	; 16-bit count fill, the value in D
	ld hl,#LFILL
	ld bc,#0x0120
	ld d,#0x3C
14$:	ld a,d
	ld (hl+),a
	dec bc
	ld a,b
	or c
	jr nz,14$
	call regs
	; stride fills up to a mark
	ld hl,#MARK
	ld de,#4
	ld b,#0x77
	ld a,#0xA0
	call fill_to_mark_de
	call regs
	ld hl,#MARK+0x10
	ld bc,#8
	ld d,#0x66
	ld a,#0xB0
	call fill_to_mark_bc
	call regs
	ret

; mode: runs the loops, then sums what they wrote (LCD on)
mode:
	call loops
	ld hl,#FILL
	ld bc,#0x0800
	call sum_bytes
	ret

; check: what the loops wrote, with no interrupts (B = failure number base)
check:
	ld hl,#FILL
	ld c,#160
1$:	ld a,(hl+)
	expect 0x5A, 1
	dec c
	jr nz,1$
	ld hl,#FILL_DN-63
	ld c,#64
2$:	ld a,(hl+)
	expect 0xA5, 2
	dec c
	jr nz,2$
	ld hl,#COPY
	ld de,#rom_table
	ld c,#100
3$:	ld a,(de)
	ld b,a
	ld a,(hl+)
	inc de
	cp b
	jr z,4$
	ld b,#3
	jp fail
4$:	dec c
	jr nz,3$
	; every fourth byte of MARK from 0 to 0x9C holds 0x77 (then every eighth from 0x10 to
	; 0xA8 0x66), the others not
	ld a,(MARK+0x9C)
	expect 0x77, 4
	ld a,(MARK+0x9D)
	expect 0x00, 5
	ld a,(MARK+0xA4)
	expect 0x00, 6
	ld a,(MARK+0xA0)
	expect 0x66, 9
	ld a,(MARK+0x18)
	expect 0x66, 7
	; the long copy: ROM 0x0200 + 0x2FF
	ld a,(LONG+0x2FF)
	ld b,a
	ld a,(0x04FF)
	cp b
	jr z,5$
	ld b,#8
	jp fail
5$:	ld a,(LFILL+0x11F)
	expect 0x3C, 10
	ld a,(LFILL+0x120)
	expect 0x00, 11
	ld a,(DECOPY+47)
	expect (47+0x40)^0x5A, 12
	ld a,(DELONG+0x7F)
	ld b,a
	ld a,(0x067F)
	cp b
	jr z,6$
	ld b,#13
	jp fail
6$:	ret

; The fill across E000 writes the top of work RAM, where the stack starts: main moves it
; down and ends in `pass` instead of returning.
main:
	ld sp,#0xDF00
	ld hl,#str_title
	call puts
	ld a,#0x91
	ldh (rLCDC),a
	xor a
	ldh (COUNT&0xFF),a
	; 1. no interrupts
	di
	xor a
	ldh (IME_ON&0xFF),a
	ldh (IE_MODE&0xFF),a
	ldh (rIE),a
	ldh (rTAC),a
	ldh (rSTAT),a
	call mode
	call check
	; 2. timer every 64 T, IME off: time slices end inside the loops
	ld a,#0xFC
	ldh (rTMA),a
	ldh (rTIMA),a
	ld a,#0x05
	ldh (rTAC),a
	ld a,#0x04
	ldh (IE_MODE&0xFF),a
	ldh (rIE),a
	call mode
	; 3. timer every 256 T and HBlank STAT, IME on
	ld a,#0xF0
	ldh (rTMA),a
	ldh (rTIMA),a
	ld a,#0x08
	ldh (rSTAT),a
	ld a,#0x06
	ldh (IE_MODE&0xFF),a
	ldh (rIE),a
	ld a,#1
	ldh (IME_ON&0xFF),a
	xor a
	ldh (rIF),a
	ei
	call mode
	di
	xor a
	ldh (IME_ON&0xFF),a
	ldh (rIE),a
	ldh (rSTAT),a
	ldh (rTAC),a
	ldh (rIF),a
	ldh a,(COUNT&0xFF)
	call record
	ld a,(SUM)
	show str_sum
	ld a,(MIX)
	show str_mix
	jp pass

str_title: .asciz "short_loops\n"
str_sum:   .asciz "sum"
str_mix:   .asciz "mix"

	.include "rom_table.inc"
