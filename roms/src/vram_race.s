; vram_race: the CPU reads and writes VRAM and OAM, and reads LY and STAT and writes SCX and BGP,
; while the LCD draws, unsynchronised with it: the PPU blocks some of those accesses (VRAM in
; mode 3, OAM in modes 2 and 3: reads give 0xFF, writes are dropped), the OAM writes move objects
; (10 start on one line: mode 3 lengthens) and the SCX/BGP writes land mid-line. No STAT
; interrupt source is on (an emulator may then run the LCD's mode changes lazily; this ROM is
; what checks that the CPU still sees each at its time). A VBlank handler counts frames and
; writes SCY. The iterations' delays vary so the accesses fall at every point of a line.
; Everything read goes into two running sums in WRAM and into VRAM and OAM themselves: compared
; with PyBoy at every frame. CH3 plays at its highest frequency meanwhile, and each iteration
; also reads and writes a wave RAM byte (seen only right after a fetch). Runs about 300 frames,
; prints the sums and passes.
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x93
	.include "common.inc"

isr_stat = isr_none
isr_timer = isr_none
isr_serial = isr_none
isr_joypad = isr_none

OUTER = VARS+2              ; rounds left
SCYV = VARS+3               ; SCY the VBlank handler writes next

isr_vblank:
	push af
	push hl
	ld hl,#FRAMES
	inc (hl)
	ld a,(SCYV)
	add a,#3
	ld (SCYV),a
	ldh (rSCY),a
	pop hl
	pop af
	reti

	.include "sums.inc"

main:
	ld hl,#str_title
	call puts
	call lcd_off
	; tiles 0x8000-0x8FFF: byte i = (i ^ i>>8); map 0x9800-0x9BFF: index i
	ld hl,#0x8000
1$:	ld a,l
	xor h
	ld (hl+),a
	ld a,h
	cp #0x90
	jr nz,1$
	ld hl,#0x9800
2$:	ld a,l
	ld (hl+),a
	ld a,h
	cp #0x9C
	jr nz,2$
	; OAM: objects 0-9 on line 40 (Y 56), X 8, 16, ..; the rest at Y 16 + 3k, X 4k
	ld hl,#0xFE00
	ld c,#0
3$:	ld a,c
	cp #10
	jr nc,4$
	ld a,#56
	ld (hl+),a
	ld a,c
	add a,a
	add a,a
	add a,a
	add a,#8
	jr 5$
4$:	ld a,c
	ld b,a
	add a,a
	add a,b
	add a,#16
	ld (hl+),a
	ld a,c
	add a,a
	add a,a
5$:	ld (hl+),a
	ld a,c
	ld (hl+),a              ; tile
	xor a
	ld (hl+),a              ; attributes
	inc c
	ld a,c
	cp #40
	jr nz,3$
	ld a,#0xE4
	ldh (rBGP),a
	xor a
	ldh (rSTAT),a           ; no STAT interrupt source
	ldh (rIF),a
	ld a,#0x93              ; LCD on, tile data 8000, objects on, BG on
	ldh (rLCDC),a
	; CH3 playing at its highest frequency (a fetch every 2 T): wave RAM reads and writes
	; see the byte being fetched when they land right after a fetch (PyBoy's window)
	ld a,#0x80
	ldh (0x26),a            ; NR52: sound on
	ldh (0x1A),a            ; NR30: CH3 DAC on
	ld a,#0x20
	ldh (0x1C),a            ; NR32: full volume
	ld a,#0xFF
	ldh (0x1D),a            ; NR33: frequency low
	ld a,#0x87
	ldh (0x1E),a            ; NR34: trigger, frequency high 7, no length
	ld a,#0x01
	ldh (rIE),a
	ei
	ld a,#120
	ld (OUTER),a
	ld de,#0x8000           ; VRAM pointer
outer:
	ld c,#0                 ; 256 iterations a round
iter:
	; a delay of 1-8 loops of 16 T from the pointer's low bits
	ld a,e
	and #7
	inc a
	ld b,a
6$:	dec b
	jr nz,6$
	; VRAM: read (0xFF when blocked), record, write it back plus one (dropped when blocked)
	ld h,d
	ld l,e
	ld a,(hl)
	call record
	inc a
	ld (hl),a
	; OAM: byte e & 0x9F (blocked in modes 2 and 3); record, write back xor c
	ld a,e
	and #0x9F
	ld l,a
	ld h,#0xFE
	ld a,(hl)
	call record
	xor c
	ld (hl),a
	; wave RAM: byte c & 0x0F read through HL (the access at the instruction's first cycle),
	; recorded, written back plus c
	ld a,c
	and #0x0F
	or #0x30
	ld l,a
	ld h,#0xFF
	ld a,(hl)
	call record
	add a,c
	ld (hl),a
	; every 8th iteration: LY and STAT recorded, SCX and BGP written mid-line
	ld a,c
	and #7
	jr nz,7$
	ldh a,(rLY)
	call record
	ldh a,(rSTAT)
	call record
	ld a,e
	ldh (rSCX),a
	cpl
	ldh (rBGP),a
7$:	; next VRAM byte, 8000-97FF (tiles), stepping 37 to spread over lines
	ld a,e
	add a,#37
	ld e,a
	jr nc,8$
	inc d
	ld a,d
	cp #0x98
	jr nz,8$
	ld d,#0x80
8$:	dec c
	jr nz,iter
	ld hl,#OUTER
	dec (hl)
	jr nz,outer
	di
	ld a,(SUM)
	show str_sum
	ld a,(MIX)
	show str_mix
	ret

str_title:
	.asciz "vram_race\n"
str_sum:
	.asciz "sum"
str_mix:
	.asciz "mix"
