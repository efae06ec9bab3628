; wave_cgb: channel 3 left playing while the program reads and writes wave RAM, on
; whatever hardware runs it (the header sets the CGB flag, so PyBoy picks Game Boy Color
; hardware; with cgb=False the same code runs as a DMG).
;
; What it guards (found by tools/equiv_campaign.py on Shock Lobster run as a Game Boy
; Color): while CH3 plays, FF30-FF3F as a debugger or an RL harness reads them between
; frames (PyBoy's memory view) show the byte CH3 is at on CGB hardware, 0xFF on a DMG
; (no fetch in the same cycle). The ROM leaves CH3 playing for good, so every frame
; boundary of a rollout compares that view; the CPU's own reads while it plays are logged
; to WRAM at VARS (64 bytes), compared too.
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x80
IDLE_LCDC = 0x91
	.include "common.inc"
	no_interrupt_handlers

rNR30 = 0x1A
rNR31 = 0x1B
rNR32 = 0x1C
rNR33 = 0x1D
rNR34 = 0x1E
rNR50 = 0x24
rNR51 = 0x25
rNR52 = 0x26

main:
	ld a,#0x80
	ldh (rNR52),a           ; sound on
	ld a,#0x77
	ldh (rNR50),a
	ld a,#0xFF
	ldh (rNR51),a
	xor a
	ldh (rNR30),a           ; DAC off: wave RAM freely writable
	; wave RAM: 0x10, 0x21, 0x32, ... (distinct bytes)
	ld hl,#0xFF30
	ld a,#0x10
1$:	ld (hl+),a
	add a,#0x11
	bit 6,l
	jr z,1$
	ld a,#0x80
	ldh (rNR30),a           ; DAC on
	xor a
	ldh (rNR31),a
	ld a,#0x20
	ldh (rNR32),a           ; 100 %
	ld a,#0x40
	ldh (rNR33),a
	ld a,#0x87              ; trigger, no length, frequency 0x740: 384 T-cycles a sample
	ldh (rNR34),a
	; log 64 reads of FF30 (the byte CH3 is at, on CGB) at irregular distances
	ld hl,#VARS
	ld c,#64
2$:	ldh a,(0x30)
	ld (hl+),a
	ld b,c
3$:	dec b
	jr nz,3$
	dec c
	jr nz,2$
	; a write while it plays (CGB: lands on the current byte)
	ld a,#0xA5
	ldh (0x3F),a
	ldh a,(rNR52)
	and #0x04
	expect 0x04, 1          ; CH3 still playing
	ret                     ; PASSED; CH3 plays on while the ROM idles
