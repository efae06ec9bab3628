; dma: OAM DMA (FF46) copying 160 bytes from WRAM, from ROM and from echo
; RAM, started from a routine in HRAM (Pan Docs "OAM DMA Transfer": the copy
; takes 160 M-cycles, the CPU should only touch HRAM meanwhile).
; Checks every OAM byte afterwards, that OAM reads as 0xFF while the DMA is
; running, and that FF46 reads back the last value written.
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"

	no_interrupt_handlers

SRC_WRAM = 0xC200
HRAM_DMA = 0xFF80
DURING   = 0xFFF0          ; OAM byte read while the DMA ran (HRAM)

; copied to HRAM: A = source page.  Reads OAM[0] shortly after the start,
; then waits out the rest of the 160 M-cycles.
dma_routine:
	ldh (rDMA),a
	ld a,#4
1$:	dec a
	jr nz,1$
	ld a,(0xFE00)
	ldh (DURING&0xFF),a
	ld a,#40
2$:	dec a
	jr nz,2$
	ret
dma_routine_end:

; run_dma: A = source page
run_dma:
	call HRAM_DMA
	ret

; clear_oam: write 0x00 to all of OAM (LCD off, no DMA)
clear_oam:
	ld hl,#0xFE00
	ld c,#160
	xor a
1$:	ld (hl+),a
	dec c
	jr nz,1$
	ret

; verify_oam: DE = expected bytes, B = failure number; fails on first mismatch
verify_oam:
	ld hl,#0xFE00
	ld c,#160
1$:	ld a,(de)
	cp (hl)
	jr nz,2$
	inc de
	inc hl
	dec c
	jr nz,1$
	ret
2$:	ld a,l
	show str_mismatch
	ld a,(hl)
	jp fail

main:
	ld hl,#str_title
	call puts
	call lcd_off
	; copy the DMA routine to HRAM
	ld hl,#dma_routine
	ld de,#HRAM_DMA
	ld c,#(dma_routine_end-dma_routine)
1$:	ld a,(hl+)
	ld (de),a
	inc de
	dec c
	jr nz,1$
	; WRAM source pattern: (i*7+3) & 0xFF
	ld hl,#SRC_WRAM
	ld c,#160
	ld a,#3
2$:	ld (hl+),a
	add a,#7
	dec c
	jr nz,2$

	; --- 1. from WRAM ---
	call clear_oam
	ld a,#>SRC_WRAM
	call run_dma
	ldh a,(DURING&0xFF)
	show str_during
	expect 0xFF, 1          ; OAM is not readable while the DMA runs
	ld de,#SRC_WRAM
	ld b,#2
	call verify_oam
	ldh a,(rDMA)
	expect >SRC_WRAM, 3     ; FF46 reads back the last written value

	; --- 2. from ROM (table at 0x3A00) ---
	call clear_oam
	ld a,#>rom_table
	call run_dma
	ld de,#rom_table
	ld b,#4
	call verify_oam

	; --- 3. from echo RAM: page 0xE2 mirrors 0xC200 ---
	call clear_oam
	ld a,#0xE2
	call run_dma
	ld de,#SRC_WRAM
	ld b,#5
	call verify_oam

	; --- 4. with the LCD on, started in VBlank (the usual game pattern) ---
	call clear_oam
	ld a,#0x91
	ldh (rLCDC),a
	call wait_ly144
	ld a,#>rom_table
	call run_dma
	ldh a,(rLY)
	show str_ly_after
	expect_range 144, 153, 6  ; the whole transfer fits in VBlank
	call lcd_off
	ld de,#rom_table
	ld b,#7
	call verify_oam
	ret

str_title:    .asciz "dma\n"
str_during:   .asciz "OAM[0] during DMA"
str_mismatch: .asciz "OAM mismatch at FE"
str_ly_after: .asciz "LY after DMA in VBlank"

	.include "rom_table.inc"
