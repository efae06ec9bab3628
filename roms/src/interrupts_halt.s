; interrupts_halt: IE/IF, dispatch priority, EI delay, EI;DI, RET vs RETI,
; HALT with IME=1, HALT with IME=0 (interrupt arriving later / already
; pending), VBlank, STAT (LYC) and timer interrupts.
; Pan Docs "Interrupts", "Interrupt Sources", "halt".
; Every handler appends its number (0=VBlank 1=STAT 2=Timer 3=Serial
; 4=Joypad) to LOG (0xC100..), the IF value it saw to LOGIF (0xC110..), and
; records A / LY at entry.  RET_MODE=1 makes handlers return with RET.
; Note: PyBoy does not emulate the DMG "HALT bug" (test 16 checks PyBoy's
; behaviour: the byte after HALT executes once).
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"

LOG      = 0xC100
LOGIF    = 0xC110
LOGN     = VARS+0
ENTRY_A  = VARS+1
ENTRY_LY = VARS+2
RET_MODE = VARS+3

isr_vblank:
	ld (ENTRY_A),a
	push af
	ld a,#0
	jr isr_common
isr_stat:
	ld (ENTRY_A),a
	push af
	ld a,#1
	jr isr_common
isr_timer:
	ld (ENTRY_A),a
	push af
	ld a,#2
	jr isr_common
isr_serial:
	ld (ENTRY_A),a
	push af
	ld a,#3
	jr isr_common
isr_joypad:
	ld (ENTRY_A),a
	push af
	ld a,#4
isr_common:
	push hl
	push bc
	ld b,a
	ld a,(LOGN)
	ld l,a
	inc a
	ld (LOGN),a
	ld h,#>LOG
	ld (hl),b               ; LOG[n] = source
	ld a,l
	add a,#(LOGIF-LOG)
	ld l,a
	ldh a,(rIF)
	ld (hl),a               ; LOGIF[n] = IF at entry
	ldh a,(rLY)
	ld (ENTRY_LY),a
	ld a,(RET_MODE)
	or a
	pop bc
	pop hl
	jr nz,1$
	pop af
	reti
1$:	pop af
	ret

; reset_log: LOGN = 0, IF = 0
reset_log:
	xor a
	ld (LOGN),a
	ldh (rIF),a
	ret

; start_timer_256: timer overflows ~256 T from now (TAC=05, TIMA=F0)
start_timer_256:
	xor a
	ldh (rTAC),a
	ld a,#0xF0
	ldh (rTIMA),a
	ld a,#0x05
	ldh (rTAC),a
	ret

main:
	ld hl,#str_title
	call puts
	call lcd_off
	; --- IF/IE registers ---
	xor a
	ldh (rIF),a
	ldh a,(rIF)
	show str_if
	expect 0xE0, 1          ; IF bits 5-7 read as 1
	ld a,#0x1F
	ldh (rIF),a
	ldh a,(rIF)
	expect 0xFF, 2
	ld a,#0xFF
	ldh (rIE),a
	ldh a,(rIE)
	expect 0xFF, 3          ; IE is a plain 8-bit register
	xor a
	ldh (rIE),a

	; --- IME=1 but IE=0: nothing is dispatched ---
	call reset_log
	ld a,#0x04
	ldh (rIF),a
	ei
	nop
	nop
	nop
	di
	ld a,(LOGN)
	expect 0, 4
	ldh a,(rIF)
	expect 0xE4, 5

	; --- priority: all five pending -> 0,1,2,3,4, each clears its own IF bit ---
	call reset_log
	ld a,#0x1F
	ldh (rIF),a
	ldh (rIE),a
	ei
	nop
	nop
	di
	ld a,(LOGN)
	expect 5, 6
	ld hl,#LOG
	ld c,#0
2$:	ld a,(hl+)
	ld b,#7
	cp c
	call nz,fail
	inc c
	ld a,c
	cp #5
	jr nz,2$
	ld a,(LOGIF)
	expect 0xFE, 8          ; VBlank handler saw its own bit cleared
	ld a,(LOGIF+4)
	expect 0xE0, 9

	; --- EI delay: the interrupt is taken after the instruction after EI ---
	call reset_log
	ld a,#0x04
	ldh (rIF),a
	ldh (rIE),a
	xor a
	ei
	inc a
	inc a
	inc a
	di
	expect 3, 10
	ld a,(ENTRY_A)
	show str_eidelay
	expect 1, 11
	ld a,(LOGN)
	expect 1, 12

	; --- EI immediately followed by DI: no interrupt ---
	call reset_log
	ld a,#0x04
	ldh (rIF),a
	ei
	di
	nop
	nop
	ld a,(LOGN)
	expect 0, 13
	ldh a,(rIF)
	expect 0xE4, 14

	; --- RET from a handler leaves IME=0; RETI sets it ---
	call reset_log
	ld a,#1
	ld (RET_MODE),a
	ld a,#0x05
	ldh (rIF),a
	ldh (rIE),a
	ei
	nop
	nop
	nop
	ld a,(LOGN)             ; VBlank serviced, returned with RET: timer still pending
	expect 1, 15
	ldh a,(rIF)
	expect 0xE4, 17
	xor a
	ld (RET_MODE),a
	ei
	nop
	nop
	di
	ld a,(LOGN)
	expect 2, 18
	ld a,(LOG+1)
	expect 2, 19

	; --- HALT with IME=1: woken and serviced, then continues after HALT ---
	call reset_log
	ld a,#0x04
	ldh (rIE),a
	call start_timer_256
	xor a
	ei
	halt
	inc a
	di
	expect 1, 20
	ld a,(LOGN)
	expect 1, 21

	; --- HALT with IME=0, interrupt arrives later: wakes, not serviced ---
	call reset_log
	call start_timer_256
	xor a
	halt
	inc a
	expect 1, 22
	ld a,(LOGN)
	expect 0, 23
	ldh a,(rIF)
	and #0x04
	expect 0x04, 24

	; --- HALT with IME=0, interrupt already pending ---
	; Pan Docs: the DMG "HALT bug" would run the next byte twice (A=2);
	; PyBoy does not emulate it: HALT ends at once and `inc a` runs once.
	xor a
	ldh (rTAC),a
	ld a,#0x04
	ldh (rIF),a
	xor a
	halt
	inc a
	show str_haltbug
	expect 1, 16
	ld a,(LOGN)
	expect 0, 25

	; --- VBlank interrupt: handler entered at LY=144 ---
	call reset_log
	ld a,#0x91
	ldh (rLCDC),a
	xor a
	ldh (rIF),a
	ld a,#0x01
	ldh (rIE),a
	ei
	halt
	nop
	di
	ld a,(LOG)
	expect 0, 26
	ld a,(ENTRY_LY)
	show str_vbl
	expect 144, 27

	; --- STAT interrupt on LY=LYC ---
	call reset_log
	ld a,#0x50
	ldh (rLYC),a
	ld a,#0x40
	ldh (rSTAT),a
	xor a
	ldh (rIF),a
	ld a,#0x02
	ldh (rIE),a
	ei
	halt
	nop
	di
	ld a,(LOG)
	expect 1, 28
	ld a,(ENTRY_LY)
	show str_lyc
	expect 0x50, 29
	xor a
	ldh (rSTAT),a
	ldh (rIE),a
	ret

str_title:   .asciz "interrupts_halt\n"
str_if:      .asciz "IF after IF=0"
str_eidelay: .asciz "A at entry after EI;INC A"
str_haltbug: .asciz "HALT IME=0 pending: inc count"
str_vbl:     .asciz "LY in VBlank handler"
str_lyc:     .asciz "LY in STAT handler (LYC=50)"
