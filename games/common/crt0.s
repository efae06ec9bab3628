;; Startup code and interrupt handlers shared by the three emurust games.
;; Header bytes 0x104-0x14F are left zero here; tools/mkrom.py fills title,
;; cartridge type, sizes and checksums (no Nintendo logo is included).
	.module crt0
	.globl _main
	.globl _G, _shadow_oam
	.globl l__INITIALIZER, s__INITIALIZER, s__INITIALIZED

	.area _HEADER (ABS)
	.org 0x00
	ret
	.org 0x40               ; VBlank
	jp vbl_isr
	.org 0x48               ; LCD STAT (LYC splits)
	jp stat_isr
	.org 0x50               ; Timer
	jp timer_isr
	.org 0x58               ; Serial (unused)
	reti
	.org 0x60               ; Joypad (unused)
	reti
	.org 0x100
	nop
	jp start

	;; area order matters: the linker lays relocatable areas out in this order
	.area _HOME
	.area _CODE
	.area _INITIALIZER
	.area _GSINIT
	.area _GSFINAL
	.area _DATA
	.area _INITIALIZED
	.area _BSEG
	.area _BSS
	.area _HEAP

	.area _CODE
start:
	di
	ld sp, #0xE000
	;; LCD may be on after the boot ROM (PyBoy skips it): only switch it off in VBlank
1$:	ldh a, (0x44)
	cp #144
	jr c, 1$
	xor a
	ldh (0x40), a
	;; clear WRAM C000-DFFF (game state, shadow OAM, C globals)
	ld hl, #0xC000
	ld bc, #0x2000
2$:	xor a
	ld (hl+), a
	dec bc
	ld a, b
	or c
	jr nz, 2$
	;; clear HRAM and copy the OAM DMA routine there (CPU may only touch HRAM during DMA)
	ld hl, #0xFF80
	ld c, #0x7F
3$:	xor a
	ld (hl+), a
	dec c
	jr nz, 3$
	ld hl, #dma_routine
	ld de, #0xFF80
	ld c, #(dma_end - dma_routine)
4$:	ld a, (hl+)
	ld (de), a
	inc de
	dec c
	jr nz, 4$
	;; C initialised globals
	ld bc, #l__INITIALIZER
	ld hl, #s__INITIALIZER
	ld de, #s__INITIALIZED
5$:	ld a, b
	or c
	jr z, 6$
	ld a, (hl+)
	ld (de), a
	inc de
	dec bc
	jr 5$
6$:	call gsinit
	call _main
7$:	halt
	jr 7$

dma_routine:
	ld a, #>_shadow_oam
	ldh (0x46), a
	ld a, #40               ; 160 M-cycles of DMA
8$:	dec a
	jr nz, 8$
	ret
dma_end:

;; VBlank: OAM DMA from shadow OAM, latch scroll/LCDC/window for the top of
;; the frame, rearm the LYC split table, count frames, wake the main loop.
vbl_isr:
	push af
	push bc
	push de
	push hl
	call 0xFF80
	ld a, (_base_lcdc)
	or #0x80
	ldh (0x40), a
	ld a, (_base_scx)
	ldh (0x43), a
	ld a, (_base_scy)
	ldh (0x42), a
	ld a, (_win_x)
	ldh (0x4B), a
	ld a, (_win_y)
	ldh (0x4A), a
	ld a, (_base_bgp)
	ldh (0x47), a
	xor a
	ld (_split_i), a
	ld a, (_split_tab)       ; first split line (LYC = line before the split)
	ldh (0x45), a
	ld hl, #(_G + 4)         ; G.frames (u16 LE)
	inc (hl)
	jr nz, 9$
	inc hl
	inc (hl)
9$:	ld a, #1
	ld (_vbl_flag), a
	pop hl
	pop de
	pop bc
	pop af
	reti

;; LYC interrupt: wait for HBlank of the line before the split, then apply
;; entry {lyc, lcdc, scx, scy, bgp} and arm LYC for the next entry.
stat_isr:
	push af
	push bc
	push hl
	ld a, (_split_i)
	ld c, a
	ld hl, #_split_n
	cp (hl)
	jr nc, 12$
	;; hl = split_tab + i*5 + 1
	ld b, a
	add a, a
	add a, a
	add a, b
	inc a
	ld hl, #_split_tab
	add a, l
	ld l, a
	jr nc, 10$
	inc h
10$:	ldh a, (0x41)
	and #3
	jr nz, 10$
	ld a, (hl+)
	ldh (0x40), a
	ld a, (hl+)
	ldh (0x43), a
	ld a, (hl+)
	ldh (0x42), a
	ld a, (hl+)
	ldh (0x47), a
	ld a, (hl)              ; next entry's lyc (table has a 0xFF sentinel)
	ldh (0x45), a
	ld a, c
	inc a
	ld (_split_i), a
12$:	pop hl
	pop bc
	pop af
	reti

;; Timer: 16-bit tick counter used as the game's "music"/gameplay clock.
timer_isr:
	push af
	push hl
	ld hl, #_timer_ticks
	inc (hl)
	jr nz, 13$
	inc hl
	inc (hl)
13$:	pop hl
	pop af
	reti

	.area _GSINIT
gsinit:
	.area _GSFINAL
	ret

	.area _DATA
_vbl_flag::	.ds 1
_timer_ticks::	.ds 2
_base_lcdc::	.ds 1
_base_scx::	.ds 1
_base_scy::	.ds 1
_base_bgp::	.ds 1
_win_x::	.ds 1
_win_y::	.ds 1
_split_n::	.ds 1
_split_i::	.ds 1
_split_tab::	.ds 5*4+1
