; idle_menu: menu-style busy-waits, as games wait for a button in menus and text boxes
; (Pokemon Red's HandleMenuInput_): each iteration calls a routine through a bank-switching
; trampoline (the current bank saved in HRAM and on the stack, bank 2 mapped, its tag read,
; the old bank mapped back), reads the buttons the VBlank handler stored, computes the newly
; pressed ones, and rewrites variables with the values they hold. The LCD is on with a
; sprite copied by OAM DMA in the VBlank handler; VBlank and timer interrupts (TAC 04). For
; the busy-loop fast-forward (crates/emurust-core/src/gameboy/busy_loop.rs). Three waits in
; turn, each until a new press or a number of frames:
;   0. a fixed point (push/call/pop, a variable rewritten): skipped whole iterations at a time;
;   1. a blink counter decremented every iteration (a text box's arrow): never a fixed point;
;   2. the handler's frame counter copied into a variable: a fixed point only from the second
;      iteration after each VBlank;
;   3. a text box's arrow: a called routine counts its blink timer down in HRAM (load, DEC A,
;      store, RET NZ; reloaded and the arrow toggled when it runs out), and the poll's
;      bank-switching call pushes those flags with the bank: a counter loop, skipped up to the
;      timer's run-out.
; In rounds 4-7 of every eight the LY=LYC STAT interrupt is on too (LYC 64, its handler counts):
; then nothing may be skipped past the LCD's next step. After each wait the ROM logs the new
; buttons, LY, DIV, the timer and STAT counts (idle.inc), moves the sprite, and every eighth
; round switches the LCD off and on with a new palette.
USE_RST = 0
CART_TYPE = 0x01            ; MBC1
ROM_SIZE_CODE = 0x01        ; 64 KiB, 4 banks (tags at 0x7FF0, roms/gen_banks.py)
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x93
ROUNDS = 60
	.include "common.inc"
	.include "idle.inc"

CUR_BANK = 0xFF98           ; the bank mapped at 4000-7FFF
JOY_HELD = 0xFF99           ; buttons held (VBlank handler: d-pad high nibble, buttons low)
JOY_LAST = 0xFF9A           ; buttons held at the last poll
JOY_NEW  = 0xFF9B           ; newly pressed at the last poll
FRAMEC   = 0xFF9C           ; VBlank count
SCOUNT   = 0xFF9D           ; STAT (LY=LYC) interrupts handled
ARROW_T  = 0xFF9E           ; wait 3's blink timer
DMA_HRAM = 0xFFA0           ; the OAM DMA routine, copied here
W_TAG    = 0xC020           ; bank 2's tag, rewritten by every poll
W_CURSOR = 0xC021
W_SEEN   = 0xC022           ; FRAMEC as wait 2 saw it
W_BLINK  = 0xC023           ; wait 1's counter
W_ARROW  = 0xC024           ; wait 3's arrow (0 or 1)
SHADOW_OAM = 0xC200         ; copied to OAM by DMA every VBlank

isr_serial = isr_none
isr_joypad = isr_none
isr_stat = menu_isr_stat

isr_vblank = menu_isr_vblank
isr_timer = idle_isr_timer

main:
	ld hl,#str_title
	call puts
	call lcd_off
	ld hl,#0x8010           ; tile 1: solid
	ld b,#16
	ld a,#0xFF
1$:	ld (hl+),a
	dec b
	jr nz,1$
	ld hl,#dma_code
	ld de,#DMA_HRAM
	ld b,#(dma_code_end - dma_code)
2$:	ld a,(hl+)
	ld (de),a
	inc de
	dec b
	jr nz,2$
	ld a,#1
	ldh (CUR_BANK&0xFF),a
	ld (0x2000),a
	ld (SHADOW_OAM+2),a     ; sprite 0: tile 1
	ld a,#0x93              ; LCD, BG and sprites on
	ldh (rLCDC),a
	xor a
	ldh (rTMA),a
	ldh (rIF),a
	ld a,#0x04              ; 4096 Hz: an overflow every 256 ticks (~3.7 frames)
	ldh (rTAC),a
	ld a,#64
	ldh (rLYC),a
	ld a,#0x40              ; STAT source: LY=LYC
	ldh (rSTAT),a
	ld a,#0x05              ; VBlank and timer
	ldh (rIE),a
	ei
loop:
	ldh a,(ROUND&0xFF)      ; rounds 4-7 of eight: the STAT interrupt on too
	and #4
	ld a,#0x05
	jr z,6$
	ld a,#0x07
6$:	ldh (rIE),a
	ldh a,(FRAMEC&0xFF)
	ld c,a                  ; the frame the wait starts in
	ldh a,(ROUND&0xFF)
3$:	cp #4
	jr c,4$
	sub #4
	jr 3$
4$:	call run_wait
	ldh a,(JOY_NEW&0xFF)
	call log_a
	ld a,(W_CURSOR)
	inc a
	and #0x3F
	ld (W_CURSOR),a
	add a,#16
	ld (SHADOW_OAM),a       ; Y
	ld (SHADOW_OAM+1),a     ; X
	ldh a,(rLY)
	call log_a
	ldh a,(rDIV)
	call log_a
	ldh a,(TCOUNT&0xFF)
	call log_a
	ldh a,(SCOUNT&0xFF)
	call log_a
	ldh a,(ROUND&0xFF)
	and #7
	cp #7
	jr nz,5$
	call lcd_off            ; a scene change
	ldh a,(rBGP)
	cpl
	ldh (rBGP),a
	ld a,#0x93
	ldh (rLCDC),a
5$:	call end_round
	jp loop

; run_wait: wait number A (C = the frame it starts in).
run_wait:
	ld hl,#waits
	jp jump_table
waits:
	.dw wait_fixed, wait_blink, wait_seen, wait_arrow

; wait_fixed: until a new press or 8 frames.
wait_fixed:
	ld hl,#W_CURSOR
1$:	push hl
	call poll
	pop hl
	ldh a,(JOY_NEW&0xFF)
	and a
	ret nz
	ld a,(hl)               ; rewrite the cursor with its value
	ld (hl),a
	ldh a,(FRAMEC&0xFF)
	sub c
	cp #8
	jr c,1$
	ret

; wait_blink: until a new press or 6 frames, counting down a blink counter every iteration.
wait_blink:
	ld hl,#W_BLINK
1$:	call poll
	ldh a,(JOY_NEW&0xFF)
	and a
	ret nz
	dec (hl)
	jr nz,1$
	ld (hl),#40
	ldh a,(FRAMEC&0xFF)
	sub c
	cp #6
	jr c,1$
	ret

; wait_seen: until a new press or 5 frames, copying the frame counter every iteration.
wait_seen:
1$:	call poll
	ldh a,(FRAMEC&0xFF)
	ld (W_SEEN),a
	sub c
	cp #5
	ret nc
	ldh a,(JOY_NEW&0xFF)
	and a
	jr z,1$
	ret

; wait_arrow: until a new press or 6 frames, blinking a text box's arrow.
wait_arrow:
1$:	call arrow_blink
	call poll               ; (pushes the flags arrow_blink left)
	ldh a,(JOY_NEW&0xFF)
	and a
	ret nz
	ldh a,(FRAMEC&0xFF)
	sub c
	cp #6
	jr c,1$
	ret

; arrow_blink: count the blink timer down; when it runs out, reload it and toggle the arrow.
arrow_blink:
	ldh a,(ARROW_T&0xFF)
	dec a
	ldh (ARROW_T&0xFF),a
	ret nz
	ld a,#90
	ldh (ARROW_T&0xFF),a
	ld a,(W_ARROW)
	xor #1
	ld (W_ARROW),a
	ret

; poll: read_input with bank 2 mapped, the caller's bank mapped back (a "homecall").
; Clobbers A, B, F.
poll:
	ldh a,(CUR_BANK&0xFF)
	push af
	ld a,#2
	ldh (CUR_BANK&0xFF),a
	ld (0x2000),a
	call read_input
	pop af
	ldh (CUR_BANK&0xFF),a
	ld (0x2000),a
	ret

; read_input: bank 2's tag into W_TAG; JOY_NEW = held and not held at the last poll.
read_input:
	ld a,(0x7FF0)
	ld (W_TAG),a
	ldh a,(JOY_HELD&0xFF)
	ld b,a
	ldh a,(JOY_LAST&0xFF)
	cpl
	and b
	ldh (JOY_NEW&0xFF),a
	ld a,b
	ldh (JOY_LAST&0xFF),a
	ret

; The VBlank handler: OAM DMA, frame count, the buttons into JOY_HELD.
menu_isr_vblank:
	push af
	push bc
	call DMA_HRAM
	ldh a,(FRAMEC&0xFF)
	inc a
	ldh (FRAMEC&0xFF),a
	ld a,#0x20              ; d-pad
	ldh (rP1),a
	ldh a,(rP1)
	ldh a,(rP1)
	cpl
	and #0x0F
	swap a
	ld b,a
	ld a,#0x10              ; buttons
	ldh (rP1),a
	ldh a,(rP1)
	ldh a,(rP1)
	cpl
	and #0x0F
	or b
	ldh (JOY_HELD&0xFF),a
	ld a,#0x30
	ldh (rP1),a
	pop bc
	pop af
	reti

; The STAT handler: counts LY=LYC interrupts.
menu_isr_stat:
	push af
	ldh a,(SCOUNT&0xFF)
	inc a
	ldh (SCOUNT&0xFF),a
	pop af
	reti

; Copied to DMA_HRAM: start the OAM DMA from SHADOW_OAM and wait the 160 cycles it takes.
dma_code:
	ld a,#>SHADOW_OAM
	ldh (rDMA),a
	ld a,#40
1$:	dec a
	jr nz,1$
	ret
dma_code_end:

str_title: .asciz "idle_menu\n"
