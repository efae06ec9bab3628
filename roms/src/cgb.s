; cgb: Game Boy Color features (header CGB flag 0x80, so PyBoy runs it as a CGB game).
; Pan Docs "CGB Registers", "LCD Color Palettes", "BG Map Attributes", "VRAM DMA".
;  1. WRAM banks (SVBK, FF70): D000 of banks 1-7 hold different bytes; bank 0 selects 1.
;  2. VRAM banks (VBK, FF4F): 8000 of bank 0 and bank 1 hold different bytes.
;  3. Palette memory: 64 bytes through BCPD/OCPD with auto-increment, read back byte by
;     byte; the index register wraps (0x80 + 64 writes reads back as 0xC0).
;  4. General-purpose HDMA: 32 bytes WRAM -> VRAM 8800 at once; HDMA5 then reads 0xFF.
;  5. H-blank HDMA with the LCD on: 4 blocks WRAM -> VRAM 8900, done when HDMA5 reads 0xFF.
;  6. Double speed: KEY1 bit 0 + STOP switches speed (KEY1 bit 7 set; DIV runs twice as
;     fast against the LCD), and back (only the DIV check: PyBoy leaves KEY1 bit 7 set).
; Then it leaves a colour scene on screen for the frame-by-frame comparisons: background
; tiles from both banks with per-tile palettes, flips and priority, a window, colour objects
; (one moved by the d-pad), an H-blank HDMA animating a tile and a palette colour cycling
; every frame.
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x80
IDLE_LCDC = 0xF3            ; LCD, window map 9C00, window, tiles 8000, objects, BG
	.include "common.inc"

isr_vblank = vblank
isr_stat = isr_none
isr_timer = isr_none
isr_serial = isr_none
isr_joypad = isr_none

rKEY1 = 0x4D
rVBK  = 0x4F
rHDMA1 = 0x51
rHDMA2 = 0x52
rHDMA3 = 0x53
rHDMA4 = 0x54
rHDMA5 = 0x55
rBCPS = 0x68
rBCPD = 0x69
rOCPS = 0x6A
rOCPD = 0x6B
rSVBK = 0x70
rWY   = 0x4A
rWX   = 0x4B

ANIM  = 0xC100              ; 32-byte tile row buffer the VBlank handler sends by HDMA
GPSRC = 0xC200
HBSRC = 0xC300

main:
	call lcd_off
	call test_wram
	call test_vram
	call test_palettes
	call test_gp_dma
	call test_hblank_dma
	call test_speed
	call lcd_off
	call scene
	ret

; ---------------------------------------------------------------- 1. WRAM banks
test_wram:
	ld c,#1
1$:	ld a,c
	ldh (rSVBK),a
	swap a
	or c                    ; bank * 0x11
	ld (0xD000),a
	inc c
	ld a,c
	cp #8
	jr nz,1$
	ld c,#1
2$:	ld a,c
	ldh (rSVBK),a
	ldh a,(rSVBK)
	and #7
	cp c
	ld b,#1
	call nz,fail
	ld a,c
	swap a
	or c
	ld b,a
	ld a,(0xD000)
	cp b
	ld b,#2
	call nz,fail
	inc c
	ld a,c
	cp #8
	jr nz,2$
	xor a                   ; bank 0 selects bank 1
	ldh (rSVBK),a
	ldh a,(rSVBK)
	expect 0xF8, 3
	ld a,(0xD000)
	expect 0x11, 4
	ld a,(0xC000)           ; bank 0 is not banked
	expect 'R, 5
	ld a,#1
	ldh (rSVBK),a
	ret

; ---------------------------------------------------------------- 2. VRAM banks
test_vram:
	xor a
	ldh (rVBK),a
	ld a,#0xA5
	ld (0x8000),a
	ld a,#1
	ldh (rVBK),a
	ld a,#0x5A
	ld (0x8000),a
	ldh a,(rVBK)
	expect 0xFF, 10
	ld a,(0x8000)
	expect 0x5A, 11
	xor a
	ldh (rVBK),a
	ldh a,(rVBK)
	expect 0xFE, 12
	ld a,(0x8000)
	expect 0xA5, 13
	ret

; ---------------------------------------------------------------- 3. palettes
test_palettes:
	ld a,#0x80
	ldh (rBCPS),a
	ld hl,#pal_bg
	ld b,#64
1$:	ld a,(hl+)
	ldh (rBCPD),a
	dec b
	jr nz,1$
	ldh a,(rBCPS)
	expect 0xC0, 20
	ld hl,#pal_bg
	ld c,#0
2$:	ld a,c
	ldh (rBCPS),a
	ldh a,(rBCPD)
	ld b,a
	ld a,(hl+)
	cp b
	ld a,b
	ld b,#21
	call nz,fail
	inc c
	ld a,c
	cp #64
	jr nz,2$
	ld a,#0x80
	ldh (rOCPS),a
	ld hl,#pal_obj
	ld b,#64
3$:	ld a,(hl+)
	ldh (rOCPD),a
	dec b
	jr nz,3$
	ld hl,#pal_obj
	ld c,#0
4$:	ld a,c
	ldh (rOCPS),a
	ldh a,(rOCPD)
	ld b,a
	ld a,(hl+)
	cp b
	ld a,b
	ld b,#22
	call nz,fail
	inc c
	ld a,c
	cp #64
	jr nz,4$
	ret

; ---------------------------------------------------------------- 4. general-purpose HDMA
test_gp_dma:
	ld hl,#GPSRC
	ld c,#32
	ld a,#0x40
1$:	ld (hl+),a
	inc a
	dec c
	jr nz,1$
	ld a,#>GPSRC
	ldh (rHDMA1),a
	ld a,#<GPSRC
	ldh (rHDMA2),a
	ld a,#0x08
	ldh (rHDMA3),a
	xor a
	ldh (rHDMA4),a
	ld a,#0x01              ; 2 blocks of 16, general purpose
	ldh (rHDMA5),a
	ldh a,(rHDMA5)
	expect 0xFF, 30
	ld hl,#0x8800
	ld c,#32
	ld b,#0x40
2$:	ld a,(hl+)
	cp b
	push bc
	ld b,#31
	call nz,fail
	pop bc
	inc b
	dec c
	jr nz,2$
	ret

; ---------------------------------------------------------------- 5. H-blank HDMA
test_hblank_dma:
	ld hl,#HBSRC
	ld c,#64
	ld a,#0x80
1$:	ld (hl+),a
	inc a
	dec c
	jr nz,1$
	ld a,#>HBSRC
	ldh (rHDMA1),a
	ld a,#<HBSRC
	ldh (rHDMA2),a
	ld a,#0x09
	ldh (rHDMA3),a
	xor a
	ldh (rHDMA4),a
	ld a,#0x91
	ldh (rLCDC),a
	ld a,#0x83              ; 4 blocks, H-blank
	ldh (rHDMA5),a
	ld de,#0
2$:	ldh a,(rHDMA5)
	cp #0xFF
	jr z,3$
	inc de
	ld a,d
	cp #0x40
	jr nz,2$
	ld b,#40                ; never finished
	call fail
3$:	call lcd_off
	ld hl,#0x8900
	ld c,#64
	ld b,#0x80
4$:	ld a,(hl+)
	cp b
	push bc
	ld b,#41
	call nz,fail
	pop bc
	inc b
	dec c
	jr nz,4$
	ret

; ---------------------------------------------------------------- 6. double speed
; DIV counts CPU cycles, the LCD does not speed up: DIV advances twice as much over 10
; lines in double speed (10 * 456 / 256 = 17.8 normally).
div_over_10_lines:
	ld a,#0x91
	ldh (rLCDC),a
1$:	ldh a,(rLY)
	cp #10
	jr nz,1$
	ldh a,(rDIV)
	ld c,a
2$:	ldh a,(rLY)
	cp #20
	jr nz,2$
	ldh a,(rDIV)
	sub c
	push af
	call lcd_off
	pop af
	ret

speed_switch:
	xor a
	ldh (rIE),a
	ld a,#0x30
	ldh (rP1),a
	ld a,#1
	ldh (rKEY1),a
	stop
	nop
	ret

test_speed:
	ldh a,(rKEY1)
	and #0x80
	expect 0x00, 50
	call div_over_10_lines
	expect_range 16, 19, 51
	call speed_switch
	ldh a,(rKEY1)
	and #0x80
	expect 0x80, 52
	call div_over_10_lines
	expect_range 34, 37, 53
	call speed_switch
	call div_over_10_lines
	expect_range 16, 19, 54
	ret

; ---------------------------------------------------------------- the scene
scene:
	; tile 1 (bank 0): vertical stripes of colours 0-3; tile 2 (bank 1): a diagonal;
	; tile 3 (bank 0): animated by the VBlank handler.
	xor a
	ldh (rVBK),a
	ld hl,#0x8010
	ld b,#8
1$:	ld a,#0x33
	ld (hl+),a
	ld a,#0x0F
	ld (hl+),a
	dec b
	jr nz,1$
	ld a,#1
	ldh (rVBK),a
	ld hl,#0x8020
	ld a,#0x80
	ld b,#8
2$:	ld (hl+),a
	ld (hl+),a
	rrca
	dec b
	jr nz,2$
	; background map: tiles 1, 2, 3 by column; attributes (bank 1) from the position
	xor a
	ldh (rVBK),a
	ld hl,#0x9800
	ld bc,#0x0400
3$:	ld a,l
	and #3
	jr nz,4$
	inc a
4$:	ld (hl+),a
	dec bc
	ld a,b
	or c
	jr nz,3$
	ld a,#1
	ldh (rVBK),a
	ld hl,#0x9800
	ld bc,#0x0400
5$:	ld a,l
	and #3
	cp #2
	ld a,l
	jr nz,6$
	or #0x08                ; tile 2 lives in bank 1
6$:	and #0xEF
	ld (hl+),a              ; palette = low bits, flips/priority from the position
	dec bc
	ld a,b
	or c
	jr nz,5$
	; window map 9C00: tile 1, palette 5, bank 0 (attributes) / tile 1 (tiles)
	ld hl,#0x9C00
	ld bc,#0x0400
7$:	ld a,#0x05
	ld (hl+),a
	dec bc
	ld a,b
	or c
	jr nz,7$
	xor a
	ldh (rVBK),a
	ld hl,#0x9C00
	ld bc,#0x0400
8$:	ld a,#1
	ld (hl+),a
	dec bc
	ld a,b
	or c
	jr nz,8$
	ld a,#112
	ldh (rWY),a
	ld a,#87
	ldh (rWX),a
	; objects: 8 of them in a diagonal, palettes 0-7, tiles 1/2 (bank 0/1)
	ld hl,#0xFE00
	ld c,#0
9$:	ld a,c
	add a,a
	add a,a
	add a,a
	add a,#40
	ld (hl+),a              ; Y
	add a,#8
	ld (hl+),a              ; X
	ld a,c
	and #1
	inc a
	ld (hl+),a              ; tile 1 or 2
	ld a,c
	and #1
	rlca
	rlca
	rlca                    ; bank bit 3 for tile 2
	or c                    ; palette
	bit 2,c
	jr z,10$
	or #0x80                ; behind the background
10$:	ld (hl+),a
	inc c
	ld a,c
	cp #8
	jr nz,9$
	; the rest of OAM off screen
	ld b,#(160-32)
	xor a
11$:	ld (hl+),a
	dec b
	jr nz,11$
	ret

; VBlank: move object 0 with the d-pad, scroll, cycle a colour, animate tile 3 by HDMA,
; and visit another WRAM bank.
vblank:
	push af
	push bc
	push de
	push hl
	ld a,#0x20
	ldh (rP1),a
	ldh a,(rP1)
	ldh a,(rP1)
	cpl
	and #0x0F
	ld b,a
	ld a,#0x30
	ldh (rP1),a
	ld hl,#0xFE01
	bit 0,b                 ; right
	jr z,1$
	inc (hl)
1$:	bit 1,b                 ; left
	jr z,2$
	dec (hl)
2$:	dec hl
	bit 2,b                 ; up
	jr z,3$
	dec (hl)
3$:	bit 3,b                 ; down
	jr z,4$
	inc (hl)
4$:	ldh a,(rSCX)
	inc a
	ldh (rSCX),a
	; colour 1 of BG palette 2 follows the frame counter
	ld a,#0x92
	ldh (rBCPS),a
	ld a,(FRAMES)
	ldh (rBCPD),a
	ld a,(FRAMES)
	rrca
	and #0x7F
	ldh (rBCPD),a
	; tile 3's 16 bytes from ANIM (H-blank DMA during the next frame)
	ld hl,#ANIM
	ld a,(FRAMES)
	ld b,#16
5$:	ld (hl+),a
	add a,#0x11
	dec b
	jr nz,5$
	ld a,#>ANIM
	ldh (rHDMA1),a
	ld a,#<ANIM
	ldh (rHDMA2),a
	xor a
	ldh (rHDMA3),a
	ld a,#0x30
	ldh (rHDMA4),a
	ld a,#0x80              ; 1 block, H-blank
	ldh (rHDMA5),a
	; WRAM bank 5 counts frames, then bank 1 is selected again
	ld a,#5
	ldh (rSVBK),a
	ld hl,#0xD800
	inc (hl)
	ld a,#1
	ldh (rSVBK),a
	pop hl
	pop de
	pop bc
	pop af
	reti

pal_bg:
	.dw 0x7FFF, 0x03E0, 0x001F, 0x0000
	.dw 0x7FFF, 0x7C00, 0x03FF, 0x1084
	.dw 0x7FFF, 0x0210, 0x4010, 0x0000
	.dw 0x6F7B, 0x3DEF, 0x7FE0, 0x0421
	.dw 0x7FFF, 0x001F, 0x03E0, 0x7C00
	.dw 0x56B5, 0x2D6B, 0x14A5, 0x0000
	.dw 0x7FFF, 0x5294, 0x294A, 0x0000
	.dw 0x03FF, 0x7C1F, 0x7FE0, 0x0000
pal_obj:
	.dw 0x0000, 0x7FFF, 0x001F, 0x03E0
	.dw 0x0000, 0x7C00, 0x03FF, 0x7C1F
	.dw 0x0000, 0x4210, 0x2108, 0x7FFF
	.dw 0x0000, 0x001F, 0x001F, 0x001F
	.dw 0x0000, 0x03E0, 0x7C00, 0x7FFF
	.dw 0x0000, 0x1CE7, 0x39CE, 0x56B5
	.dw 0x0000, 0x7FE0, 0x03FF, 0x7C1F
	.dw 0x0000, 0x5555, 0x2AAA, 0x7FFF
