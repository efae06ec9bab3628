; mbc2: 256 KiB MBC2 (16 banks) with its built-in 512 x 4-bit RAM.
; Pan Docs "MBC2": 0000-3FFF is one register range where address bit 8
; selects RAM enable (A8=0, value xA) or ROM bank (A8=1, 4 bits, 0 -> 1);
; RAM is 512 half-bytes at A000-A1FF (upper nibble reads as 1s; PyBoy
; returns value | 0xF0) echoed through A000-BFFF.
USE_RST = 0
CART_TYPE = 0x06          ; MBC2+BATTERY
ROM_SIZE_CODE = 0x03      ; 256 KiB, 16 banks
RAM_SIZE_CODE = 0x00      ; MBC2: built-in RAM, size code 0
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"
	.include "mbc.inc"

	no_interrupt_handlers

main:
	ld hl,#str_title
	call puts
	expect_bank 1, 1
	; every bank 1..15 via 0x2100
	ld c,#1
1$:	ld a,c
	ld (0x2100),a
	ld hl,#TAG_HI
	ld e,c
	ld d,#0
	ld b,#2
	call check_tag
	inc c
	ld a,c
	cp #16
	jr nz,1$
	ld hl,#str_allbanks
	call puts
	; 0 -> 1, upper bits ignored
	mbc_write 0x2100, 0x00
	expect_bank 1, 3
	mbc_write 0x2100, 0xF5
	expect_bank 5, 4
	; A8=0: RAM-enable register, not the bank -> bank stays 5
	mbc_write 0x2000, 0x03
	expect_bank 5, 5
	; A8=1 inside 0000-1FFF selects the ROM bank too
	mbc_write 0x0100, 0x07
	expect_bank 7, 6
	mbc_write 0x3FFF, 0x09  ; 0x3FFF has A8=1
	expect_bank 9, 7
	; --- RAM ---
	ld a,(0xA000)
	show str_ramoff
	expect 0xFF, 8
	mbc_write 0x0000, 0x0A  ; A8=0: enable
	ram_rw 0xA000, 0xA5, 0xF5, 9    ; 4-bit cells, upper nibble reads 1
	ram_rw 0xA1FF, 0x03, 0xF3, 10
	ld a,(0xA200)           ; echo: A200 = A000
	expect 0xF5, 11
	ld a,(0xBFFF)           ; BFFF = A1FF
	expect 0xF3, 12
	mbc_write 0x0100, 0x0A  ; A8=1: that is a bank write, RAM stays enabled
	ld a,(0xA000)
	expect 0xF5, 13
	mbc_write 0x0000, 0x00  ; disable
	ld a,(0xA000)
	expect 0xFF, 14
	ret

str_title:    .asciz "mbc2\n"
str_allbanks: .asciz "banks 01-0F ok\n"
str_ramoff:   .asciz "RAM disabled reads"
