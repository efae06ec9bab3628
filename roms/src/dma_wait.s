; dma_wait: the wait loop of an OAM DMA routine in HRAM (`L: DEC r / JR NZ,L`, the
; pattern games copy there; Pan Docs "OAM DMA Transfer"), with the LCD on, in every
; combination of:
;   - the loop register: A, B, E, L, the byte at (HL), and A with EI just before the loop
;     (six routines, copied to HRAM in turn);
;   - the loop count: 40 (the usual 160 M-cycles), 3 (returns while the DMA runs) and 100
;     (the DMA ends inside the loop);
;   - the DMA source: work RAM (0xCA), ROM (0x3A), echo RAM (0xEA -> CA00), VRAM (0x80,
;     whose reads depend on the LCD mode) and 0xFE (work RAM 0xDE on the DMG);
;   - interrupts: none; timer overflowing every 64 T with IME off (the emulator's time
;     slices end inside the loop); timer every 256 T and HBlank STAT, with IME on (the
;     handlers run from ROM while the DMA runs, between loop iterations).
; Each round logs LY and DIV right after the routine returns, the sum of OAM once the DMA is
; over, and the handler count plus A at the last interrupt, 4 bytes from LOG. The log is an emulator fingerprint that the
; test suite compares with PyBoy's at every frame; the ROM checks the OAM copy from work RAM
; and ROM (with the LCD off), and that every round was logged.
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
isr_timer = isr_count
isr_stat = isr_count

HRAM_DMA = 0xFF80
COUNT    = 0xFFF0          ; interrupts handled (HRAM: the handlers run during the DMA)
LOGP_LO  = 0xFFF2          ; next log entry
LOGP_HI  = 0xFFF3
LOG      = 0xC100          ; 4 bytes per round
SRC_WRAM = 0xCA00
HL_COUNT = 0xFFE0          ; the loop counter of dma_hl
IME_ON   = 0xFFE1          ; nonzero in the interrupt modes with IME on
INT_A    = 0xFFE2          ; A at the last interrupt
SRC_HIGH = 0xDE00          ; what source page 0xFE reads on the DMG
SRC_VRAM = 0x8000
ROUNDS   = 360             ; 6 routines x 4 interrupt modes x 5 sources x 3 counts
LOG_END  = 0xC6A0          ; LOG + 4 * ROUNDS
; OAM sums of the two checked copies: (3 + 5i) and (i ^ 0x5A), i = 0..159, mod 256
WRAM_SUM = 0x50
ROM_SUM  = 0xB0

isr_count:
	ldh (INT_A&0xFF),a      ; A when the interrupt was taken (dma_a's and dma_ei's counter)
	push af
	ldh a,(COUNT&0xFF)
	inc a
	ldh (COUNT&0xFF),a
	ldh a,(IME_ON&0xFF)
	or a
	jr z,1$
	pop af
	reti
1$:	pop af                  ; let through by dma_ei's EI in a mode with IME off:
	ret                     ; IME stays off (no interrupt storm from the 64 T timer)

; The six routines: A = source page, C = loop count. Copied to HRAM as DMA_LEN bytes.
dma_a:
	ldh (rDMA),a
	ld a,c
1$:	dec a
	jr nz,1$
	ret
dma_b:
	ldh (rDMA),a
	ld b,c
1$:	dec b
	jr nz,1$
	ret
dma_e:
	ldh (rDMA),a
	ld e,c
1$:	dec e
	jr nz,1$
	ret
dma_l:
	ldh (rDMA),a
	ld l,c
1$:	dec l
	jr nz,1$
	ret
dma_hl:
	ldh (rDMA),a
	ld hl,#HL_COUNT
	ld (hl),c
1$:	dec (hl)
	jr nz,1$
	ret
dma_ei:                    ; `round` sets IME back to the mode's
	ldh (rDMA),a
	ld a,c
	ei
1$:	dec a
	jr nz,1$
	di
	ret
DMA_LEN = 16

; copy_routine: HL = routine (DMA_LEN bytes) -> HRAM_DMA
copy_routine:
	ld de,#HRAM_DMA
	ld c,#DMA_LEN
1$:	ld a,(hl+)
	ld (de),a
	inc de
	dec c
	jr nz,1$
	ret

; fill: HL = destination, C = length, A = first value, B = step
fill:
	ld (hl+),a
	add a,b
	dec c
	jr nz,fill
	ret

; oam_sum: A = sum of the 160 OAM bytes (read once the DMA is over)
oam_sum:
	ld hl,#0xFE00
	ld c,#160
	xor a
1$:	add a,(hl)
	inc hl
	dec c
	jr nz,1$
	ret

; log_byte: A -> (LOGP), LOGP += 1 (keeps HL)
log_byte:
	push hl
	push af
	ldh a,(LOGP_LO&0xFF)
	ld l,a
	ldh a,(LOGP_HI&0xFF)
	ld h,a
	pop af
	ld (hl+),a
	ld a,l
	ldh (LOGP_LO&0xFF),a
	ld a,h
	ldh (LOGP_HI&0xFF),a
	pop hl
	ret

; round: D = source page, C = loop count. Runs the routine in HRAM, logs 4 bytes.
round:
	push bc
	push de
	ld a,d
	call HRAM_DMA
	ldh a,(IME_ON&0xFF)
	or a
	jr z,2$
	ei
2$:	ldh a,(rLY)
	ld b,a
	ldh a,(rDIV)
	ld c,a
	; wait out the rest of the DMA (at most 160 M-cycles) before reading OAM
	ld e,#60
1$:	dec e
	jr nz,1$
	ld a,b
	call log_byte
	ld a,c
	call log_byte
	call oam_sum
	call log_byte
	ldh a,(INT_A&0xFF)
	ld b,a
	ldh a,(COUNT&0xFF)
	add a,b
	call log_byte
	pop de
	pop bc
	ret

; sources: D = each source page in turn, C kept; runs `round` for counts 40, 3, 100
counts:
	ld c,#40
	call round
	ld c,#3
	call round
	ld c,#100
	jp round

sources:
	ld d,#>SRC_WRAM
	call counts
	ld d,#>rom_table
	call counts
	ld d,#0xEA
	call counts
	ld d,#>SRC_VRAM
	call counts
	ld d,#0xFE
	jp counts

; modes: the four interrupt settings, each with every source
modes:
	; 1. none
	di
	xor a
	ldh (IME_ON&0xFF),a
	ldh (rIE),a
	ldh (rTAC),a
	ldh (rSTAT),a
	call sources
	; 2. timer every 64 T, IME off: time slices end inside the loop
	di
	ld a,#0xFC
	ldh (rTMA),a
	ldh (rTIMA),a
	ld a,#0x05
	ldh (rTAC),a
	ld a,#0x04
	ldh (rIE),a
	call sources
	; 3. timer every 256 T, IME on
	ld a,#0xF0
	ldh (rTMA),a
	ldh (rTIMA),a
	ldh (rIF),a
	inc a
	ldh (IME_ON&0xFF),a
	ei
	call sources
	; 4. HBlank STAT interrupt, IME on, timer off
	di
	xor a
	ldh (rTAC),a
	ld a,#0x08
	ldh (rSTAT),a
	ld a,#0x02
	ldh (rIE),a
	xor a
	ldh (rIF),a
	ei
	call sources
	di
	xor a
	ldh (IME_ON&0xFF),a
	ldh (rIE),a
	ldh (rSTAT),a
	ldh (rIF),a
	ret

main:
	ld hl,#str_title
	call puts
	call lcd_off
	; source patterns: WRAM 3+5i, 0xDE page 11+13i, VRAM 5+3i
	ld hl,#SRC_WRAM
	ld c,#160
	ld a,#3
	ld b,#5
	call fill
	ld hl,#SRC_HIGH
	ld c,#160
	ld a,#11
	ld b,#13
	call fill
	ld hl,#SRC_VRAM
	ld c,#160
	ld a,#5
	ld b,#3
	call fill
	xor a
	ldh (COUNT&0xFF),a
	ld a,#<LOG
	ldh (LOGP_LO&0xFF),a
	ld a,#>LOG
	ldh (LOGP_HI&0xFF),a
	ld a,#0x91
	ldh (rLCDC),a

	ld hl,#dma_a
	call copy_routine
	call modes
	ld hl,#dma_b
	call copy_routine
	call modes
	ld hl,#dma_e
	call copy_routine
	call modes
	ld hl,#dma_l
	call copy_routine
	call modes
	ld hl,#dma_hl
	call copy_routine
	call modes
	ld hl,#dma_ei
	call copy_routine
	call modes

	; every round logged
	ldh a,(LOGP_HI&0xFF)
	expect >LOG_END, 1
	ldh a,(LOGP_LO&0xFF)
	expect <LOG_END, 2
	; the copies from work RAM and ROM, read with the LCD off (the rounds' OAM reads are
	; blocked while the LCD uses OAM)
	call lcd_off
	ld hl,#dma_a
	call copy_routine
	ld a,#>SRC_WRAM
	ld c,#40
	call HRAM_DMA
	call oam_sum
	expect WRAM_SUM, 3
	ld a,#>rom_table
	ld c,#40
	call HRAM_DMA
	call oam_sum
	expect ROM_SUM, 4
	; checksum of the log
	ld hl,#LOG
	ld bc,#4 * ROUNDS
	ld d,#0
2$:	ld a,(hl+)
	add a,d
	ld d,a
	dec bc
	ld a,b
	or c
	jr nz,2$
	ld a,d
	show str_sum
	ret

str_title: .asciz "dma_wait\n"
str_sum:   .asciz "log checksum"

	.include "rom_table.inc"
