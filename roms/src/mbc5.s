; mbc5: 512 KiB MBC5+RAM+BATTERY (32 banks, 4 RAM banks).
; Pan Docs "MBC5": 2000-2FFF low 8 bits of the ROM bank, 3000-3FFF bit 8;
; bank 0 IS selectable at 4000-7FFF (no 0 -> 1 rule); 4000-5FFF RAM bank
; (4 bits); 0000-1FFF RAM enable.  Bank numbers beyond the ROM size wrap
; (unconnected address lines; PyBoy: modulo the bank count), so bit 8 is
; exercised as "bank 0x100+n = bank n" on this 32-bank ROM.
; PyBoy enables MBC5 RAM only for exactly 0x0A (0x1A keeps it disabled);
; checked here as PyBoy behaves.
USE_RST = 0
CART_TYPE = 0x1B          ; MBC5+RAM+BATTERY
ROM_SIZE_CODE = 0x04      ; 512 KiB, 32 banks
RAM_SIZE_CODE = 0x03      ; 32 KiB, 4 banks
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"
	.include "mbc.inc"

	no_interrupt_handlers

main:
	ld hl,#str_title
	call puts
	expect_bank 1, 1
	ld c,#0                 ; banks 0..31, bank 0 included
1$:	ld a,c
	ld (0x2000),a
	ld hl,#TAG_HI
	ld e,c
	ld d,#0
	ld b,#2
	call check_tag
	inc c
	ld a,c
	cp #32
	jr nz,1$
	ld hl,#str_allbanks
	call puts
	mbc_write 0x2000, 0x00
	expect_bank 0, 3        ; bank 0 mapped at 4000
	mbc_write 0x2FFF, 0x3A  ; 0x3A wraps to 0x1A
	expect_bank 0x1A, 4
	mbc_write 0x3000, 0x01  ; bit 8: 0x13A wraps to 0x1A as well
	expect_bank 0x1A, 5
	mbc_write 0x2000, 0x07  ; low byte write keeps bit 8: 0x107 -> 7
	expect_bank 7, 6
	mbc_write 0x3FFF, 0xFE  ; only bit 0 of the high register counts
	expect_bank 7, 7
	mbc_write 0x3000, 0x00
	; --- RAM ---
	ld a,(0xA000)
	show str_ramoff
	expect 0xFF, 8
	mbc_write 0x0000, 0x1A  ; PyBoy: not exactly 0x0A -> stays disabled
	ld a,(0xA000)
	expect 0xFF, 9
	mbc_write 0x0000, 0x0A
	ld c,#0
2$:	ld a,c
	ld (0x4000),a
	add a,#0xD0
	ld (0xA000),a
	inc c
	ld a,c
	cp #4
	jr nz,2$
	ld c,#0
3$:	ld a,c
	ld (0x4000),a
	ld a,(0xA000)
	sub #0xD0
	ld b,#10
	cp c
	call nz,fail
	inc c
	ld a,c
	cp #4
	jr nz,3$
	mbc_write 0x4000, 0x06  ; RAM bank 6 wraps to 2 on a 4-bank cart
	ld a,(0xA000)
	expect 0xD2, 11
	ram_rw 0xBFFF, 0x77, 0x77, 12
	mbc_write 0x0000, 0x00
	ld a,(0xA000)
	expect 0xFF, 13
	ret

str_title:    .asciz "mbc5\n"
str_allbanks: .asciz "banks 00-1F ok\n"
str_ramoff:   .asciz "RAM disabled reads"
