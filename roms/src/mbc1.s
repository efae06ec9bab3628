; mbc1: 1 MiB MBC1 (64 banks) + 32 KiB RAM (4 banks).  Pan Docs "MBC1":
; 0000-1FFF RAM enable (xA), 2000-3FFF 5-bit ROM bank (0 -> 1), 4000-5FFF
; 2-bit upper ROM bits / RAM bank, 6000-7FFF banking mode.  Checks every bank
; through 0x4000, the 0->1 rule (also for 0x20/0x40/0x60: banks 0x20 etc.
; are not reachable there), mode 1 remapping 0000-3FFF to bank 0x20 and the
; RAM bank, RAM enable/disable, RAM banks in mode 1, ROM size wrap.
USE_RST = 0
CART_TYPE = 0x03          ; MBC1+RAM+BATTERY
ROM_SIZE_CODE = 0x05      ; 1 MiB, 64 banks
RAM_SIZE_CODE = 0x03      ; 32 KiB, 4 banks
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"
	.include "mbc.inc"

	no_interrupt_handlers

LOWTAG = VARS+0           ; 4 bytes copied from 0x3FF0 by the WRAM routine
RAMRES = VARS+4           ; 4 bytes read back from the RAM banks
RUN_WRAM = 0xC100

; executed from WRAM: mode 1, upper bits = C, copy the low-area tag, mode 0
low_area_probe:
	ld a,c
	ld (0x4000),a
	ld a,#1
	ld (0x6000),a
	ld hl,#TAG_LO
	ld de,#LOWTAG
	ld a,(hl+)
	ld (de),a
	inc de
	ld a,(hl+)
	ld (de),a
	inc de
	ld a,(hl+)
	ld (de),a
	inc de
	ld a,(hl)
	ld (de),a
	xor a
	ld (0x6000),a
	ld (0x4000),a
	ret
low_area_probe_end:

; executed from WRAM: mode 1; A000 of RAM bank c = 0xB0+c for c=0..3, then
; read them all back into RAMRES; mode 0, reg2 = 0
ram_bank_probe:
	ld a,#1
	ld (0x6000),a
	ld c,#0
1$:	ld a,c
	ld (0x4000),a
	add a,#0xB0
	ld (0xA000),a
	inc c
	ld a,c
	cp #4
	jr nz,1$
	ld c,#0
	ld hl,#RAMRES
2$:	ld a,c
	ld (0x4000),a
	ld a,(0xA000)
	ld (hl+),a
	inc c
	ld a,c
	cp #4
	jr nz,2$
	xor a
	ld (0x6000),a
	ld (0x4000),a
	ret
ram_bank_probe_end:

main:
	ld hl,#str_title
	call puts
	; power-on mapping: bank 1
	expect_bank 1, 1
	; every bank 1..63 through reg1 (low 5 bits) + reg2 (upper 2 bits)
	ld c,#1
1$:	ld a,c
	and #0x1F
	ld (0x2000),a
	ld a,c
	swap a
	rrca
	and #0x03
	ld (0x4000),a
	ld hl,#TAG_HI
	ld e,c
	ld d,#0
	ld b,#2
	ld a,c
	and #0x1F
	jr nz,2$
	inc e                   ; 0x20/0x40/0x60 -> 0x21/0x41/0x61
2$:	call check_tag
	inc c
	ld a,c
	cp #64
	jr nz,1$
	ld hl,#str_allbanks
	call puts
	xor a
	ld (0x4000),a
	; bank 0 -> 1
	mbc_write 0x2000, 0x00
	expect_bank 1, 3
	; only the low 5 bits count: 0xE3 -> 3, 0x20 -> 0 -> 1
	mbc_write 0x2000, 0xE3
	expect_bank 3, 4
	mbc_write 0x2000, 0x20
	expect_bank 1, 5
	; any address in the range works
	mbc_write 0x3FFF, 0x07
	expect_bank 7, 6
	mbc_write 0x5FFF, 0x01  ; reg2 = 1 -> bank 0x27
	expect_bank 0x27, 7
	mbc_write 0x4000, 0x00
	; mode 1: 0000-3FFF shows bank (reg2 << 5); code runs from WRAM for it
	ld hl,#low_area_probe
	ld de,#RUN_WRAM
	ld c,#(low_area_probe_end-low_area_probe)
3$:	ld a,(hl+)
	ld (de),a
	inc de
	dec c
	jr nz,3$
	ld c,#1
	call RUN_WRAM
	ld hl,#LOWTAG
	ld de,#0x20
	ld b,#8
	call check_tag
	ld c,#2
	call RUN_WRAM
	ld hl,#LOWTAG
	ld de,#0x40 % 64        ; 0x40 wraps to bank 0 on a 64-bank ROM
	ld b,#9
	call check_tag
	; mode 0 again: bank 0 at 0000-3FFF
	ld hl,#TAG_LO
	ld de,#0
	ld b,#10
	call check_tag

	; --- RAM ---
	ld a,(0xA000)
	show str_ramoff
	expect 0xFF, 11         ; disabled RAM reads 0xFF
	mbc_write 0x0000, 0x0A
	ram_rw 0xA000, 0x5C, 0x5C, 12
	ram_rw 0xBFFF, 0xC5, 0xC5, 13
	mbc_write 0x0000, 0x00
	ld a,#0x11
	ld (0xA000),a           ; ignored while disabled
	ld a,(0xA000)
	expect 0xFF, 14
	mbc_write 0x1FFF, 0x1A  ; low nibble 0xA enables too
	ld a,(0xA000)
	expect 0x5C, 15
	; RAM banks (mode 1, which also remaps 0000-3FFF: run from WRAM)
	ld hl,#ram_bank_probe
	ld de,#RUN_WRAM
	ld c,#(ram_bank_probe_end-ram_bank_probe)
4$:	ld a,(hl+)
	ld (de),a
	inc de
	dec c
	jr nz,4$
	call RUN_WRAM
	ld hl,#RAMRES
	ld c,#0
5$:	ld a,(hl+)
	sub #0xB0
	ld b,#16
	cp c
	call nz,fail
	inc c
	ld a,c
	cp #4
	jr nz,5$
	; mode 0: always RAM bank 0, whatever reg2 says
	mbc_write 0x6000, 0x00
	mbc_write 0x4000, 0x03
	ld a,(0xA000)
	expect 0xB0, 17
	mbc_write 0x4000, 0x00
	mbc_write 0x0000, 0x00
	ret

str_title:    .asciz "mbc1\n"
str_allbanks: .asciz "banks 01-3F ok\n"
str_ramoff:   .asciz "RAM disabled reads"
