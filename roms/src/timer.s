; timer: DIV, TIMA at the four TAC rates, TMA reload, timer interrupt.
; Pan Docs "Timer and Divider Registers" / "Timer obscure behaviour":
; DIV is the upper byte of a 16-bit counter running at 4 MHz (+1 per T-cycle);
; TIMA increments on the falling edge of counter bit 9/3/5/7 for TAC rate
; 00/01/10/11 (4096/262144/65536/16384 Hz, i.e. every 1024/16/64/256 T);
; on overflow TIMA is reloaded from TMA and IF bit 2 is requested.
; Measurements use DIV as the time reference (poll until DIV >= target), so
; they do not depend on exact instruction timing; each measured value is
; printed (exact values are an emulator fingerprint) and checked against a
; window derived from the rates above (a few edges may be lost while the
; setup writes run).
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"

isr_vblank = isr_none
isr_stat = isr_none
isr_serial = isr_none
isr_joypad = isr_none

TCOUNT = VARS+0       ; timer interrupts seen

isr_timer:
	push af
	push hl
	ld hl,#TCOUNT
	inc (hl)
	pop hl
	pop af
	reti

; wait_div: wait until DIV >= B
wait_div:
	ldh a,(rDIV)
	cp b
	jr c,wait_div
	ret

; start_timer: A = TAC value.  TAC=0, TIMA=0, DIV reset, then TAC=A.
start_timer:
	ld c,a
	xor a
	ldh (rTAC),a
	ldh (rTIMA),a
	ldh (rDIV),a
	ld a,c
	ldh (rTAC),a
	ret

main:
	ld hl,#str_title
	call puts
	call lcd_off            ; keep the PPU out of the way (no STAT/VBlank)
	; --- 1. DIV: reset, then ~10.5 * 256 T-cycles of delay loop ---
	xor a
	ldh (rDIV),a
	ld c,#42                ; 42 * (dec c 4T + ... ) see below
1$:	ld a,#15                ; inner: 15*16-4+8 = 244 T; outer adds 16 T
2$:	dec a
	jr nz,2$
	dec c
	jr nz,1$               ; total ~ 42 * 260 = 10920 T = 42.6 DIV ticks / 4
	ldh a,(rDIV)
	show str_div
	expect_range 41, 44, 1  ; 10920 / 256 = 42.6
	; DIV keeps counting and a write of any value resets it to 0
	ld a,#0x77
	ldh (rDIV),a
	ldh a,(rDIV)
	expect 0, 2

	; --- 2. TIMA rates: for each rate, count until DIV reaches a target ---
	ld hl,#rate_table
3$:	ld a,(hl+)
	or a
	jr z,4$
	push hl
	call start_timer        ; A = TAC
	pop hl
	ld a,(hl+)
	ld b,a                  ; DIV target
	push hl
	call wait_div
	ldh a,(rTIMA)
	pop hl
	push hl
	ld c,a                  ; C = TIMA
	ld a,(hl+)              ; lo
	ld d,a
	ld a,(hl+)              ; hi
	ld e,a
	ld a,(hl+)              ; failure number
	ld b,a
	push bc
	push de
	ld a,c
	ld hl,#str_tima
	call show_value
	pop de
	pop bc
	ld a,c
	call check_range
	pop hl
	inc hl
	inc hl
	inc hl
	jr 3$
4$:
	; TAC bit 2 clear: TIMA must not move
	xor a
	ldh (rTAC),a
	ld a,#0x33
	ldh (rTIMA),a
	ld b,#0x20
	xor a
	ldh (rDIV),a
	call wait_div
	ldh a,(rTIMA)
	expect 0x33, 7

	; --- 3. TMA reload and IF bit 2 ---
	xor a
	ldh (rTAC),a
	ldh (rIF),a
	ld a,#0xF0
	ldh (rTMA),a
	ld a,#0xFE
	ldh (rTIMA),a
	xor a
	ldh (rDIV),a
	ld a,#0x05              ; 16 T per increment
	ldh (rTAC),a
	ld b,#1                 ; 256 T: ~16 increments: FE,FF,F0(reload),F1..
	call wait_div
	ldh a,(rTIMA)
	show str_tma
	expect_range 0xF9, 0xFF, 8   ; reloaded from TMA (not 0x00..0x0F)
	ldh a,(rIF)
	and #0x04
	expect 0x04, 9
	; TMA written while counting is used at the next overflow
	xor a
	ldh (rTMA),a
	ld a,#0x00
	ldh (rIF),a
	ld b,#3                 ; wait for another overflow
	call wait_div
	ldh a,(rTIMA)
	show str_tma2
	expect_range 0x00, 0x30, 10
	ldh a,(rIF)
	and #0x04
	expect 0x04, 11

	; --- 4. timer interrupts: count them over a DIV-timed window ---
	; TAC=05, TMA=00: overflow every 256*16 = 4096 T = 16 DIV ticks.
	; Wait until DIV >= 0xA8 (43008 T): exactly 10 overflows.
	xor a
	ld (TCOUNT),a
	ldh (rTMA),a
	ld a,#0x05
	call start_timer
	xor a
	ldh (rIF),a
	ld a,#0x04
	ldh (rIE),a
	ei
	ld b,#0xA8
	call wait_div
	di
	ld a,(TCOUNT)
	show str_irq1
	expect 10, 12
	; TAC=07 (256 T), TMA=0xF0: overflow every 16*256 = 4096 T as well
	xor a
	ld (TCOUNT),a
	ld a,#0xF0
	ldh (rTMA),a
	ld a,#0x07
	call start_timer
	ld a,#0xF0
	ldh (rTIMA),a
	xor a
	ldh (rIF),a
	ei
	ld b,#0xA8
	call wait_div
	di
	; serviced interrupts clear their IF bit (next overflow is ~2000 T away)
	ldh a,(rIF)
	and #0x04
	expect 0, 14
	ld a,(TCOUNT)
	show str_irq2
	expect 10, 13

	; --- 5. HALT woken by the timer: 5 interrupts take 5*4096 T = 80 DIV ticks ---
	xor a
	ld (TCOUNT),a
	ldh (rTMA),a
	ld a,#0x05
	call start_timer
	xor a
	ldh (rIF),a
	ei
5$:	halt
	nop
	ld a,(TCOUNT)
	cp #5
	jr c,5$
	di
	ldh a,(rDIV)
	show str_halt
	expect_range 80, 81, 15
	xor a
	ldh (rTAC),a
	ldh (rIE),a
	ret

; rate table: TAC, DIV target, lo, hi, failure number
rate_table:
; TIMA is read 44..72 T after DIV reaches the target (poll loop + return),
; and the first edge may be lost while TAC is still 0 after the DIV reset.
	.db 0x05, 2, 32, 36, 3       ; 16 T:   (512+44..72)/16 = 34..36
	.db 0x06, 8, 31, 34, 4       ; 64 T:   2048/64 = 32..33
	.db 0x07, 8, 7, 9, 5         ; 256 T:  2048/256 = 8
	.db 0x04, 0x40, 15, 17, 6    ; 1024 T: 16384/1024 = 16
	.db 0

str_title: .asciz "timer\n"
str_div:   .asciz "DIV after ~10920T"
str_tima:  .asciz "TIMA"
str_tma:   .asciz "TIMA after reload"
str_tma2:  .asciz "TIMA after TMA=0"
str_irq1:  .asciz "IRQs TAC=05"
str_irq2:  .asciz "IRQs TAC=07"
str_halt:  .asciz "DIV after 5 HALT wakes"
