; music: a sound driver as games have them, playing forever, with what it reads back
; logged in WRAM so that any difference in the sound unit shows up in memory.
;
; First a few checks of what a program sees (Pan Docs "Audio Registers", DMG; PyBoy 2.8.1
; agrees), printed and checked; then "PASSED" is printed (or, at the first failed check,
; "FAILED n" as every ROM reports it) and the ROM plays music for ever:
;
; * The driver runs once per VBlank interrupt for 100 frames, then once per timer interrupt
;   for about as long (TAC 4096 Hz or 16384 Hz, TMA varying), and so on. Each run logs
;   FF10-FF3F (the registers, FF27-FF2F and wave RAM, read while the channels play) plus DIV,
;   LY and the mode into a ring of 16 entries, then plays the next notes of each channel:
;   CH1 with random sweep, duty, envelope, length; CH2 likewise; CH4 random noise; CH3 as
;   games load waves (DAC off, 16 bytes, DAC on, trigger), or a retrigger while playing (no
;   DAC off), or wave RAM writes while it plays (DMG: ignored or redirected), or a stop.
;   Extras: volume (NRx2) and period (NRx3) changes without a trigger, NR50/NR51 changes,
;   and now and then the APU switched off and on (its registers logged while off).
; * The main loop reads wave RAM while CH3 plays, single reads and bursts of 32 (counting the
;   reads that hit the byte CH3 is fetching instead of 0xFF), tracks NR52's channel bits, writes DIV now and then, waits
;   in HALT some of the time, and every 64 driver runs does a "retrigger storm": a known
;   pattern in wave RAM, CH3 at a very short period, triggered 8 times at random delays
;   (DMG wave RAM corruption when a trigger meets a fetch), then stopped and wave RAM logged.
;
; The random numbers come from two 16-bit LFSRs (driver, main loop); everything is
; deterministic. Counters (16-bit, little endian) for the tests: see the equates below.
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
	.include "common.inc"

rNR10 = 0x10
rNR11 = 0x11
rNR12 = 0x12
rNR13 = 0x13
rNR14 = 0x14
rNR21 = 0x16
rNR22 = 0x17
rNR23 = 0x18
rNR24 = 0x19
rNR30 = 0x1A
rNR31 = 0x1B
rNR32 = 0x1C
rNR33 = 0x1D
rNR34 = 0x1E
rNR41 = 0x20
rNR42 = 0x21
rNR43 = 0x22
rNR44 = 0x23
rNR50 = 0x24
rNR51 = 0x25
rNR52 = 0x26

CNT_WAVE_READS   = VARS+0x00  ; main loop: wave RAM reads while NR52 said CH3 is on
CNT_WAVE_HITS    = VARS+0x02  ; ... of them not 0xFF (the fetch window)
CNT_NR52_CHANGES = VARS+0x04  ; main loop: NR52 value changes seen
CNT_RETRIGGERS   = VARS+0x06  ; CH3 triggers while NR52 said it was on
CNT_EXPIRED      = VARS+0x08  ; driver: channel bits that went off between two runs
CNT_DIV_WRITES   = VARS+0x0A
CNT_POWER_CYCLES = VARS+0x0C
CNT_VBL_RUNS     = VARS+0x0E  ; driver runs from the VBlank interrupt
CNT_TIM_RUNS     = VARS+0x10  ; driver runs from the timer interrupt
CNT_CORRUPT      = VARS+0x12  ; storms after which wave RAM was not the pattern written
CNT_STORMS       = VARS+0x14
CNT_LOG_HITS     = VARS+0x16  ; driver log: wave RAM bytes read as not 0xFF while CH3 on
RNG_DRV          = VARS+0x18  ; 16-bit LFSR states
RNG_MAIN         = VARS+0x1A
LAST_NR52        = VARS+0x1C
DRV_LAST_NR52    = VARS+0x1D
MODE             = VARS+0x1E  ; 0: driver on VBlank, 1: driver on the timer
MODE_LEFT        = VARS+0x1F  ; runs left in this mode
LOG_POS          = VARS+0x20  ; ring position 0-15
CH_LEFT          = VARS+0x21  ; 4 bytes: driver runs left until each channel's next note
HIT_POS          = VARS+0x25
STORM_REQ        = VARS+0x26
STORM_POS        = VARS+0x27
SEEN_STORM_CH3   = VARS+0x28  ; NR52 before the last trigger of a storm
CNT_BURSTS       = VARS+0x29  ; 16-bit: wave RAM read bursts
BURST_LOG        = 0xC0C0     ; 32 bytes: the last burst's reads
HIT_LOG          = 0xC040     ; 64 bytes: wave RAM values of window hits (ring)
STORM_LOG        = 0xC080     ; 4 x 16 bytes: wave RAM after each storm (ring)
TICK_LOG         = 0xC100     ; 16 x 64 bytes: one entry per driver run (ring)

; mexpect: as `expect`, but a mismatch reports FAILED and then plays the music all the same
; (without sound emulation every check fails; the player still runs).
	.macro mexpect val, code
	ld b,#code
	cp #val
	jp nz,check_failed
	.endm

; inc16 addr: 16-bit increment in memory.  Clobbers HL, F.
	.macro inc16 addr, ?skip
	ld hl,#addr
	inc (hl)
	jr nz,skip
	inc hl
	inc (hl)
skip:
	.endm

isr_serial = isr_none
isr_joypad = isr_none
isr_stat = isr_none

isr_vblank:
	push af
	push bc
	push de
	push hl
	ld a,(MODE)
	or a
	jr nz,1$
	inc16 CNT_VBL_RUNS
	call driver_run
1$:	pop hl
	pop de
	pop bc
	pop af
	reti

isr_timer:
	push af
	push bc
	push de
	push hl
	ld a,(MODE)
	or a
	jr z,1$
	inc16 CNT_TIM_RUNS
	call driver_run
1$:	pop hl
	pop de
	pop bc
	pop af
	reti

; rand_drv / rand_main: next byte of the driver's / main loop's LFSR in A.
; 16-bit Galois LFSR, taps 0xB400.  Preserves everything but A and F.
rand_drv:
	push hl
	ld hl,#RNG_DRV+1
	jr rand_common
rand_main:
	push hl
	ld hl,#RNG_MAIN+1
rand_common:
	ld a,(hl)
	srl a
	ld (hl-),a
	ld a,(hl)
	rra
	ld (hl),a
	jr nc,1$
	inc hl
	ld a,(hl)
	xor #0xB4
	ld (hl-),a
1$:	ld a,(hl+)
	xor (hl)
	pop hl
	ret

; ---------------------------------------------------------------- self checks

main:
	ld hl,#str_title
	call puts
	ld a,#0x91
	ldh (rLCDC),a
	; power cycle: everything off
	xor a
	ldh (rNR52),a
	ldh a,(rNR52)
	show str_nr52_off
	mexpect 0x70, 1
	ld a,#0x80
	ldh (rNR52),a
	ldh a,(rNR52)
	show str_nr52_on
	mexpect 0xF0, 2
	; registers while powered on and cleared read back their masks
	ldh a,(rNR10)
	mexpect 0x80, 3
	ldh a,(rNR30)
	mexpect 0x7F, 4
	ldh a,(rNR32)
	mexpect 0x9F, 5
	; CH2 triggered with its DAC on: NR52 bit 1
	ld a,#0xF0
	ldh (rNR22),a
	ld a,#0x38             ; length 8
	ldh (rNR21),a
	ld a,#0xC0             ; trigger, length enabled
	ldh (rNR24),a
	ldh a,(rNR52)
	mexpect 0xF2, 6
	; ... and its length runs out (8 clocks at 256 Hz, about two frames): wait four
	ld d,#4
3$:	call wait_ly144
	call wait_ly0
	dec d
	jr nz,3$
	ldh a,(rNR52)
	show str_length
	mexpect 0xF0, 7
	; CH2's DAC off switches it off at once
	ld a,#0x80
	ldh (rNR24),a
	ldh a,(rNR52)
	mexpect 0xF2, 8
	xor a
	ldh (rNR22),a
	ldh a,(rNR52)
	mexpect 0xF0, 9
	; wave RAM: written with CH3 off, it reads back
	call wave_pattern
	ldh a,(0x35)
	mexpect 0x55, 10
	; CH3 playing at an even period value: the CPU never meets a fetch (the fetches come at
	; odd cycles, the CPU reads at even ones): wave RAM reads 0xFF
	ld a,#0x80
	ldh (rNR30),a
	ld a,#0x00
	ldh (rNR33),a
	ld a,#0x87
	ldh (rNR34),a
	ldh a,(rNR52)
	mexpect 0xF4, 11
	ld b,#200
1$:	ldh a,(0x37)
	cp #0xFF
	jr nz,2$
	dec b
	jr nz,1$
2$:	show str_wave_locked
	mexpect 0xFF, 12
	; DAC off stops CH3: the pattern is back
	xor a
	ldh (rNR30),a
	ldh a,(0x3F)
	mexpect 0xFF, 13
	ldh a,(0x31)
	mexpect 0x11, 14
	; APU off: registers cleared (read as their masks), wave RAM kept
	ld a,#0x77
	ldh (rNR50),a
	xor a
	ldh (rNR52),a
	ldh a,(rNR50)
	mexpect 0x00, 15
	ldh a,(0x32)
	mexpect 0x22, 16
	ld a,#0x77              ; writes are ignored while off
	ldh (rNR50),a
	ldh a,(rNR50)
	mexpect 0x00, 17

	ld hl,#str_passed
	call puts
	ld a,#'P
	ld (RESULT),a
	jp music

; check_failed: B = failure number, A = value observed.  Report, then play.
check_failed:
	ld (GOT),a
	ld a,b
	ld (RESULT_CODE),a
	ld a,#'F
	ld (RESULT),a
	ld hl,#str_got
	call puts
	ld a,(GOT)
	call puthex8
	call newline
	ld hl,#str_failed
	call puts
	ld a,(RESULT_CODE)
	call putdec8
	call newline
	jp music

; wave_pattern: CH3 off, wave RAM = 00 11 22 ... FF.  Clobbers A, B, C, F.
wave_pattern:
	xor a
	ldh (rNR30),a
	ld c,#0x30
1$:	call pattern_byte
	ldh (c),a
	inc c
	ld a,c
	cp #0x40
	jr nz,1$
	ret

; pattern_byte: A = the pattern's byte for wave RAM address 0xFF00 + C: (C & 0x0F) * 0x11.
; Clobbers B.
pattern_byte:
	ld a,c
	and #0x0F
	ld b,a
	swap a
	or b
	ret

; wait_ly0: poll LY until it is 0.
wait_ly0:
	ldh a,(rLY)
	or a
	jr nz,wait_ly0
	ret

; ---------------------------------------------------------------- the player

music:
	ld sp,#0xE000
	ld hl,#RNG_DRV
	ld (hl),#0xE1
	inc hl
	ld (hl),#0xAC
	inc hl
	ld (hl),#0x5A           ; RNG_MAIN
	inc hl
	ld (hl),#0x3C
	ld a,#100
	ld (MODE_LEFT),a
	ld a,#1
	ld (CH_LEFT+0),a
	ld (CH_LEFT+1),a
	ld (CH_LEFT+2),a
	ld (CH_LEFT+3),a
	ld a,#0x80
	ldh (rNR52),a
	ld a,#0x77
	ldh (rNR50),a
	ld a,#0xFF
	ldh (rNR51),a
	xor a
	ldh (rTAC),a
	ldh (rIF),a
	ld a,#0x05              ; VBlank and timer
	ldh (rIE),a
	ei

main_loop:
	; NR52 changes
	ldh a,(rNR52)
	ld b,a
	ld hl,#LAST_NR52
	cp (hl)
	jr z,1$
	ld (hl),a
	inc16 CNT_NR52_CHANGES
1$:	; a wave RAM read while CH3 plays
	bit 2,b
	jr z,3$
	call rand_main
	and #0x0F
	or #0x30
	ld c,a
	ldh a,(c)
	ld b,a
	inc16 CNT_WAVE_READS
	ld a,b
	cp #0xFF
	jr z,2$
	inc16 CNT_WAVE_HITS
	ld a,(HIT_POS)
	inc a
	and #0x3F
	ld (HIT_POS),a
	ld l,a
	ld h,#>HIT_LOG
	ld a,#<HIT_LOG
	add a,l
	ld l,a
	ld (hl),b
2$:	; 1 in 4: a burst of 32 reads of the same byte, 16 cycles apart
	call rand_main
	and #0x03
	call z,burst
3$:	; a storm when the driver asks
	ld a,(STORM_REQ)
	or a
	call nz,storm
	; DIV written now and then (1 in 64)
	call rand_main
	ld b,a
	and #0x3F
	jr nz,4$
	ldh (rDIV),a
	inc16 CNT_DIV_WRITES
4$:	; HALT until the next interrupt (1 in 16), else a short random delay
	ld a,b
	and #0x0F
	cp #0x08
	jr nz,5$
	halt
	nop
	jr main_loop
5$:	ld a,b
	and #0x07
	inc a
6$:	dec a
	jr nz,6$
	jp main_loop

; burst: C = a wave RAM address; 32 reads of it into BURST_LOG, counting the hits.
burst:
	ld hl,#BURST_LOG
	ld b,#32
1$:	ldh a,(c)
	ld (hl+),a
	dec b
	jr nz,1$
	ld hl,#BURST_LOG
	ld b,#32
2$:	ld a,(hl+)
	cp #0xFF
	jr z,3$
	push hl
	inc16 CNT_WAVE_HITS
	pop hl
3$:	dec b
	jr nz,2$
	inc16 CNT_BURSTS
	ret

; storm: CH3 retriggered while playing at a very short period; wave RAM logged afterwards.
storm:
	di
	xor a
	ld (STORM_REQ),a
	call wave_pattern
	ld a,#0x80
	ldh (rNR30),a
	ld a,#0x20
	ldh (rNR32),a
	call rand_main
	or #0xF8                ; period value 0x7F8-0x7FF: 2-16 cycles per sample
	ldh (rNR33),a
	ld a,#0x87
	ldh (rNR34),a
	ld d,#8
1$:	call rand_main
	and #0x0F
	inc a
2$:	dec a
	jr nz,2$
	ldh a,(rNR52)
	ld (SEEN_STORM_CH3),a
	bit 2,a
	jr z,3$
	inc16 CNT_RETRIGGERS
3$:	ld a,#0x87
	ldh (rNR34),a
	dec d
	jr nz,1$
	xor a
	ldh (rNR30),a
	; log wave RAM, compare with the pattern
	ld a,(STORM_POS)
	inc a
	and #0x03
	ld (STORM_POS),a
	swap a                  ; * 16
	add a,#<STORM_LOG
	ld l,a
	ld h,#>STORM_LOG
	ld c,#0x30
	ld e,#0                 ; differences
4$:	ldh a,(c)
	ld (hl+),a
	ld d,a
	call pattern_byte
	cp d
	jr z,5$
	inc e
5$:	inc c
	ld a,c
	cp #0x40
	jr nz,4$
	inc16 CNT_STORMS
	ld a,e
	or a
	jr z,6$
	inc16 CNT_CORRUPT
6$:	ei
	ret

; ---------------------------------------------------------------- the driver

driver_run:
	call log_entry
	; channels that went off since the last run (length, sweep overflow, DAC off)
	ldh a,(rNR52)
	ld b,a
	ld a,(DRV_LAST_NR52)
	cpl
	or b
	cpl                     ; bits on before, off now
	and #0x0F
	jr z,1$
	inc16 CNT_EXPIRED
1$:	ld a,b
	ld (DRV_LAST_NR52),a
	; next notes
	ld hl,#CH_LEFT+0
	dec (hl)
	call z,note_ch1
	ld hl,#CH_LEFT+1
	dec (hl)
	call z,note_ch2
	ld hl,#CH_LEFT+2
	dec (hl)
	call z,note_ch3
	ld hl,#CH_LEFT+3
	dec (hl)
	call z,note_ch4
	; extras
	call rand_drv
	ld b,a
	and #0x07
	call z,volume_change
	ld a,b
	and #0x38
	call z,period_change
	ld a,b
	and #0xF0
	cp #0x50
	call z,panning_change
	call rand_drv
	and #0x7F
	call z,power_cycle
	; a storm every 64 runs
	ld a,(CNT_VBL_RUNS)
	ld b,a
	ld a,(CNT_TIM_RUNS)
	add a,b
	and #0x3F
	jr nz,2$
	ld a,#1
	ld (STORM_REQ),a
2$:	; switch between the VBlank and the timer driver
	ld hl,#MODE_LEFT
	dec (hl)
	ret nz
	ld (hl),#100
	ld a,(MODE)
	xor #1
	ld (MODE),a
	jr z,3$
	; to the timer: 64 Hz from 4096 Hz / 64, or about 80 Hz from 16384 Hz / 205
	call rand_drv
	and #1
	jr z,4$
	ld a,#0xC0
	ldh (rTMA),a
	ldh (rTIMA),a
	ld a,#0x04
	ldh (rTAC),a
	ret
4$:	ld a,#0x33
	ldh (rTMA),a
	ldh (rTIMA),a
	ld a,#0x07
	ldh (rTAC),a
	ret
3$:	xor a
	ldh (rTAC),a
	ret

; log_entry: FF10-FF3F, DIV, LY, MODE, NR52 into the next ring entry.
log_entry:
	ld a,(LOG_POS)
	inc a
	and #0x0F
	ld (LOG_POS),a
	ld l,a
	ld h,#0
	add hl,hl
	add hl,hl
	add hl,hl
	add hl,hl
	add hl,hl
	add hl,hl
	ld de,#TICK_LOG
	add hl,de
	ldh a,(rNR52)
	ld d,a
	ld c,#0x10
1$:	ldh a,(c)
	ld (hl+),a
	inc c
	ld a,c
	cp #0x40
	jr nz,1$
	; wave bytes read as not 0xFF while CH3 plays
	bit 2,d
	jr z,3$
	ld de,#-16
	push hl
	add hl,de
	ld b,#16
2$:	ld a,(hl+)
	cp #0xFF
	jr z,4$
	push hl
	inc16 CNT_LOG_HITS
	pop hl
4$:	dec b
	jr nz,2$
	pop hl
3$:	ldh a,(rDIV)
	ld (hl+),a
	ldh a,(rLY)
	ld (hl+),a
	ld a,(MODE)
	ld (hl+),a
	ldh a,(rNR52)
	ld (hl+),a
	ret

note_ch1:
	call rand_drv
	and #0x0F
	add a,#2
	ld (CH_LEFT+0),a
	call rand_drv
	and #0x7F
	ldh (rNR10),a
	call rand_drv
	ldh (rNR11),a
	call rand_drv
	ldh (rNR12),a
	call rand_drv
	ldh (rNR13),a
	call rand_drv
	and #0x47
	or #0x80
	ldh (rNR14),a
	ret

note_ch2:
	call rand_drv
	and #0x0F
	add a,#2
	ld (CH_LEFT+1),a
	call rand_drv
	ldh (rNR21),a
	call rand_drv
	ldh (rNR22),a
	call rand_drv
	ldh (rNR23),a
	call rand_drv
	and #0x47
	or #0x80
	ldh (rNR24),a
	ret

note_ch4:
	call rand_drv
	and #0x07
	add a,#2
	ld (CH_LEFT+3),a
	call rand_drv
	ldh (rNR41),a
	call rand_drv
	ldh (rNR42),a
	call rand_drv
	ldh (rNR43),a
	call rand_drv
	and #0x40
	or #0x80
	ldh (rNR44),a
	ret

note_ch3:
	call rand_drv
	ld b,a
	and #0x1F
	add a,#3
	ld (CH_LEFT+2),a
	ld a,b
	and #0xE0
	cp #0x80
	jr c,load_wave          ; 4 in 8: a new wave, as games load one
	cp #0xC0
	jr c,retrigger_ch3      ; 2 in 8: retrigger while playing
	cp #0xE0
	jr c,write_while_playing
	xor a                   ; 1 in 8: stop
	ldh (rNR30),a
	ret

load_wave:
	xor a
	ldh (rNR30),a
	ld c,#0x30
1$:	call rand_drv
	ldh (c),a
	inc c
	ld a,c
	cp #0x40
	jr nz,1$
	ld a,#0x80
	ldh (rNR30),a
	call rand_drv
	ldh (rNR31),a
	call rand_drv
	and #0x60
	ldh (rNR32),a
ch3_note:
	call rand_drv
	ldh (rNR33),a
	call rand_drv
	and #0x47
	or #0x80
	ldh (rNR34),a
	ret

retrigger_ch3:
	ldh a,(rNR52)
	bit 2,a
	jr z,ch3_note
	inc16 CNT_RETRIGGERS
	jr ch3_note

write_while_playing:
	ld c,#0x30
1$:	call rand_drv
	ldh (c),a
	inc c
	ld a,c
	cp #0x40
	jr nz,1$
	call rand_drv
	ldh (rNR33),a
	ret

volume_change:
	call rand_drv
	and #0x01
	ld c,#rNR12
	jr z,1$
	ld c,#rNR42
1$:	call rand_drv
	ldh (c),a
	ret

period_change:
	call rand_drv
	ldh (rNR13),a
	call rand_drv
	ldh (rNR23),a
	call rand_drv
	ldh (rNR33),a
	ret

panning_change:
	call rand_drv
	ldh (rNR51),a
	call rand_drv
	and #0x77
	ldh (rNR50),a
	ret

; power_cycle: APU off, NRx1 length writes while off (DMG), the registers logged while off,
; then on again.
power_cycle:
	xor a
	ldh (rNR52),a
	call rand_drv
	ldh (rNR11),a
	call rand_drv
	ldh (rNR41),a
	call log_entry
	ld a,#0x80
	ldh (rNR52),a
	ld a,#0x77
	ldh (rNR50),a
	ld a,#0xFF
	ldh (rNR51),a
	inc16 CNT_POWER_CYCLES
	ret

str_title:       .asciz "music\n"
str_nr52_off:    .asciz "NR52 off"
str_nr52_on:     .asciz "NR52 on"
str_length:      .asciz "NR52 after CH2 length"
str_wave_locked: .asciz "wave RAM, CH3 on"
