; idle_ly: busy-waits polling LY and STAT with interrupts off (IME and IE), the LCD on, and
; the timer running (TAC 05: its events end the emulator's time slices inside the waits).
; Four wait loops, one per round in turn:
;   0. LDH A,(LY) / CP 144 / JR NZ      (wait for VBlank)
;   1. LDH A,(LY) / CP B / JR C         (wait for line B, varied per round)
;   2. LD A,(HL) / CP B / JR NZ         (LY through HL, wait for line B)
;   3. LDH A,(STAT) / AND 3 / JR NZ     (wait for HBlank, after leaving it)
; After each wait the ROM logs LY, STAT and DIV (idle.inc); the log is an emulator
; fingerprint compared with PyBoy's at every frame. Checked: LY after wait 2.
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
ROUNDS = 200
	.include "common.inc"
	.include "idle.inc"

	no_interrupt_handlers

main:
	ld hl,#str_title
	call puts
	ld a,#0x91
	ldh (rLCDC),a
	ld a,#0x05
	ldh (rTAC),a
loop:
	ldh a,(ROUND&0xFF)
	ldh (rTMA),a
	; the line waited for in 1 and 2: (ROUND * 37) mod 144
	ld c,a
	xor a
	ld b,#37
1$:	add a,c
	jr nc,2$
	add a,#112              ; 256 mod 144 = 112: keep A mod 144
2$:	cp #144
	jr c,3$
	sub #144
3$:	dec b
	jr nz,1$
	ld b,a
	ldh a,(ROUND&0xFF)
	and #3
	ld hl,#waits
	jp jump_table
waits:
	.dw w0, w1, w2, w3
w0:
1$:	ldh a,(rLY)
	cp #144
	jr nz,1$
	jr done
w1:
1$:	ldh a,(rLY)
	cp b
	jr c,1$
	jr done
w2:
	ld hl,#0xFF44
1$:	ld a,(hl)
	cp b
	jr nz,1$
	jr done_b
w3:
1$:	ldh a,(rSTAT)
	and #3
	jr z,1$
2$:	ldh a,(rSTAT)
	and #3
	jr nz,2$
	jr done
done_b:
	ld d,b
	ld a,b
	inc a
	ld e,a
	ldh a,(rLY)
	ld b,#2
	call check_range        ; LY in B..B+1 (hit while polling)
done:
	ldh a,(rLY)
	call log_a
	ldh a,(rSTAT)
	call log_a
	ldh a,(rDIV)
	call log_a
	call end_round
	jp loop

str_title: .asciz "idle_ly\n"
