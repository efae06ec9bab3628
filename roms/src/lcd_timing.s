; lcd_timing: LY progression and line length, LYC coincidence flag,
; STAT interrupts (HBlank/mode 0, VBlank/mode 1, OAM/mode 2, LYC), the mode
; sequence within a line, LCD off/on.  Pan Docs "LCD Status Registers",
; "STAT Modes", "LCDC.7": 154 lines of 456 T, modes 2 (80 T) -> 3 -> 0 on
; lines 0-143, mode 1 on 144-153; LY=0 and mode 0 while the LCD is off.
; STAT interrupt counts are taken over one frame measured from LY=145 to the
; next LY=145 (a point where no mode 0/2/LYC events happen).
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

SCOUNT  = VARS+0       ; STAT interrupts (16-bit)
VCOUNT  = VARS+2       ; VBlank interrupts
FIRST_STAT = VARS+3    ; STAT register at the first STAT interrupt
FIRST_LY   = VARS+4    ; LY at the first STAT interrupt
MODES   = VARS+8       ; mode sequence buffer (4 bytes)

isr_stat:
	push af
	push hl
	ld hl,#SCOUNT
	ld a,(hl)
	or a
	jr nz,1$
	inc hl
	ld a,(hl)
	dec hl
	or a
	jr nz,1$
	ldh a,(rSTAT)           ; first one: record STAT and LY
	ld (FIRST_STAT),a
	ldh a,(rLY)
	ld (FIRST_LY),a
1$:	inc (hl)
	jr nz,2$
	inc hl
	inc (hl)
2$:	pop hl
	pop af
	reti

isr_vblank:
	push af
	ld a,(VCOUNT)
	inc a
	ld (VCOUNT),a
	pop af
	reti

; wait_ly: wait until LY == B
wait_ly:
	ldh a,(rLY)
	cp b
	jr nz,wait_ly
	ret

; count_frame: STAT = A (source enables), IE = C.  Counts interrupts from
; LY=145 to the next LY=145.  Returns HL = STAT count.
count_frame:
	push af
	ld b,#145
	call wait_ly
	di
	pop af
	ldh (rSTAT),a
	xor a
	ld (SCOUNT),a
	ld (SCOUNT+1),a
	ld (VCOUNT),a
	ld (FIRST_STAT),a
	ld (FIRST_LY),a
	ldh (rIF),a
	ld a,c
	ldh (rIE),a
	ei
	ld b,#0
	call wait_ly
	ld b,#145
	call wait_ly
	di
	xor a
	ldh (rSTAT),a
	ldh (rIE),a
	ld hl,#SCOUNT
	ld a,(hl+)
	ld h,(hl)
	ld l,a
	ret

main:
	ld hl,#str_title
	call puts
	ld a,#0x91
	ldh (rLCDC),a

	; --- highest LY seen over more than a frame ---
	ld c,#0
	ld de,#0x0C00           ; ~3072 polls * 40 T > 1 frame
1$:	ldh a,(rLY)
	cp c
	jr c,2$
	ld c,a
2$:	dec de
	ld a,d
	or e
	jr nz,1$
	ld a,c
	show str_maxly
	expect 153, 1

	; --- 90 lines take 90 * 456 = 41040 T = 160.3 DIV ticks ---
	ld b,#9
	call wait_ly
	ld b,#10
	call wait_ly
	xor a
	ldh (rDIV),a
	ld b,#100
	call wait_ly
	ldh a,(rDIV)
	show str_div90
	expect_range 159, 161, 2

	; --- LYC coincidence flag (STAT bit 2) ---
	ld a,#0x30
	ldh (rLYC),a
	ld b,#0x30
	call wait_ly
	ldh a,(rSTAT)
	and #0x04
	expect 0x04, 3
	ld b,#0x31
	call wait_ly
	ldh a,(rSTAT)
	and #0x04
	expect 0x00, 4
	; STAT bit 7 reads 1, bits 0-1 = mode 1 during VBlank
	ld b,#150
	call wait_ly
	ldh a,(rSTAT)
	and #0x83
	expect 0x81, 5

	; --- from line 49's HBlank: mode 2, 3, 0 (line 50), then 2 (line 51) ---
	ld b,#49
	call wait_ly
6$:	ldh a,(rSTAT)           ; wait for line 49's HBlank
	and #0x03
	jr nz,6$
	ld hl,#MODES
	ld c,#0                 ; last mode seen
	ld d,#4                 ; transitions to record
3$:	ldh a,(rSTAT)
	and #0x03
	cp c
	jr z,3$
	ld c,a
	ld (hl+),a
	dec d
	jr nz,3$
	ld a,(MODES)
	expect 2, 6
	ld a,(MODES+1)
	expect 3, 7
	ld a,(MODES+2)
	expect 0, 8
	ld a,(MODES+3)
	expect 2, 9

	; --- STAT interrupt sources, counted over one frame ---
	ld a,#0x08              ; mode 0 (HBlank)
	ld c,#0x02
	call count_frame
	ld a,h
	or a
	ld b,#10
	call nz,fail            ; more than 255
	ld a,l
	show str_hbl
	expect 144, 10
	ld a,(FIRST_STAT)
	and #0x03
	expect 0, 11

	ld a,#0x20              ; mode 2 (OAM)
	ld c,#0x02
	call count_frame
	ld a,l
	show str_oam
	expect 145, 12          ; lines 0-143 + the OAM-interrupt quirk at line 144 (PyBoy)
	ld a,(FIRST_LY)         ; (mode 2 is over by the time a handler can read STAT)
	expect 0, 13

	ld a,#0x10              ; mode 1 (VBlank)
	ld c,#0x02
	call count_frame
	ld a,l
	show str_vbl
	expect 1, 14
	ld a,(FIRST_LY)
	expect 144, 15

	ld a,#0x77
	ldh (rLYC),a
	ld a,#0x40              ; LYC
	ld c,#0x03              ; + VBlank interrupt
	call count_frame
	ld a,l
	show str_lyc
	expect 1, 16
	ld a,(FIRST_LY)
	expect 0x77, 17
	ld a,(FIRST_STAT)
	and #0x04
	expect 0x04, 18
	ld a,(VCOUNT)
	expect 1, 19

	; --- LCD off: LY = 0, mode 0; on again: LY starts from 0 ---
	call lcd_off
	ldh a,(rLY)
	expect 0, 20
	ldh a,(rSTAT)
	and #0x03
	expect 0, 21
	ld c,#0                 ; stays 0 while off
4$:	dec c
	jr nz,4$
	ldh a,(rLY)
	expect 0, 22
	ld a,#0x91
	ldh (rLCDC),a
	ld c,#0
5$:	inc c                   ; 1 + 3 + 1 + 3 = 8 M = 32 T per round
	ldh a,(rLY)
	or a
	jr z,5$
	expect 1, 24            ; LY went 0 -> 1 (A = LY from the loop)
	ld a,c
	show str_first
	expect_range 12, 16, 23 ; ~456 T
	ret

str_title: .asciz "lcd_timing\n"
str_maxly: .asciz "max LY"
str_div90: .asciz "DIV ticks for 90 lines"
str_hbl:   .asciz "mode0 STAT IRQs/frame"
str_oam:   .asciz "mode2 STAT IRQs/frame"
str_vbl:   .asciz "mode1 STAT IRQs/frame"
str_lyc:   .asciz "LYC STAT IRQs/frame"
str_first: .asciz "32T rounds until LY=1 after LCD on"
