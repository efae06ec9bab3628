; halt_wake: the cycle at which an interrupt wakes a halted CPU, with the LCD on and only that
; interrupt enabled (so the LCD's other events pass while the CPU sleeps). Pan Docs
; "halt", "Interrupts", "STAT Interrupt", "Timer and Divider Registers".
;   1. timer: TAC=05 (TIMA +1 every 16 T), TMA=TIMA varied per round, IE=timer;
;   2. LYC: STAT=0x40, LYC varied per round, IE=STAT;
;   3. HBlank: STAT=0x08, IE=STAT, after a varied delay.
; The handler logs TIMA, LY, STAT at wake-up and the number of 40-T polling iterations until
; STAT's mode next changes (a wake-up 4 T later changes that count in about one round in ten),
; 4 bytes per round from LOG. The values are an emulator fingerprint: the test suite compares
; them (and the checksum printed at the end) with PyBoy's; the ROM checks only that every
; round woke up.
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"

isr_vblank = isr_none
isr_serial = isr_none
isr_joypad = isr_none
isr_timer = isr_wake
isr_stat = isr_wake

LOG     = 0xC100            ; 4 bytes per round (HL points at the next entry)
ROUNDS  = 64                ; per section

; Entered at wake-up: log TIMA, LY, STAT and the polling count; HL advances by 4.
isr_wake:
	push af
	push bc
	ldh a,(rTIMA)
	ld (hl+),a
	ldh a,(rLY)
	ld (hl+),a
	ldh a,(rSTAT)
	ld (hl+),a
	and #3
	ld c,a
	ld b,#0
1$:	inc b
	ldh a,(rSTAT)
	and #3
	cp c
	jr z,1$
	ld a,b
	ld (hl+),a
	pop bc
	pop af
	ret                     ; IME stays off: an interrupt raised meanwhile waits for `sleep`

; sleep: clear IF, enable interrupts, halt until one wakes the CPU, then disable them.
sleep:
	xor a
	ldh (rIF),a
	ei
	halt
	nop
	di
	ret

main:
	ld hl,#str_title
	call puts
	ld hl,#LOG

	; --- 1. timer wakes: overflow after (256 - TMA) * 16 T, TMA = 0x80 | (23 k mod 128) ---
	ld a,#0x04
	ldh (rIE),a
	ld d,#ROUNDS
	ld e,#0
1$:	xor a
	ldh (rTAC),a
	ld a,e
	or #0x80
	ldh (rTMA),a
	ldh (rTIMA),a
	ld a,#0x05
	ldh (rTAC),a
	call sleep
	ld a,e
	add a,#23
	ld e,a
	dec d
	jr nz,1$
	xor a
	ldh (rTAC),a

	; --- 2. LYC wakes: LYC = 29 k mod 154 ---
	ld a,#0x40
	ldh (rSTAT),a
	ld a,#0x02
	ldh (rIE),a
	ld d,#ROUNDS
	ld e,#0
2$:	ld a,e
	ldh (rLYC),a
	call sleep
	ld a,e
	add a,#29
	cp #154
	jr c,3$
	sub a,#154
3$:	ld e,a
	dec d
	jr nz,2$

	; --- 3. HBlank wakes after a delay of 8 + 5 k loop iterations (k = 0..63, mod 256) ---
	ld a,#0x08
	ldh (rSTAT),a
	ld d,#ROUNDS
	ld e,#8
4$:	ld b,e
5$:	dec b
	jr nz,5$
	call sleep
	ld a,e
	add a,#5
	ld e,a
	dec d
	jr nz,4$
	xor a
	ldh (rSTAT),a
	ldh (rIE),a

	; every round logged: HL = LOG + 3 * ROUNDS * 4 = 0xC400
	ld a,h
	expect 0xC4, 1
	ld a,l
	expect 0x00, 2
	; checksum of the log
	ld hl,#LOG
	ld bc,#3 * ROUNDS * 4
	ld d,#0
6$:	ld a,(hl+)
	add a,d
	ld d,a
	dec bc
	ld a,b
	or c
	jr nz,6$
	ld a,d
	show str_sum
	ret

str_title: .asciz "halt_wake\n"
str_sum:   .asciz "log checksum"
