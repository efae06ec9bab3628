; idle_vblank: busy-waits on a flag that the VBlank handler sets (the way many games wait for
; the next frame instead of HALT), with the LCD on, VBlank and timer interrupts enabled (the
; timer, TAC 05 with TMA changed every round, ends the emulator's time slices inside the
; waits and runs its handler between iterations). Five wait loops, one per round in turn:
;   0. LD A,(nn) / OR A / JR Z          (work RAM flag)
;   1. LDH A,(n) / AND A / JR Z         (HRAM flag)
;   2. BIT 0,(HL) / JR Z                (work RAM flag through HL)
;   3. LD A,(DE) / LD B,A / LD A,(HL) / OR B / AND 1 / JP Z   (both flags)
;   4. LDH A,(IF) / AND 1 / JR Z        (IME off: IF's VBlank bit)
; Before each wait a delay of 16-512 T moves the entry point. After it the ROM checks LY is
; in VBlank and logs LY, DIV, TIMA and the timer count (idle.inc); the log is an emulator
; fingerprint compared with PyBoy's at every frame.
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

isr_vblank = idle_isr_vblank
isr_timer = idle_isr_timer

main:
	ld hl,#str_title
	call puts
	ld a,#0x91
	ldh (rLCDC),a
	xor a
	ldh (rIF),a
	ld a,#0x05
	ldh (rTAC),a
	ldh (rIE),a             ; VBlank and timer
	ei
loop:
	ldh a,(ROUND&0xFF)
	ldh (rTMA),a
	and #0x1F
	inc a
	ld c,a
1$:	dec c
	jr nz,1$
	xor a
	ld (VFLAG),a
	ldh (VFLAG_H&0xFF),a
	ldh a,(ROUND&0xFF)
	ld c,#5
2$:	sub c                   ; A = ROUND mod 5
	jr nc,2$
	add a,c
	ld hl,#waits
	jp jump_table
waits:
	.dw w0, w1, w2, w3, w4
w0:
1$:	ld a,(VFLAG)
	or a
	jr z,1$
	jr done
w1:
1$:	ldh a,(VFLAG_H&0xFF)
	and a
	jr z,1$
	jr done
w2:
	ld hl,#VFLAG
1$:	bit 0,(hl)
	jr z,1$
	jr done
w3:
	ld de,#VFLAG
	ld hl,#VFLAG_H
1$:	ld a,(de)
	ld b,a
	ld a,(hl)
	or b
	and #1
	jp z,1$
	jr done
w4:
	di
	xor a
	ldh (rIF),a
1$:	ldh a,(rIF)
	and #1
	jr z,1$
	ei                      ; the pending VBlank interrupt runs its handler now
	nop
done:
	ldh a,(rLY)
	expect_range 144, 153, 1
	call log_a
	ldh a,(rDIV)
	call log_a
	ldh a,(rTIMA)
	call log_a
	ldh a,(TCOUNT&0xFF)
	call log_a
	call end_round
	jp loop

str_title: .asciz "idle_vblank\n"
