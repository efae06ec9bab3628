; scenes: what games do between and during scenes, forever, driven by the
; joypad and a frame counter (Pan Docs "LCDC", "STAT", "OAM DMA", "halt").
;
; Four scenes take turns; a scene ends after a number of frames or when A or
; START is pressed. Between scenes: a palette fade, the LCD switched off
; (in VBlank, or - as some games do - at some line outside VBlank), VRAM
; tiles and maps and OAM loaded while off, STAT/LYC/scroll/window set up,
; and the LCD switched on again with the next scene's LCDC.
;  scene 0: BG only; LYC interrupt chain splitting the scroll at line 72;
;           the main loop polls LY to change BGP at lines 100 and 130
;  scene 1: window as a status bar (WY=128), 40 objects 8x8 moved by the
;           d-pad, OAM DMA in VBlank, a mode 0 (HBlank) interrupt per line
;           bending SCX
;  scene 2: objects 8x16, a mode 2 (OAM) interrupt switching the window on at
;           line 40 and off at line 88, WX moved by the d-pad
;  scene 3: LYC chain switching the BG and objects off/on mid-frame, mode 1
;           interrupt, SCY moved by up/down
; The main loop waits for VBlank with HALT (IE = VBlank + STAT, so STAT
; interrupts wake it too) and records STAT and LY at many points into a ring
; in WRAM (RING, 4 KiB), the handlers record what they see too, so that any
; difference in the LCD's timing shows in memory at once. After the first
; full round of scenes the ROM prints PASSED and carries on for ever.
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"

isr_timer = isr_none
isr_serial = isr_none
isr_joypad = isr_none

RINGPTR = VARS+0        ; 16-bit, next free byte of RING
SCENE   = VARS+2        ; current scene 0-3
SFRAMES = VARS+3        ; frames left in this scene
VBLFLAG = VARS+4        ; set by the VBlank handler
BUTTONS = VARS+5        ; 1 = pressed: low nibble d-pad, high nibble buttons
PREVBTN = VARS+6
RNG     = VARS+7        ; LFSR state
PLAYERX = VARS+8
PLAYERY = VARS+9
ROUNDS  = VARS+10       ; transitions done
LYCSTEP = VARS+11       ; index into the scene's LYC chain
SCXBASE = VARS+12
FRAMEC  = VARS+13       ; frame counter (8-bit)
WXPOS   = VARS+14
SCYPOS  = VARS+15
PASSED  = VARS+16       ; PASSED already printed
RING    = 0xC100
RING_END = 0xD100
SHADOW  = 0xD200        ; shadow OAM (DMA source page D2)
HRAM_DMA = 0xFF80

; ---------------------------------------------------------------- the ring

; ring: append A to the ring. Preserves every register but F.
ring:
	push hl
	push de
	ld e,a
	ld hl,#RINGPTR
	ld a,(hl+)
	ld h,(hl)
	ld l,a
	ld (hl),e
	inc hl
	ld a,h
	cp #>RING_END
	jr nz,1$
	ld h,#>RING
1$:	ld a,l
	ld (RINGPTR),a
	ld a,h
	ld (RINGPTR+1),a
	ld a,e
	pop de
	pop hl
	ret

; ring_sl: append STAT and LY. Clobbers A.
ring_sl:
	ldh a,(rSTAT)
	call ring
	ldh a,(rLY)
	jp ring

; ---------------------------------------------------------------- handlers

isr_vblank:
	push af
	push bc
	push de
	push hl
	ldh a,(rLY)
	call ring
	ld a,#1
	ld (VBLFLAG),a
	ld a,(FRAMEC)
	inc a
	ld (FRAMEC),a
	ldh a,(rLCDC)
	bit 1,a
	jr z,1$
	ld a,#>SHADOW
	call HRAM_DMA           ; objects on: copy the shadow OAM
1$:	ld a,(SCENE)
	cp #0
	jr nz,2$
	ld a,(SCXBASE)          ; scene 0: the top half scrolls back
	ldh (rSCX),a
	ld a,#72
	ldh (rLYC),a
2$:	cp #3
	jr nz,3$
	xor a
	ld (LYCSTEP),a
	ld a,#30
	ldh (rLYC),a
3$:	call ring_sl
	pop hl
	pop de
	pop bc
	pop af
	reti

isr_stat:
	push af
	push bc
	push hl
	ld a,(SCENE)
	or a
	jr z,s0
	dec a
	jr z,s1
	dec a
	jr z,s2
	jr s3
s0:	; LYC at 72: the lower half scrolls the other way
	ld a,(SCXBASE)
	cpl
	ldh (rSCX),a
	ldh a,(rLY)
	call ring
	jr isr_done
s1:	; HBlank: SCX bends with the line
	ldh a,(rLY)
	ld b,a
	and #0x1F
	ld c,a
	ld a,(SCXBASE)
	add a,c
	ldh (rSCX),a
	ld a,b
	and #0x0F
	jr nz,isr_done
	ld a,b
	call ring               ; every 16th line
	jr isr_done
s2:	; mode 2: window on at line 40, off at line 88
	ldh a,(rLY)
	cp #40
	jr nz,1$
	ldh a,(rLCDC)
	or #0x20
	ldh (rLCDC),a
	call ring
	jr isr_done
1$:	cp #88
	jr nz,isr_done
	ldh a,(rLCDC)
	and #0xDF
	ldh (rLCDC),a
	call ring
	jr isr_done
s3:	; LYC chain 30 -> 60 -> 90 -> 120: BG off, BG on + objects off, ...
	ldh a,(rSTAT)
	and #3
	cp #1
	jr z,2$                 ; the mode 1 source
	ldh a,(rSTAT)
	call ring
	ld a,(LYCSTEP)
	ld c,a
	inc a
	and #3
	ld (LYCSTEP),a
	ld b,#0
	ld hl,#s3_lcdc
	add hl,bc
	ldh a,(rLCDC)
	and #0xFC
	or (hl)
	ldh (rLCDC),a
	ld hl,#s3_lyc
	add hl,bc
	ld a,(hl)
	ldh (rLYC),a
	jr isr_done
2$:	ldh a,(rLY)
	call ring
isr_done:
	pop hl
	pop bc
	pop af
	reti
s3_lcdc:	.db 0x02, 0x01, 0x03, 0x03
s3_lyc:	.db 60, 90, 120, 30

; OAM DMA routine, copied to HRAM: A = source page
dma_routine:
	ldh (rDMA),a
	ld a,#40
1$:	dec a
	jr nz,1$
	ret
dma_routine_end:

; ---------------------------------------------------------------- helpers

; rng_next: A = next LFSR byte (also mixes in the buttons).
rng_next:
	ld a,(RNG)
	sla a
	jr nc,1$
	xor #0x1D
1$:	ld hl,#BUTTONS
	xor (hl)
	ld (RNG),a
	ret

; read_pad: BUTTONS = pressed buttons (1 = down), as games read P1.
read_pad:
	ld a,#0x20              ; d-pad
	ldh (rP1),a
	ldh a,(rP1)
	ldh a,(rP1)
	cpl
	and #0x0F
	ld b,a
	ld a,#0x10              ; buttons
	ldh (rP1),a
	ldh a,(rP1)
	ldh a,(rP1)
	ldh a,(rP1)
	cpl
	and #0x0F
	swap a
	or b
	ld b,a
	ld a,#0x30
	ldh (rP1),a
	ld a,(BUTTONS)
	ld (PREVBTN),a
	ld a,b
	ld (BUTTONS),a
	jp ring

; wait_vblank: HALT until the VBlank handler ran (STAT interrupts also wake).
wait_vblank:
	xor a
	ld (VBLFLAG),a
1$:	halt
	nop
	ld a,(VBLFLAG)
	or a
	jr z,1$
	jp ring_sl

; copy: HL = source, DE = destination, BC = length
copy:
	ld a,(hl+)
	ld (de),a
	inc de
	dec bc
	ld a,b
	or c
	jr nz,copy
	ret

; fill: HL = destination, BC = length, A = value + index (per byte A += D)
fill:
	ld (hl+),a
	add a,d
	ld e,a
	dec bc
	ld a,b
	or c
	ld a,e
	jr nz,fill
	ret

; ---------------------------------------------------------------- scene set-up

; scene_lcdc: LCDC, STAT, IE per scene
scene_lcdc:	.db 0x91, 0xE3, 0x87, 0x9B
scene_stat:	.db 0x40, 0x08, 0x20, 0x50
scene_frames:	.db 40, 30, 25, 30

; load_scene: the LCD is off. Load VRAM/OAM and registers of SCENE.
load_scene:
	call ring_sl            ; LY 0, mode 0 while off
	ld a,(SCENE)
	ld e,a
	ld d,#0
	; tiles: 2 KiB from ROM at tileset + scene * 256, to 8000 and 8800
	ld hl,#tileset
	add hl,de
	ld de,#0x8000
	ld bc,#0x0800
	call copy
	ld a,(SCENE)
	ld e,a
	ld d,#0
	ld hl,#tileset+0x200
	add hl,de
	ld de,#0x8800
	ld bc,#0x0800
	call copy
	; BG map 9800: tile = i * (scene + 1)
	ld a,(SCENE)
	inc a
	ld d,a
	ld hl,#0x9800
	ld bc,#0x0400
	xor a
	call fill
	; window map 9C00: a status bar pattern
	ld d,#3
	ld hl,#0x9C00
	ld bc,#0x0400
	ld a,#0x80
	call fill
	; OAM directly (the LCD is off) and the shadow copy: 40 objects
	ld hl,#SHADOW
	ld c,#0
1$:	ld a,c
	and #7
	add a,a
	add a,a
	add a,a
	add a,a
	add a,#24               ; Y: groups of 5 objects on 8 bands
	ld (hl+),a
	ld a,c
	add a,a
	add a,a
	add a,a
	add a,c                 ; X = 9 c
	ld (hl+),a
	ld a,c
	ld (hl+),a              ; tile
	ld a,c
	and #0x70               ; palette / flips / priority
	ld (hl+),a
	inc c
	ld a,c
	cp #40
	jr nz,1$
	ld hl,#SHADOW
	ld de,#0xFE00
	ld bc,#160
	call copy
	; registers
	ld a,(SCENE)
	ld e,a
	ld d,#0
	ld hl,#scene_stat
	add hl,de
	ld a,(hl)
	ldh (rSTAT),a
	ld hl,#scene_frames
	add hl,de
	ld a,(hl)
	ld (SFRAMES),a
	ld a,#72
	ldh (rLYC),a            ; written while off (PyBoy's STAT override)
	ld a,(SCENE)
	cp #3
	jr nz,2$
	ld a,#30
	ldh (rLYC),a
	xor a
	ld (LYCSTEP),a
2$:	ld a,#128
	ldh (0x4A),a            ; WY
	ld a,#7
	ld (WXPOS),a
	ldh (0x4B),a            ; WX
	ld a,(SCENE)
	cp #2
	jr nz,3$
	xor a
	ldh (0x4A),a            ; scene 2: WY = 0, the handler switches it
3$:	xor a
	ldh (rSCX),a
	ldh (rSCY),a
	ld (SCYPOS),a
	ld a,#0xE4
	ldh (rBGP),a
	ld a,#0xD0
	ldh (0x48),a
	ld a,#0x1B
	ldh (0x49),a
	call ring_sl
	ret

; lcd_on_scene: switch on with the scene's LCDC; record the first STAT reads.
lcd_on_scene:
	ld a,(SCENE)
	ld e,a
	ld d,#0
	ld hl,#scene_lcdc
	add hl,de
	ld a,(hl)
	ldh (rLCDC),a
	call ring_sl
	call ring_sl
	ret

; transition: fade, switch off (in VBlank or at a line), load the next scene.
transition:
	; fade over three frames
	ld a,#0x90
	ldh (rBGP),a
	call wait_vblank
	ld a,#0x40
	ldh (rBGP),a
	call wait_vblank
	ld a,#0x00
	ldh (rBGP),a
	call wait_vblank
	ld a,(ROUNDS)
	inc a
	ld (ROUNDS),a
	and #1
	jr z,1$
	; off outside VBlank, at a line picked by the RNG (0-127)
	call rng_next
	and #0x7F
	ld b,a
2$:	ldh a,(rLY)
	cp b
	jr nz,2$
	call rng_next
	and #3
	ld b,a                  ; ... and a mode: 0-2 wait for that mode, 3 none
	cp #3
	jr z,3$
4$:	ldh a,(rSTAT)
	and #3
	cp b
	jr nz,4$
3$:	xor a
	ldh (rLCDC),a
	jr 5$
1$:	; off in VBlank (the handler has just run)
	ldh a,(rLY)
	call ring
	xor a
	ldh (rLCDC),a
5$:	call ring_sl
	ld a,(SCENE)
	inc a
	and #3
	ld (SCENE),a
	jr nz,6$
	; a full round of scenes: report once
	ld a,(PASSED)
	or a
	jr nz,6$
	inc a
	ld (PASSED),a
	ld a,#'P
	ld (RESULT),a
	ld hl,#str_passed
	call puts
6$:	call load_scene
	call lcd_on_scene
	ret

; ---------------------------------------------------------------- per scene

frame_scene0:
	ld a,(SCXBASE)
	inc a
	ld (SCXBASE),a
	; poll LY: BGP changes at 100 and 130
	ld b,#100
	call 1$
	ld a,#0x1B
	ldh (rBGP),a
	call ring_sl
	ld b,#130
	call 1$
	ld a,#0xE4
	ldh (rBGP),a
	jp ring_sl
1$:	ldh a,(rLY)
	cp b
	ret z
	cp #144
	ret nc                  ; VBlank came first (a long frame): give up
	jr 1$

frame_scene1:
	; d-pad moves the player (object 0) in the shadow OAM
	ld a,(BUTTONS)
	ld b,a
	ld a,(PLAYERX)
	bit 0,b
	jr z,1$
	inc a
1$:	bit 1,b
	jr z,2$
	dec a
2$:	ld (PLAYERX),a
	ld (SHADOW+1),a
	ld a,(PLAYERY)
	bit 2,b
	jr z,3$
	dec a
3$:	bit 3,b
	jr z,4$
	inc a
4$:	ld (PLAYERY),a
	ld (SHADOW),a
	; the other objects drift with the RNG
	call rng_next
	and #0x3F
	add a,a
	add a,a
	ld l,a
	ld h,#>SHADOW
	inc l
	inc (hl)
	ld a,(SCXBASE)
	add a,#2
	ld (SCXBASE),a
	jp ring_sl

frame_scene2:
	ld a,(BUTTONS)
	ld b,a
	ld a,(WXPOS)
	bit 0,b
	jr z,1$
	add a,#3
1$:	bit 1,b
	jr z,2$
	sub #3
2$:	ld (WXPOS),a
	ldh (0x4B),a
	; objects walk down
	ld hl,#SHADOW
	ld c,#40
3$:	inc (hl)
	inc hl
	inc hl
	inc hl
	inc hl
	dec c
	jr nz,3$
	jp ring_sl

frame_scene3:
	ld a,(BUTTONS)
	ld b,a
	ld a,(SCYPOS)
	bit 2,b
	jr z,1$
	dec a
1$:	bit 3,b
	jr z,2$
	inc a
2$:	inc a
	ld (SCYPOS),a
	ldh (rSCY),a
	; wait for line 140 by polling, then read STAT a few times
	ld b,#140
3$:	ldh a,(rLY)
	cp b
	jr z,4$
	cp #144
	jr nc,4$
	jr 3$
4$:	call ring_sl
	jp ring_sl

frame_table:
	.dw frame_scene0, frame_scene1, frame_scene2, frame_scene3

main:
	ld hl,#str_title
	call puts
	ld a,#<RING
	ld (RINGPTR),a
	ld a,#>RING
	ld (RINGPTR+1),a
	ld a,#0xA5
	ld (RNG),a
	ld a,#80
	ld (PLAYERX),a
	ld (PLAYERY),a
	; the DMA routine to HRAM
	ld hl,#dma_routine
	ld de,#HRAM_DMA
	ld bc,#(dma_routine_end-dma_routine)
	call copy
	call lcd_off
	call load_scene
	call lcd_on_scene
	xor a
	ldh (rIF),a
	ld a,#0x03              ; VBlank + STAT
	ldh (rIE),a
	ei
loop:
	call wait_vblank
	call read_pad
	call ring_sl
	; the scene's frame work
	ld a,(SCENE)
	add a,a
	ld e,a
	ld d,#0
	ld hl,#frame_table
	add hl,de
	ld a,(hl+)
	ld h,(hl)
	ld l,a
	call call_hl
	call ring_sl
	; end of scene: timer, or A / START newly pressed
	ld a,(PREVBTN)
	cpl
	ld b,a
	ld a,(BUTTONS)
	and b
	and #0x90
	jr nz,1$
	ld a,(SFRAMES)
	dec a
	ld (SFRAMES),a
	jr nz,loop
1$:	call transition
	jr loop

call_hl:
	jp (hl)

str_title: .asciz "scenes\n"

	.org 0x2000
; 4 KiB of tile data: bytes of a simple generator
tileset:
v = 0
	.rept 0x1000
	.db ((v * 7 + (v / 16) * 3) ^ (v / 64)) & 0xFF
v = v + 1
	.endm
