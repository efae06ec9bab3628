; lcd_onoff: what a program sees around switching the LCD off and on
; (LCDC bit 7; Pan Docs "LCDC.7 - LCD enable", "STAT", "LY").
;
; Everything the program observes goes into a log in WRAM (LOG, 0xC100..):
; bursts of (STAT, LY) pairs read back to back, STAT/LY right after each
; off/on write, what a STAT interrupt handler sees (ISRLOG), OAM and VRAM
; bytes read right after switching on, and where a HALT waiting for VBlank
; or for a STAT interrupt wakes up. The log is compared with PyBoy at every
; frame, so any difference in the LCD's off/on behaviour shows up in memory.
; Cases:
;  A. off in VBlank; LYC written while off, then on: the first STAT read
;     after switching on (PyBoy reports mode 0 once), LY/STAT over 8 lines
;  B. off outside VBlank at lines 0, 1, 43, 100, 143 in modes 2, 3 and 0,
;     then on again with a different LCDC (BG/objects/8x16/window/tile data)
;  C. STAT interrupts: the mode 0 source enabled while off; LYC=LY=0 with
;     the LYC source when switching on; the mode 2 source in the first frame
;     (line 0 has no mode 2); off in mode 3 with the mode 0 source enabled;
;     off in VBlank with the mode 1 source enabled
;  D. off at LY=153 and the 153 -> 0 wrap read back
;  E. OAM and VRAM reads right after switching on
;  F. HALT waiting for VBlank / for a STAT interrupt in the first frame
;  G. off and on again at once, on and off at once, repeated
;  H. STAT written while off (sources on and off), LY/STAT/LYC flag while off
;  I. the mode override: LY read first, STAT later; LYC written twice while
;     off; off/on twice after one LYC write
;  J. the override pending across frame boundaries: LYC written while off,
;     on, three VBlanks waited with HALT before STAT is read
; Then a sum of the log is printed (`log XXXX`) and the ROM passes.
; Checks with `expect`: LY reads 0 and STAT mode 0 while the LCD is off.
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"

isr_timer = isr_none
isr_serial = isr_none
isr_joypad = isr_none

ISRCNT  = VARS+2        ; STAT interrupts taken
VBLCNT  = VARS+3        ; VBlank interrupts taken
ISRIDX  = VARS+4        ; next free byte of ISRLOG (low byte)
CASEK   = VARS+5        ; loop counters of the cases
CASEM   = VARS+6
LOG_END = 0xD700
ISRLOG  = 0xD800        ; 256-byte ring: (LY, STAT) per STAT interrupt

; ---------------------------------------------------------------- handlers

isr_stat:
	push af
	push hl
	ld a,(ISRCNT)
	inc a
	ld (ISRCNT),a
	ld h,#>ISRLOG
	ld a,(ISRIDX)
	ld l,a
	ldh a,(rLY)
	ld (hl+),a
	ldh a,(rSTAT)
	ld (hl+),a
	ld a,l
	ld (ISRIDX),a
	pop hl
	pop af
	reti

isr_vblank:
	push af
	ld a,(VBLCNT)
	inc a
	ld (VBLCNT),a
	pop af
	reti

	.include "log.inc"

; off_in_vblank: wait for LY=145 (well inside VBlank) and switch the LCD off.
off_in_vblank:
	ldh a,(rLCDC)
	bit 7,a
	ret z
	ld b,#145
	call wait_ly
	xor a
	ldh (rLCDC),a
	ret

; on_normal: LCD on with BG + objects (tile data 8000).
on_normal:
	ld a,#0x93
	ldh (rLCDC),a
	ret

; reset_isr_log: clear the counters and the ring.
reset_isr:
	xor a
	ld (ISRCNT),a
	ld (VBLCNT),a
	ret

; ---------------------------------------------------------------- set-up

setup_video:
	; tiles 0-15: 16 bytes each with a per-tile pattern
	ld hl,#0x8000
	ld c,#0
1$:	ld a,c
	rrca
	rrca
	xor c
	ld (hl+),a
	inc c
	ld a,c
	cp #0                   ; 256 bytes = 16 tiles
	jr nz,1$
	; BG map 9800: tile (x + y) & 15
	ld hl,#0x9800
	ld de,#0x0400
	ld c,#0
2$:	ld a,l
	add a,h
	and #15
	ld (hl+),a
	dec de
	ld a,d
	or e
	jr nz,2$
	; OAM: 40 objects, 10 on each of lines 16-31 (8x8) at spread X, rest off screen
	ld hl,#0xFE00
	ld c,#0
3$:	ld a,c
	cp #10
	jr c,4$
	ld a,#0                 ; Y = 0: not on any line
	jr 5$
4$:	ld a,#32                ; Y = 32: lines 16-23 (8x8), 16-31 (8x16)
5$:	ld (hl+),a
	ld a,c
	swap a
	add a,#3                ; X = 16 c + 3
	ld (hl+),a
	ld a,c
	and #7
	ld (hl+),a              ; tile
	xor a
	ld (hl+),a              ; attributes
	inc c
	ld a,c
	cp #40
	jr nz,3$
	ld a,#0xE4
	ldh (rBGP),a
	ld a,#0xD2
	ldh (0x48),a            ; OBP0
	ld a,#40
	ldh (0x4A),a            ; WY
	ld a,#87
	ldh (0x4B),a            ; WX
	xor a
	ldh (rSCX),a
	ldh (rSCY),a
	ret

; ---------------------------------------------------------------- cases

; LCDC values used when switching back on (case B cycles through them).
lcdc_values:
	.db 0x93, 0x91, 0x80, 0x83, 0x87, 0xB3, 0xE3, 0x81
LCDC_COUNT = 8
; lines and modes at which case B switches off
off_lines:
	.db 0, 1, 43, 100, 143
OFF_LINES = 5

case_a:
	ld a,#'A
	call rec
	call on_normal
	call off_in_vblank
	call rec_sl
	ldh a,(rLY)
	expect 0, 1
	ldh a,(rSTAT)
	and #3
	expect 0, 2
	ld a,#5
	ldh (rLYC),a            ; LYC written while off
	ld c,#50
	call delay
	call rec_sl
	call on_normal
	ld c,#128
	call burst              ; ~8 lines, first STAT read right after the write
	ld c,#0
	call burst_stat         ; 256 more STAT reads (~5 lines)
	ret

case_b:
	ld a,#'B
	call rec
	xor a
	ld (CASEK),a
1$:	; for each line ...
	xor a
	ld (CASEM),a
2$:	; ... and each mode 2, 3, 0
	call on_normal
	ld a,(CASEK)
	ld e,a
	ld d,#0
	ld hl,#off_lines
	add hl,de
	ld b,(hl)
	; wait for the line before, then the line itself (a fresh start of it)
	ld a,b
	or a
	jr nz,3$
	ld b,#153
	call wait_ly
	ld b,#0
	jr 4$
3$:	dec b
	call wait_ly
	inc b
4$:	call wait_ly
	ld a,(CASEM)
	ld e,a
	ld hl,#mode_order
	add hl,de
	ld b,(hl)
	call wait_mode
	xor a
	ldh (rLCDC),a           ; off outside VBlank
	call rec_sl
	ld c,#2
	call burst
	; on again with LCDC from the table (index = (k * 3 + m) & 7)
	ld a,(CASEK)
	ld e,a
	add a,a
	add a,e
	ld e,a
	ld a,(CASEM)
	add a,e
	and #7
	ld e,a
	ld d,#0
	ld hl,#lcdc_values
	add hl,de
	ld a,(hl)
	ldh (rLCDC),a
	ld c,#20
	call burst
	; next mode / line
	ld a,(CASEM)
	inc a
	ld (CASEM),a
	cp #3
	jr nz,2$
	ld a,(CASEK)
	inc a
	ld (CASEK),a
	cp #OFF_LINES
	jr nz,1$
	ret
mode_order:
	.db 2, 3, 0

case_c:
	ld a,#'C
	call rec
	; C1: mode 0 source enabled while off (the line rises in mode 0)
	call off_in_vblank
	call reset_isr
	xor a
	ldh (rSTAT),a
	ldh (rIF),a
	ld a,#0x02
	ldh (rIE),a
	ei
	ld a,#0x08
	ldh (rSTAT),a
	nop
	nop
	ld a,(ISRCNT)
	call rec
	ldh a,(rIF)
	call rec
	; C2: LYC source, LYC = 0: switching on compares LY=0 with LYC
	xor a
	ldh (rSTAT),a
	ldh (rLYC),a
	ld a,#0x40
	ldh (rSTAT),a
	call rec_sl
	call on_normal
	nop
	nop
	ld a,(ISRCNT)
	call rec
	call rec_sl
	; C3: mode 2 source: interrupts over the first frame after switching on
	call off_in_vblank
	call reset_isr
	ld a,#0x20
	ldh (rSTAT),a
	ld a,#0x30
	ldh (rLYC),a
	xor a
	ldh (rIF),a
	call on_normal
	ld b,#144
	call wait_ly
	ld b,#2
	call wait_ly            ; the next frame's line 2
	ld a,(ISRCNT)
	call rec
	; C4: off in mode 3 with the mode 0 source enabled
	ld a,#0x08
	ldh (rSTAT),a
	ld b,#60
	call wait_ly
	ld b,#3
	call wait_mode
	call reset_isr
	xor a
	ldh (rLCDC),a
	nop
	ld a,(ISRCNT)
	call rec
	ldh a,(rIF)
	call rec
	call rec_sl
	call on_normal
	ld c,#8
	call burst
	ld a,(ISRCNT)
	call rec
	; C5: off in VBlank with the mode 1 source enabled, then on
	ld a,#0x10
	ldh (rSTAT),a
	ld b,#150
	call wait_ly
	call reset_isr
	xor a
	ldh (rLCDC),a
	call rec_sl
	ld a,#0x50              ; + LYC source (LYC = 0x30)
	ldh (rSTAT),a
	call on_normal
	ld c,#8
	call burst
	ld a,(ISRCNT)
	call rec
	ld b,#0x31
	call wait_ly
	ld a,(ISRCNT)
	call rec
	di
	xor a
	ldh (rSTAT),a
	ldh (rIE),a
	ldh (rIF),a
	ret

case_d:
	ld a,#'D
	call rec
	call on_normal
	ld b,#152
	call wait_ly
	ld c,#40
	call burst              ; 152 -> 153 -> 0 -> 1
	ld b,#153
	call wait_ly
	xor a
	ldh (rLCDC),a           ; off at LY=153
	call rec_sl
	call on_normal
	ld c,#40
	call burst
	ret

case_e:
	ld a,#'E
	call rec
	call off_in_vblank
	ld a,#0x5A
	ld (0xFE00),a
	ld a,#0xA5
	ld (0x8000),a
	call on_normal
	ld hl,#0xFE00
	ld de,#0x8000
	ld c,#60
1$:	ld a,(hl)               ; OAM
	call rec
	ld a,(de)               ; VRAM
	call rec
	ldh a,(rSTAT)
	call rec
	dec c
	jr nz,1$
	; writes right after switching on: OAM 04 and VRAM 8010 at many points
	call off_in_vblank
	call on_normal
	ld hl,#0xFE04
	ld c,#24
2$:	ld a,c
	ld (hl),a
	ld (0x8010),a
	ld a,(hl)
	call rec
	ld a,(0x8010)
	call rec
	dec c
	jr nz,2$
	ret

case_f:
	ld a,#'F
	call rec
	; F1: HALT for VBlank in the first frame after switching on
	call off_in_vblank
	call reset_isr
	xor a
	ldh (rIF),a
	ld a,#0x01
	ldh (rIE),a
	call on_normal
	ei
	halt
	nop
	di
	call rec_sl
	ld a,(VBLCNT)
	call rec
	; F2: HALT for the mode 0 STAT interrupt right after switching on
	call off_in_vblank
	call reset_isr
	ld a,#0x08
	ldh (rSTAT),a
	xor a
	ldh (rIF),a
	ld a,#0x02
	ldh (rIE),a
	call on_normal
	ei
	halt
	nop
	di
	call rec_sl
	ld a,(ISRCNT)
	call rec
	; F3: HALT with IME=0 for the LYC interrupt (LYC = 3) after switching on
	call off_in_vblank
	ld a,#3
	ldh (rLYC),a
	ld a,#0x40
	ldh (rSTAT),a
	xor a
	ldh (rIF),a
	ld a,#0x02
	ldh (rIE),a
	call on_normal
	halt
	nop
	call rec_sl
	ldh a,(rIF)
	call rec
	xor a
	ldh (rIF),a
	ldh (rIE),a
	ldh (rSTAT),a
	ret

case_g:
	ld a,#'G
	call rec
	call on_normal
	ld b,#70
	call wait_ly
	; off and on again at once
	xor a
	ldh (rLCDC),a
	ld a,#0x93
	ldh (rLCDC),a
	ld c,#16
	call burst
	; on and off at once (the restart never runs)
	xor a
	ldh (rLCDC),a
	ld a,#0x93
	ldh (rLCDC),a
	xor a
	ldh (rLCDC),a
	call rec_sl
	ld c,#100
	call delay
	call rec_sl
	; repeated, with the LYC source enabled and LYC = 0
	call reset_isr
	xor a
	ldh (rLYC),a
	ld a,#0x40
	ldh (rSTAT),a
	xor a
	ldh (rIF),a
	ld a,#0x02
	ldh (rIE),a
	ei
	ld c,#6
1$:	ld a,#0x93
	ldh (rLCDC),a
	xor a
	ldh (rLCDC),a
	call rec_sl
	dec c
	jr nz,1$
	ld a,#0x93
	ldh (rLCDC),a
	ld c,#16
	call burst
	di
	ld a,(ISRCNT)
	call rec
	xor a
	ldh (rSTAT),a
	ldh (rIE),a
	ret

case_h:
	ld a,#'H
	call rec
	call on_normal
	ld a,#20
	ldh (rLYC),a
	ld b,#20
	call wait_ly            ; coincidence flag set ...
	ld b,#0
	call wait_mode
	xor a
	ldh (rLCDC),a           ; ... and kept while off?
	call rec_sl
	ld a,#0x78
	ldh (rSTAT),a           ; every source on while off
	call rec_sl
	ld a,#0xFF
	ldh (rSTAT),a           ; read-only bits stay
	call rec_sl
	xor a
	ldh (rSTAT),a
	call rec_sl
	ld a,#0x12
	ldh (rLY),a             ; LY is read-only
	call rec_sl
	ld a,#20
	ldh (rLYC),a
	call rec_sl
	ld a,#0
	ldh (rLYC),a
	call rec_sl
	call on_normal
	ld c,#4
	call burst
	ret

case_i:
	ld a,#'I
	call rec
	; I1: LYC written while off; LY read first, then STAT twice
	call off_in_vblank
	ld a,#9
	ldh (rLYC),a
	call on_normal
	ld c,#30
	call delay
	ldh a,(rLY)
	call rec
	ldh a,(rSTAT)
	call rec
	ldh a,(rSTAT)
	call rec
	; I2: LYC written twice while off, off/on twice
	call off_in_vblank
	ld a,#1
	ldh (rLYC),a
	ld a,#2
	ldh (rLYC),a
	call on_normal
	xor a
	ldh (rLCDC),a
	call on_normal
	ldh a,(rSTAT)
	call rec
	ldh a,(rSTAT)
	call rec
	; I3: LYC written while off, the STAT read comes much later (line 100)
	call off_in_vblank
	ld a,#100
	ldh (rLYC),a
	call on_normal
	ld b,#100
	call wait_ly
	ldh a,(rSTAT)
	call rec
	ldh a,(rSTAT)
	call rec
	; I4: LYC written while on, then off/on: no override
	call on_normal
	ld a,#7
	ldh (rLYC),a
	call off_in_vblank
	call on_normal
	ldh a,(rSTAT)
	call rec
	ret

case_j:
	ld a,#'J
	call rec
	call off_in_vblank
	ld a,#0x44
	ldh (rLYC),a
	call reset_isr
	xor a
	ldh (rIF),a
	ld a,#0x01
	ldh (rIE),a
	call on_normal
	ei
1$:	halt
	nop
	ld a,(VBLCNT)
	cp #3
	jr nz,1$
	di
	ldh a,(rLY)
	call rec
	ldh a,(rSTAT)
	call rec
	ldh a,(rSTAT)
	call rec
	xor a
	ldh (rIE),a
	ret

main:
	ld hl,#str_title
	call puts
	call log_init
	call off_in_vblank
	call setup_video
	call case_a
	call case_b
	call case_c
	call case_d
	call case_e
	call case_f
	call case_g
	call case_h
	call case_i
	call case_j
	jp print_log_sum

str_title: .asciz "lcd_onoff\n"
