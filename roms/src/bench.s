; bench: CPU-bound workload for speed benchmarks (never finishes).
; LCD on with a tiled, scrolling background and 40 sprites (OAM DMA every
; VBlank), VBlank interrupt enabled; the main loop runs mixed ALU / 16-bit /
; CB / call-return / stack / memory-copy work without HALT.
; Heartbeat: every 60 frames a serial line "beat FFFF WWWWWW CCCC"
; (frames, work units done, running checksum; all hex).  WRAM: 0xC000='R'
; (always running), 0xC002/3 frames, 0xC008.. work counter (3 bytes, LE),
; 0xC00B/C checksum.
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

WORK   = 0xC008          ; 3 bytes
CSUM   = 0xC00B          ; 2 bytes
BEAT   = 0xC00D          ; frames until the next heartbeat
TICK   = 0xC00E          ; set by the VBlank handler
BUF_A  = 0xC200          ; 256-byte work buffers
BUF_B  = 0xC300
SHADOW_OAM = 0xC400
HRAM_DMA = 0xFF80

isr_vblank:
	push af
	push hl
	ld a,#>SHADOW_OAM
	call HRAM_DMA
	ldh a,(rSCX)
	inc a
	ldh (rSCX),a
	ld hl,#FRAMES
	inc (hl)
	jr nz,1$
	inc hl
	inc (hl)
1$:	ld a,#1
	ld (TICK),a
	pop hl
	pop af
	reti

dma_routine:
	ldh (rDMA),a
	ld a,#40
1$:	dec a
	jr nz,1$
	ret
dma_routine_end:

main:
	ld hl,#str_title
	call puts
	call lcd_off
	; tiles 0-255 at 0x8000: row bytes from a simple function of tile/row
	ld hl,#0x8000
	ld bc,#0x1000
	ld d,#0
1$:	ld a,l
	xor h
	rrca
	add a,d
	ld (hl+),a
	inc d
	dec bc
	ld a,b
	or c
	jr nz,1$
	; map at 0x9800: index = (x + y*3) & 0xFF
	ld hl,#0x9800
	ld bc,#0x0400
	ld e,#0
2$:	ld a,l
	add a,e
	ld (hl+),a
	ld a,l
	and #0x1F
	jr nz,3$
	inc e
	inc e
	inc e
3$:	dec bc
	ld a,b
	or c
	jr nz,2$
	; 40 sprites in shadow OAM: y, x, tile, attr
	ld hl,#SHADOW_OAM
	ld c,#0
4$:	ld a,c
	add a,a
	add a,a
	and #0x7F
	add a,#16
	ld (hl+),a              ; y
	ld a,c
	swap a
	add a,c
	add a,#8
	ld (hl+),a              ; x
	ld a,c
	ld (hl+),a              ; tile
	ld a,c
	and #0x30               ; flips / palette
	ld (hl+),a
	inc c
	ld a,c
	cp #40
	jr nz,4$
	; DMA routine to HRAM
	ld hl,#dma_routine
	ld de,#HRAM_DMA
	ld c,#(dma_routine_end-dma_routine)
5$:	ld a,(hl+)
	ld (de),a
	inc de
	dec c
	jr nz,5$
	; work buffer
	ld hl,#BUF_A
	ld c,#0
6$:	ld a,c
	rlca
	xor #0x5A
	ld (hl+),a
	inc c
	jr nz,6$
	ld a,#0xE4
	ldh (rBGP),a
	ldh (0x48),a            ; OBP0
	ld a,#60
	ld (BEAT),a
	ld a,#0x93              ; LCD on, BG on, sprites on, tiles at 8000
	ldh (rLCDC),a
	xor a
	ldh (rIF),a
	ld a,#0x01
	ldh (rIE),a
	ei

work_loop:
	call work_unit
	; count work units (24 bit)
	ld hl,#WORK
	inc (hl)
	jr nz,1$
	inc hl
	inc (hl)
	jr nz,1$
	inc hl
	inc (hl)
1$:	ld a,(TICK)
	or a
	jr z,work_loop
	xor a
	ld (TICK),a
	ld hl,#BEAT
	dec (hl)
	jr nz,work_loop
	ld (hl),#60
	call heartbeat
	jr work_loop

heartbeat:
	ld hl,#str_beat
	call puts
	ld a,(FRAMES+1)
	call puthex8
	ld a,(FRAMES)
	call puthex8
	ld a,#0x20
	call putc
	ld a,(WORK+2)
	call puthex8
	ld a,(WORK+1)
	call puthex8
	ld a,(WORK)
	call puthex8
	ld a,#0x20
	call putc
	ld a,(CSUM+1)
	call puthex8
	ld a,(CSUM)
	call puthex8
	jp newline

; one unit of mixed work
work_unit:
	; copy BUF_A -> BUF_B with a transform (memory traffic)
	ld hl,#BUF_A
	ld de,#BUF_B
	ld c,#64
1$:	ld a,(hl+)
	swap a
	ld (de),a
	inc de
	dec c
	jr nz,1$
	; checksum over BUF_B: ADD/ADC/XOR/rotates, 16-bit add
	ld hl,#BUF_B
	ld a,(CSUM)
	ld e,a
	ld a,(CSUM+1)
	ld d,a
	ld c,#64
2$:	ld a,(hl+)
	add a,e
	ld e,a
	ld a,d
	adc a,#0
	rlca
	xor e
	ld d,a
	dec c
	jr nz,2$
	; 16-bit arithmetic and stack traffic
	push de
	ld h,d
	ld l,e
	add hl,hl
	add hl,de
	ld b,h
	ld c,l
	pop de
	push bc
	call mix
	pop bc
	ld a,e
	xor c
	ld (CSUM),a
	ld a,d
	xor b
	sbc a,c
	ld (CSUM+1),a
	; feed back into BUF_A (keeps the data changing)
	ld hl,#BUF_A
	ld a,(CSUM)
	add a,(hl)
	ld (hl),a
	ret

mix:
	ld a,d
	srl a
	rr e
	bit 3,a
	jr z,1$
	set 7,e
1$:	res 0,a
	cpl
	and #0x7F
	or e
	sra a
	ld d,a
	inc de
	dec e
	ret

str_title: .asciz "bench\n"
str_beat:  .asciz "beat "
