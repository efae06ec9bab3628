;; Hot helpers in assembly: SDCC's code for these loops costs ~50 M-cycles a
;; byte, which blew the frame budget. SDCC 4.2 sm83 calling convention
;; (sdcccall 1): first 16-bit arg in DE, second 16-bit in BC / 8-bit in A,
;; further args on the stack, popped by the callee.
	.module fast
	.globl _shadow_oam
	.area _CODE

;; void vcopy(volatile uint8_t *dst /*DE*/, const uint8_t *src /*BC*/, uint16_t n /*stack*/)
_vcopy::
	ldhl sp, #2
	ld a, (hl+)
	ld h, (hl)
	ld l, a
	or h
	jr z, 3$
	ld a, l             ; outer count = high byte, +1 if a partial block
	or a
	jr z, 1$
	inc h
1$:	ld a, (bc)
	ld (de), a
	inc bc
	inc de
	dec l
	jr nz, 1$
	dec h
	jr nz, 1$
3$:	pop hl
	add sp, #2
	jp (hl)

;; void vfill(volatile uint8_t *dst /*DE*/, uint8_t v /*A*/, uint16_t n /*stack*/)
_vfill::
	ld b, a
	ldhl sp, #2
	ld a, (hl+)
	ld h, (hl)
	ld l, a
	or h
	jr z, 3$
	ld a, l
	or a
	jr z, 1$
	inc h
1$:	ld a, b
2$:	ld (de), a
	inc de
	dec l
	jr nz, 2$
	dec h
	jr nz, 2$
3$:	pop hl
	add sp, #2
	jp (hl)

;; void oam_clear(void)
_oam_clear::
	ld hl, #_shadow_oam
	ld c, #160
	xor a
1$:	ld (hl+), a
	dec c
	jr nz, 1$
	ret

;; uint8_t rnd(void): xorshift16 (7,9,8) on G.rng (0xC00B, u16 LE); returns lo^hi in A
_rnd::
	ld hl, #0xC00B
	ld a, (hl+)
	ld e, a
	ld d, (hl)
	;; x ^= x << 7   ((x << 8) >> 1: hi ^= lo >> 1, lo ^= lo << 7)
	ld a, e
	srl a
	xor d
	ld d, a
	ld a, #0
	rra
	xor e
	ld e, a
	;; x ^= x >> 9   (lo ^= hi >> 1)
	ld a, d
	srl a
	xor e
	ld e, a
	;; x ^= x << 8   (hi ^= lo)
	xor d
	ld d, a
	ld (hl), d
	dec hl
	ld (hl), e
	xor e
	ret
