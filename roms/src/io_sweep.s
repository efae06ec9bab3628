; io_sweep: the I/O map outside the APU (FF00-FF0F, FF40-FF7F, IE) as a
; program sees it (Pan Docs "Memory Map", "I/O Ranges", "OAM DMA", "Timer
; and Divider Registers", "Timer obscure behaviour").
; Every value read goes into the log in WRAM (LOG, see log.inc), compared
; with PyBoy at every frame:
;  1. every register read with the LCD off and at the start of each PPU mode
;     (2, 3, 0, 1), unused bits, write-only and unmapped addresses included
;  2. every register written with 00 and FF and read back (FF40 and FF46 are
;     left to their own sections; SC never gets the start bit here)
;  3. OAM DMA: what reads of OAM, ROM, VRAM, WRAM, echo RAM, FEA0, I/O and
;     HRAM return while a transfer runs; (HL)-reads of OAM; OAM writes during
;     a transfer; a restart; sources in VRAM, cartridge RAM (none), echo
;     RAM, FE and FF pages; the moment bytes are copied from a source that is
;     changed while the transfer runs, after writes to LY (FF44), to an
;     unmapped register (FF4C) and to FF03, and after HRAM and IE reads and
;     writes and instruction fetches from HRAM (all of them make PyBoy's
;     transfer catch up)
;  4. DIV and TIMA: a DIV write at every M-cycle of the timer period (all four
;     TAC rates), TAC changes at every phase, the TIMA overflow, reload and
;     writes to TIMA/TMA around it
;  5. P1 with every select value, IE as 8 bits, IF upper bits
; Checks with `expect` (Pan Docs facts PyBoy follows): IF reads 111xxxxx,
; TAC reads 11111xxx, unmapped FF4C-FF7F read FF, OAM reads FF during DMA.
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"

	no_interrupt_handlers

LOG_END = 0xDE00
SRC     = 0xDF00        ; DMA source (DF00-DF9F; the stack stays above it)
	.include "log.inc"

; ---------------------------------------------------------------- helpers

; delay_n: A M-cycles (0..64) plus a constant. Clobbers A, DE, HL.
delay_n:
	ld e,a
	ld hl,#slide_end
	ld a,l
	sub e
	ld l,a
	ld a,h
	sbc a,#0
	ld h,a
	jp (hl)
slide:
	.rept 64
	nop
	.endm
slide_end:
	ret

; next_reg: C = the I/O register after C in the sweep (FF00-FF0F, FF40-FF7F),
; Z set when the sweep is over (C wrapped to 0x80).
next_reg:
	inc c
	ld a,c
	cp #0x10
	jr nz,1$
	ld c,#0x40
1$:	ld a,c
	cp #0x80
	ret

; wait_fresh_mode: B = mode; poll until STAT leaves it, then until it enters
; it again (mode 1: only the second part). Clobbers A.
wait_fresh_mode:
	ld a,b
	cp #1
	jr z,2$
1$:	ldh a,(rSTAT)
	and #3
	cp b
	jr z,1$
2$:	ldh a,(rSTAT)
	and #3
	cp b
	jr nz,2$
	ret

; ---------------------------------------------------------------- 1. reads

read_sweep_off:
	call lcd_off
	ld c,#0
1$:	ldh a,(c)
	call rec
	call next_reg
	jr nz,1$
	ret

; read_sweep_mode: B = mode, LCD on.
read_sweep_mode:
	ld a,#0x93
	ldh (rLCDC),a
	ld c,#0
1$:	call wait_fresh_mode
	ldh a,(c)
	call rec
	call next_reg
	jr nz,1$
	ret

sweep_reads:
	ld a,#'1
	call rec
	; the LYC flag differs per mode: LYC = 0x50
	ld a,#0x50
	ldh (rLYC),a
	call read_sweep_off
	ld b,#2
	call read_sweep_mode
	ld b,#3
	call read_sweep_mode
	ld b,#0
	call read_sweep_mode
	ld b,#1
	call read_sweep_mode
	; IE as 8 bits, IF upper bits
	ld a,#0xE5
	ldh (rIE),a
	ldh a,(rIE)
	call rec
	xor a
	ldh (rIE),a
	ldh (rIF),a
	ldh a,(rIF)
	call rec
	and #0xE0
	expect 0xE0, 1
	ret

; ---------------------------------------------------------------- 2. writes

; write_back: write D to register C, record what it reads back.
write_back:
	ld a,d
	ldh (c),a
	ldh a,(c)
	jp rec

sweep_writes:
	ld a,#'2
	call rec
	ld a,#0x93
	ldh (rLCDC),a
	ld c,#0
1$:	ld a,c
	cp #rLCDC
	jr z,3$
	cp #rDMA
	jr z,3$
	cp #rSC
	jr z,2$
	ld d,#0x00
	call write_back
	ld d,#0xFF
	call write_back
	ld d,#0x5A
	call write_back
	jr 3$
2$:	ld d,#0x00              ; SC: never the start bit
	call write_back
	ld d,#0x7F
	call write_back
	ld d,#0x01
	call write_back
3$:	call next_reg
	jr nz,1$
	; restore what the sweep changed
	xor a
	ldh (rTAC),a
	ldh (rSTAT),a
	ldh (rIF),a
	ldh (rSCX),a
	ldh (rSCY),a
	ld a,#0xE4
	ldh (rBGP),a
	; checks: TAC reads 11111xxx, unmapped registers read FF
	ld a,#0x05
	ldh (rTAC),a
	ldh a,(rTAC)
	expect 0xFD, 2
	xor a
	ldh (rTAC),a
	ld a,#0x00
	ldh (0x4C),a
	ldh a,(0x4C)
	expect 0xFF, 3
	ldh a,(0x7F)
	expect 0xFF, 4
	ret

; ---------------------------------------------------------------- 3. OAM DMA

; fill_src: SRC..SRC+9F = i * 3 + A
fill_src:
	ld hl,#SRC
	ld c,#160
1$:	ld (hl+),a
	add a,#3
	dec c
	jr nz,1$
	ret

; rec_oam: record OAM bytes 0, 1, 2, 40, 80, 120, 158, 159 and the sum of all.
rec_oam:
	ld a,(0xFE00)
	call rec
	ld a,(0xFE01)
	call rec
	ld a,(0xFE02)
	call rec
	ld a,(0xFE28)
	call rec
	ld a,(0xFE50)
	call rec
	ld a,(0xFE78)
	call rec
	ld a,(0xFE9E)
	call rec
	ld a,(0xFE9F)
	call rec
	ld hl,#0xFE00
	ld c,#160
	xor a
1$:	add a,(hl)
	inc hl
	dec c
	jr nz,1$
	jp rec

; wait_dma: long enough for any transfer to end (no I/O, no OAM access)
wait_dma:
	ld c,#60
	jp delay

; dma_reads: start a transfer from SRC and read many areas while it runs.
dma_reads:
	ld a,#>SRC
	ldh (rDMA),a
	ld a,(0xFE00)
	ld b,a
	ld a,(0xFE01)
	ld c,a
	ld a,(0xFE9F)
	ld d,a
	ld a,(0x0150)           ; ROM bank 0
	ld e,a
	ld a,(0x4000)           ; ROM bank 1
	ld h,a
	ld a,(0x8000)           ; VRAM
	ld l,a
	push hl
	push de
	push bc
	ld a,(0xC001)           ; WRAM
	ld b,a
	ld a,(0xE001)           ; echo
	ld c,a
	ld a,(0xFEA0)           ; unusable area
	ld d,a
	ldh a,(rSTAT)
	ld e,a
	ldh a,(rDMA)
	ld h,a
	ldh a,(0x80)            ; HRAM
	ld l,a
	push hl
	push de
	push bc
	ld hl,#0xFE00
	ld a,(hl)               ; (HL) read of OAM
	ld b,a
	ld hl,#0xFE10
	ld a,(hl)
	ld c,a
	ld a,(0xFE10)
	ld d,a
	push bc
	push de
	call wait_dma
	ld a,(0xFE00)           ; after the end
	call rec
	pop de
	pop bc
	ld a,b
	call rec
	ld a,c
	call rec
	ld a,d
	call rec
	ld c,#6
1$:	pop hl                  ; the 12 values pushed above, in reverse
	ld a,h
	call rec
	ld a,l
	call rec
	dec c
	jr nz,1$
	ret

; dma_from: A = source page; start, wait, record OAM.
dma_from:
	ldh (rDMA),a
	call wait_dma
	jp rec_oam

sweep_dma:
	ld a,#'3
	call rec
	ld a,#0x11
	call fill_src
	ld a,#0x80
	ldh (0x80),a
	; 3a. reads during a transfer, LCD off, then on in VBlank, then on at line 20
	call lcd_off
	call dma_reads
	ld a,#0x93
	ldh (rLCDC),a
	call wait_ly144
	call dma_reads
	ld b,#20
	call wait_ly
	call dma_reads
	; 3b. OAM writes during a transfer; a restart at once and a bit later
	call lcd_off
	ld a,#0x22
	call fill_src
	ld a,#>SRC
	ldh (rDMA),a
	ld a,#0x99
	ld (0xFE05),a
	ld (0xFE9F),a
	call wait_dma
	call rec_oam
	ld a,#0x33
	call fill_src
	ld a,#>SRC
	ldh (rDMA),a
	ldh (rDMA),a            ; restart before the first byte
	call wait_dma
	call rec_oam
	ld a,#0x44
	call fill_src
	ld a,#>SRC
	ldh (rDMA),a
	ld c,#8
	call delay
	ld a,#>rom_table
	ldh (rDMA),a            ; restart in the middle, from ROM
	call wait_dma
	call rec_oam
	; 3c. other sources
	ld a,#0x80              ; VRAM (LCD off)
	call dma_from
	ld a,#0xA0              ; cartridge RAM: none on this cartridge
	call dma_from
	ld a,#0xE0              ; echo RAM
	call dma_from
	ld a,#0xFE              ; FE -> DE on the DMG (PyBoy)
	call dma_from
	ld a,#0xFF              ; FF -> DF
	call dma_from
	ld a,#0x00              ; ROM
	call dma_from
	ld a,#0x93
	ldh (rLCDC),a
	ld b,#30
	call wait_ly
	ld b,#3
	call wait_mode
	ld a,#0x80              ; VRAM while the LCD draws
	call dma_from
	; 3d. when are the bytes copied? The source changes while the transfer
	; runs, right after a write to FF44, FF4C or FF03.
	call lcd_off
	ld b,#0x44
	call dma_change_src
	ld b,#0x4C
	call dma_change_src
	ld b,#0x03
	call dma_change_src
	ld a,#0x93
	ldh (rLCDC),a
	call wait_ly144
	ld b,#0x44
	call dma_change_src
	ld b,#10
	call wait_ly
	ld b,#0x44
	call dma_change_src
	ld b,#0x4C
	call dma_change_src
	; 3e. HRAM and IE accesses and HRAM instruction fetches let the transfer
	; catch up in PyBoy (its I/O path handles FF80-FFFF too)
	call lcd_off
	ld hl,#hram_code
	ld de,#HRAM_CODE
	ld c,#(hram_code_end-hram_code)
1$:	ld a,(hl+)
	ld (de),a
	inc de
	dec c
	jr nz,1$
	ld d,#0
	ld b,#0x80              ; HRAM write
	call dma_change_src_d
	ld d,#1
	ld b,#0x81              ; HRAM read
	call dma_change_src_d
	ld d,#0
	ld b,#0xFF              ; IE write
	call dma_change_src_d
	ld d,#1
	ld b,#0xFF              ; IE read
	call dma_change_src_d
	ld d,#2
	call dma_change_src_d   ; code in HRAM
	xor a
	ldh (rIE),a
	ret

HRAM_CODE = 0xFF90
hram_code:
	nop
	nop
	ret
hram_code_end:

; dma_change_src: B = register to write after starting the transfer; the
; source is then rewritten with a new pattern using WRAM writes only.
dma_change_src:
	ld d,#0
; dma_change_src_d: the same with D = 0: write B, 1: read B, 2: run the code
; at HRAM_CODE (instruction fetches from HRAM).
dma_change_src_d:
	ld a,#0x01
	push de
	call fill_src
	ld a,#>SRC
	ldh (rDMA),a
	ld a,#8
	call delay_n
	pop de
	ld c,b
	ld a,d
	or a
	jr nz,1$
	ld a,#0x12
	ldh (c),a
	jr 3$
1$:	dec a
	jr nz,2$
	ldh a,(c)
	jr 3$
2$:	call HRAM_CODE
3$:	ld a,#0x80
	call fill_src
	call wait_dma
	jp rec_oam

; ---------------------------------------------------------------- 4. timer

; div_edge: TAC = B; for n = 0..63: reset DIV, wait n M-cycles, write DIV
; again, record TIMA.
div_edge:
	ld a,b
	ldh (rTAC),a
	ld c,#0
1$:	xor a
	ldh (rTIMA),a
	ldh (rDIV),a
	ld a,c
	call delay_n
	ldh (rDIV),a
	ldh a,(rTIMA)
	call rec
	inc c
	ld a,c
	cp #64
	jr nz,1$
	xor a
	ldh (rTAC),a
	ret

; div_edge_slow: TAC = 4 (1024 T): the same with waits of 4 n M-cycles.
div_edge_slow:
	ld a,#4
	ldh (rTAC),a
	ld b,#0
1$:	xor a
	ldh (rTIMA),a
	ldh (rDIV),a
	ld a,b
	or a
	jr z,2$
	ld c,b
	call delay
2$:	ldh (rDIV),a
	ldh a,(rTIMA)
	call rec
	inc b
	ld a,b
	cp #64
	jr nz,1$
	xor a
	ldh (rTAC),a
	ret

; tac_edge: TAC = B, then after n M-cycles TAC = D (n = 0..63), record TIMA.
tac_edge:
	ld c,#0
1$:	ld a,b
	ldh (rTAC),a
	xor a
	ldh (rTIMA),a
	ldh (rDIV),a
	ld a,c
	push de
	call delay_n
	pop de
	ld a,d
	ldh (rTAC),a
	ldh a,(rTIMA)
	call rec
	inc c
	ld a,c
	cp #64
	jr nz,1$
	xor a
	ldh (rTAC),a
	ret

; overflow: TAC=5 (16 T), TMA = 0x80, TIMA = 0xFE, after n M-cycles
; (n = 0..31): record TIMA and IF; then the same with a TIMA write
; (value 0x10) or a TMA write (0x90) at that point, read 3 M-cycles later.
overflow:
	ld c,#0
1$:	call ovf_start
	ldh a,(rTIMA)
	call rec
	ldh a,(rIF)
	call rec
	call ovf_start
	ld a,#0x10
	ldh (rTIMA),a
	ldh a,(rTIMA)
	call rec
	call ovf_start
	ld a,#0x90
	ldh (rTMA),a
	ldh a,(rTIMA)
	call rec
	ldh a,(rIF)
	call rec
	inc c
	ld a,c
	cp #32
	jr nz,1$
	xor a
	ldh (rTAC),a
	ldh (rIF),a
	ret
ovf_start:
	xor a
	ldh (rTAC),a
	ldh (rIF),a
	ldh (rDIV),a
	ld a,#0x80
	ldh (rTMA),a
	ld a,#0xFE
	ldh (rTIMA),a
	ld a,#5
	ldh (rTAC),a
	ld a,c
	jp delay_n

sweep_timer:
	ld a,#'4
	call rec
	ld b,#5
	call div_edge
	ld b,#6
	call div_edge
	ld b,#7
	call div_edge
	call div_edge_slow
	ld b,#5
	ld d,#4                 ; 16 T -> 1024 T
	call tac_edge
	ld b,#7
	ld d,#3                 ; enabled -> disabled
	call tac_edge
	ld b,#6
	ld d,#5                 ; 64 T -> 16 T
	call tac_edge
	ld b,#1
	ld d,#5                 ; disabled -> enabled
	call tac_edge
	call overflow
	ret

; ---------------------------------------------------------------- 5. P1

sweep_p1:
	ld a,#'5
	call rec
	ld c,#0
1$:	ld a,c
	ldh (rP1),a
	ldh a,(rP1)
	call rec
	ld a,c
	add a,#0x10
	ld c,a
	jr nz,1$
	ld a,#0x30
	ldh (rP1),a
	ret

main:
	ld hl,#str_title
	call puts
	call log_init
	call sweep_reads
	call sweep_writes
	call sweep_dma
	call sweep_timer
	call sweep_p1
	call lcd_off
	jp print_log_sum

str_title: .asciz "io_sweep\n"

	.org 0x3A00
; a DMA source in ROM: 0xA0 - i
rom_table:
v = 0
	.rept 160
	.db 0xA0 - v
v = v + 1
	.endm
