; mbc3: 512 KiB MBC3+TIMER+RAM+BATTERY (32 banks, 4 RAM banks).
; Pan Docs "MBC3": 2000-3FFF 7-bit ROM bank (0 -> 1), 4000-5FFF RAM bank 0-3
; or RTC register 08-0C, 6000-7FFF latch (write 00 then 01), RAM/RTC enable
; 0000-1FFF (0A).  RTC registers: 08 S, 09 M, 0A H, 0B DL, 0C DH (bit 0 day
; bit 8, bit 6 halt, bit 7 day carry).  The RTC test halts the clock, sets
; 05:06:07 day 8, latches and reads back; then lets it run ~1.2 s of emulated
; time (72 VBlanks) and expects one second more.  (PyBoy advances its RTC by
; emulated CPU cycles, 4194304 per second.)
USE_RST = 0
CART_TYPE = 0x10          ; MBC3+TIMER+RAM+BATTERY
ROM_SIZE_CODE = 0x04      ; 512 KiB, 32 banks
RAM_SIZE_CODE = 0x03      ; 32 KiB, 4 banks
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"
	.include "mbc.inc"

isr_stat = isr_none
isr_timer = isr_none
isr_serial = isr_none
isr_joypad = isr_none

VCOUNT = VARS+0

isr_vblank:
	push af
	ld a,(VCOUNT)
	inc a
	ld (VCOUNT),a
	pop af
	reti

; rtc_write: register B (08-0C) = C
rtc_write:
	ld a,b
	ld (0x4000),a
	ld a,c
	ld (0xA000),a
	ret

; rtc_read: A = register B (latched copy)
rtc_read:
	ld a,b
	ld (0x4000),a
	ld a,(0xA000)
	ret

latch:
	xor a
	ld (0x6000),a
	inc a
	ld (0x6000),a
	ret

	.macro rtc_expect reg, val, code
	ld b,#reg
	call rtc_read
	expect val, code
	.endm

	.macro rtc_set reg, val
	ld b,#reg
	ld c,#val
	call rtc_write
	.endm

main:
	ld hl,#str_title
	call puts
	expect_bank 1, 1
	ld c,#1
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
	mbc_write 0x2000, 0x00  ; 0 -> 1
	expect_bank 1, 3
	mbc_write 0x2000, 0x85  ; bit 7 ignored (7-bit register)
	expect_bank 5, 4
	mbc_write 0x2000, 0x25  ; bank 0x25 wraps to 5 on a 32-bank ROM
	expect_bank 5, 5
	mbc_write 0x3FFF, 0x1F
	expect_bank 0x1F, 6

	; --- RAM banks ---
	ld a,(0xA000)
	show str_ramoff
	expect 0xFF, 7
	mbc_write 0x0000, 0x0A
	ld c,#0
2$:	ld a,c
	ld (0x4000),a
	add a,#0xC0
	ld (0xA000),a
	inc c
	ld a,c
	cp #4
	jr nz,2$
	ld c,#0
3$:	ld a,c
	ld (0x4000),a
	ld a,(0xA000)
	sub #0xC0
	ld b,#8
	cp c
	call nz,fail
	inc c
	ld a,c
	cp #4
	jr nz,3$

	; --- RTC: halt, set, latch, read back ---
	rtc_set 0x0C, 0x40      ; halt
	rtc_set 0x08, 5
	rtc_set 0x09, 6
	rtc_set 0x0A, 7
	rtc_set 0x0B, 8
	rtc_set 0x0C, 0x41      ; halted, day bit 8 set
	call latch
	rtc_expect 0x08, 5, 10
	rtc_expect 0x09, 6, 11
	rtc_expect 0x0A, 7, 12
	rtc_expect 0x0B, 8, 13
	rtc_expect 0x0C, 0x41, 14
	; let it run: DH = 0 (running, day bit 8 clear), seconds restart at 5
	rtc_set 0x0C, 0x00
	rtc_set 0x08, 5
	; wait 72 VBlanks (~1.21 s)
	xor a
	ld (VCOUNT),a
	ldh (rIF),a
	ld a,#0x91
	ldh (rLCDC),a
	ld a,#0x01
	ldh (rIE),a
	ei
4$:	halt
	nop
	ld a,(VCOUNT)
	cp #72
	jr c,4$
	di
	rtc_expect 0x08, 5, 15  ; not latched again yet: still the old copy
	call latch
	ld b,#0x08
	call rtc_read
	show str_sec
	expect 6, 16
	rtc_expect 0x09, 6, 17
	rtc_expect 0x0A, 7, 18
	rtc_expect 0x0B, 8, 19
	rtc_expect 0x0C, 0x00, 20
	; RAM bank 0 still intact after RTC use
	mbc_write 0x4000, 0x00
	ld a,(0xA000)
	expect 0xC0, 21
	mbc_write 0x0000, 0x00
	ld a,(0xA000)
	expect 0xFF, 22
	ret

str_title:    .asciz "mbc3\n"
str_allbanks: .asciz "banks 01-1F ok\n"
str_ramoff:   .asciz "RAM disabled reads"
str_sec:      .asciz "RTC seconds after ~1.2s"
