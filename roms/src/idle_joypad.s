; idle_joypad: busy-waits polling the joypad (P1, FF00) until its value changes or the
; VBlank handler sets a flag, with the LCD on and VBlank interrupts enabled. The select bits
; (buttons or d-pad) are written before the wait, alternating per round. Two wait loops:
;   0. LDH A,(P1) / CP B / JR NZ,out / LDH A,(flag) / OR A / JR Z      (B = P1 before)
;   1. LDH A,(P1) / AND 0F / CP 0F / JR NZ,out / LD A,(flag) / AND A / JR Z   (any press)
; After each wait the ROM logs P1, LY and DIV (idle.inc); the log is an emulator
; fingerprint compared with PyBoy's at every frame (with buttons pressed between frames).
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
ROUNDS = 120
	.include "common.inc"
	.include "idle.inc"

isr_serial = isr_none
isr_joypad = isr_none
isr_stat = isr_none
isr_timer = isr_none

isr_vblank = idle_isr_vblank

main:
	ld hl,#str_title
	call puts
	ld a,#0x91
	ldh (rLCDC),a
	xor a
	ldh (rIF),a
	inc a
	ldh (rIE),a             ; VBlank
	ei
loop:
	xor a
	ld (VFLAG),a
	ldh (VFLAG_H&0xFF),a
	ldh a,(ROUND&0xFF)
	and #1
	ld a,#0x10              ; buttons
	jr z,1$
	ld a,#0x20              ; d-pad
1$:	ldh (rP1),a
	ldh a,(rP1)
	ld b,a
	ldh a,(ROUND&0xFF)
	and #2
	jr nz,w1
w0:
1$:	ldh a,(rP1)
	cp b
	jr nz,done
	ldh a,(VFLAG_H&0xFF)
	or a
	jr z,1$
	jr done
w1:
1$:	ldh a,(rP1)
	and #0x0F
	cp #0x0F
	jr nz,done
	ld a,(VFLAG)
	and a
	jr z,1$
done:
	ldh a,(rP1)
	call log_a
	ldh a,(rLY)
	call log_a
	ldh a,(rDIV)
	call log_a
	call end_round
	jp loop

str_title: .asciz "idle_joypad\n"
