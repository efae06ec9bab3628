; apu_power: the sound unit powered off for stretches of busy CPU work (work RAM only, no
; HALT, the LCD on with no STAT interrupt source: an emulator may run the LCD's mode changes
; late then), and powered back on at points that move across lines and frames, CH3 started at
; once at its highest frequency (a fetch every 2 T) while the CPU reads and writes wave RAM
; (the byte being fetched is seen only right after a fetch), then off again. While it is off,
; register writes other than NR52 are dropped and NR52 reads show it. Checks what an emulator
; may skip while the unit is off (its catch-ups at turn ends only move its clock) against
; what must be exact right after a power-on. Everything read goes into two running sums in
; WRAM, compared with PyBoy at every frame (sound samples too). 160 rounds, about 100 frames;
; prints the sums and passes.
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"

isr_stat = isr_none
isr_timer = isr_none
isr_serial = isr_none
isr_joypad = isr_none

ROUNDS = VARS+2             ; rounds left
WORK = VARS+3               ; scratch byte the busy loops update
SEED = VARS+4               ; varies the delays

rNR52 = 0x26

isr_vblank:
	push af
	push hl
	ld hl,#FRAMES
	inc (hl)
	pop hl
	pop af
	reti

	.include "sums.inc"

main:
	ld hl,#str_title
	call puts
	xor a
	ldh (rSTAT),a           ; no STAT interrupt source
	ldh (rIF),a
	ld a,#0x01
	ldh (rIE),a
	ei
	ld a,#160
	ld (ROUNDS),a
round:
	; the unit off; writes to CH3's registers are dropped, NR52 shows it
	xor a
	ldh (rNR52),a
	ld a,#0x80
	ldh (0x1A),a            ; NR30 (dropped)
	ldh a,(rNR52)
	call record
	; busy work RAM loop while off: 64-319 iterations (~28 T each), from the seed
	ld a,(SEED)
	add a,#97
	ld (SEED),a
	ld b,a
	ld c,#2
1$:	ld a,(WORK)
	add a,b
	ld (WORK),a
	dec b
	jr nz,1$
	dec c
	jr nz,2$
	jr 3$
2$:	ld b,#64
	jr 1$
3$:	; power on mid-line, CH3 at once: DAC on, full volume, highest frequency, trigger
	ld a,#0x80
	ldh (rNR52),a
	ldh (0x1A),a            ; NR30: CH3 DAC on
	ld a,#0x20
	ldh (0x1C),a            ; NR32: full volume
	ld a,#0xFF
	ldh (0x1D),a            ; NR33: frequency low
	ld a,#0x87
	ldh (0x1E),a            ; NR34: trigger, frequency high 7, no length
	ldh a,(rNR52)
	call record
	; 48 iterations: wave RAM byte c & 15 read (recorded) and written back plus c, with work
	; RAM work between (a delay of 1-4 loops from the seed and c)
	ld c,#48
4$:	ld a,(SEED)
	xor c
	and #3
	inc a
	ld b,a
5$:	ld a,(WORK)
	inc a
	ld (WORK),a
	dec b
	jr nz,5$
	ld a,c
	and #0x0F
	or #0x30
	ld l,a
	ld h,#0xFF
	ld a,(hl)
	call record
	add a,c
	ld (hl),a
	dec c
	jr nz,4$
	ld hl,#ROUNDS
	dec (hl)
	jr nz,round
	xor a
	ldh (rNR52),a
	di
	ld a,(SUM)
	show str_sum
	ld a,(MIX)
	show str_mix
	ret

str_title:
	.asciz "apu_power\n"
str_sum:
	.asciz "sum"
str_mix:
	.asciz "mix"
