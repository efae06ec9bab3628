; idle_div: busy-waits on DIV (FF04), with the LCD on and the timer running (TAC 04, TMA
; changed every round: its overflows end the emulator's time slices inside the waits).
; Even rounds run with IME off, odd rounds with VBlank and timer interrupts on (their
; handlers run between iterations); in rounds 8-15 of every 16 the LCD is off during the
; wait (switched off in VBlank), so the time slices are long. Four wait loops, one per round in turn:
;   0. LDH A,(DIV) / CP B / JR NZ         (B = DIV + N, N = 1..32 varied per round)
;   1. LDH A,(DIV) / AND 0F / JR NZ        (the next multiple of 16)
;   2. LD A,(FF04) / SUB B / JR Z,out / LD A,(HL) / OR A / JR Z   (DIV = B or the VBlank flag)
;   3. LD A,(HL) / CP B / JR C  with HL = FF04                      (DIV >= B)
; After each wait the ROM logs DIV, LY and TIMA (idle.inc); the log is an emulator
; fingerprint compared with PyBoy's at every frame. Checked: DIV after wait 0 is B or B+1.
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
ROUNDS = 160
	.include "common.inc"
	.include "idle.inc"

isr_serial = isr_none
isr_joypad = isr_none
isr_stat = isr_none

isr_vblank:
	push af
	ld a,#1
	ld (VFLAG),a
	pop af
	reti

isr_timer = idle_isr_timer

main:
	ld hl,#str_title
	call puts
	ld a,#0x91
	ldh (rLCDC),a
	ld a,#0x04
	ldh (rTAC),a
	ld a,#0x05
	ldh (rIE),a             ; VBlank and timer (used with IME on)
loop:
	di
	ldh a,(ROUND&0xFF)
	and #8
	jr z,2$
	; rounds 8-15 of every 16: the LCD off (in VBlank) during the wait
3$:	ldh a,(rLY)
	cp #145
	jr nz,3$
	ld a,#0x11
	ldh (rLCDC),a
2$:	xor a
	ldh (rIF),a
	ld (VFLAG),a
	ldh a,(ROUND&0xFF)
	ldh (rTMA),a
	bit 0,a
	jr z,1$
	ei
1$:	and #0x1F
	inc a
	ld c,a                  ; N
	ldh a,(rDIV)
	add a,c
	ld b,a                  ; B = DIV + N
	ld hl,#VFLAG
	ldh a,(ROUND&0xFF)
	rra
	and #3
	push hl
	ld hl,#waits
	jp jump_table
waits:
	.dw w0, w1, w2, w3
w0:
	pop hl
1$:	ldh a,(rDIV)
	cp b
	jr nz,1$
	ld d,b
	ld a,b
	inc a
	ld e,a
	ldh a,(rDIV)
	ld b,#1
	call check_range
	jr done
w1:
	pop hl
1$:	ldh a,(rDIV)
	and #0x0F
	jr nz,1$
	jr done
w2:
	pop hl
1$:	ld a,(0xFF04)
	sub b
	jr z,done
	ld a,(hl)
	or a
	jr z,1$
	jr done
w3:
	pop hl
	ld hl,#0xFF04
1$:	ld a,(hl)
	cp b
	jr c,1$
done:
	ldh a,(rDIV)
	call log_a
	ldh a,(rLY)
	call log_a
	ldh a,(rTIMA)
	call log_a
	ld a,#0x91
	ldh (rLCDC),a
	call end_round
	jp loop

str_title: .asciz "idle_div\n"
