; wrap_pinball: title "POKEPINBALLVPH" (header "POKEPINBALLVPHE"), a Game Boy Color-enhanced
; MBC5 + rumble + RAM + battery cartridge as the real game is; RAM as Pokémon Pinball's wrapper
; reads it. Every frame one of the routines the wrapper hooks is called (the ROM there is
; empty: its 0xFF bytes are RST 0x38, whose handler returns to the caller), and one tile
; attribute (VRAM bank 1) of the map's top rows changes.
CART_TYPE = 0x1E
ROM_SIZE_CODE = 0x03        ; 16 banks: the hooks reach bank 0x0C
RAM_SIZE_CODE = 0x02
LCDC_VALUE = 0x87           ; on, BG map 9800, tiles 8800 (signed), 8x16 objects, BG
CGB_FLAG = 0x80
GAME_EXTRA = 1
	.macro TITLE_TEXT
	.ascii "POKEPINBALLVPHE"
	.endm

	.area _HEADER (ABS)
	.org 0x38
	inc sp                      ; RST 0x38 from an empty hooked routine: drop its return
	inc sp                      ; address and return to the routine's caller
	ret

	.include "wrapgame.inc"

game_extra:
	; call one hooked routine: (bank, address) = hook_table[rnd & 31]
	call rnd
	and #0x1F
	ld l,a
	ld h,#0
	ld d,h
	ld e,l
	add hl,hl
	add hl,de
	ld de,#hook_table
	add hl,de
	ld a,(hl+)
	ld (0x2000),a               ; MBC5 ROM bank
	ld a,(hl+)
	ld h,(hl)
	ld l,a
	call call_hl
	ld a,#1
	ld (0x2000),a
	; one attribute byte (palette, VRAM bank bit) in the map's rows 0-7
	ld a,#1
	ldh (0x4F),a
	call rnd
	ld l,a
	ld h,#0x98
	call rnd
	and #0x0F
	ld (hl),a
	xor a
	ldh (0x4F),a
	ret

call_hl:
	jp (hl)

hook_table:
	.db 8
	.dw 0x470B                  ; evolution completed (red, blue)
	.db 8
	.dw 0x4D30
	.db 8
	.dw 0x4757                  ; evolution failed (red, blue)
	.db 8
	.dw 0x4D7C
	.db 4
	.dw 0x473D                  ; Pokémon caught
	.db 4
	.dw 0x4753                  ; Pokémon seen
	.db 9
	.dw 0x4000                  ; bonus stages: Meowth, Diglett, Gengar, Seel, Mewtwo started
	.db 6
	.dw 0x59F2
	.db 6
	.dw 0x4099
	.db 9
	.dw 0x5A7C
	.db 6
	.dw 0x524F
	.db 9
	.dw 0x444B                  ; ... and completed
	.db 6
	.dw 0x6BF2
	.db 6
	.dw 0x4A14
	.db 9
	.dw 0x5C5A
	.db 6
	.dw 0x565E
	.db 0x0C
	.dw 0x41EC                  ; map change tried, done
	.db 0x0C
	.dw 0x55D5
	.db 7
	.dw 0x4AFF                  ; Pikachu saver charged (blue, red), used (blue, red)
	.db 5
	.dw 0x4E8A
	.db 7
	.dw 0x50C9
	.db 5
	.dw 0x6634
	.db 7
	.dw 0x63DE                  ; ball upgraded (blue, red)
	.db 5
	.dw 0x53C0
	.db 0x0C
	.dw 0x4164                  ; extra ball; extra ball from the slot
	.db 3
	.dw 0x6FA7
	.db 7
	.dw 0x667E                  ; slot opened (blue, red); slot entered
	.db 5
	.dw 0x5284
	.db 3
	.dw 0x6D8E
	.db 3
	.dw 0x5D7F                  ; ball saved (red, blue)
	.db 3
	.dw 0x5E58
	.db 4
	.dw 0x4D64                  ; the evolution timer (the evolve hack's unlimited time)

script_table:
	; the title screen: tile 269 (13, signed) at column 10, row 10
	.db 0
	.dw 60, 0x9800 + 10 * 32 + 10
	.db 1, 13
	.db 0xFF

chaos_table:
	.dw 0x9800, 0x03FF          ; the whole map
	.db 0x7F, 0x00
	.dw 0xD46A, 0x0007          ; score (6 bytes BCD) and after
	.db 0xFF, 0x00
	.dw 0xD46A, 0x0003
	.db 0x99, 0x00
	.dw 0xD47E, 0x0000          ; ball type (0, 2, 3, 5 valid)
	.db 0x07, 0x00
	.dw 0xD482, 0x0000          ; multiplier
	.db 0x0F, 0x00
	.dw 0xD49B, 0x0003          ; extra balls, balls used
	.db 0x03, 0x00
	.dw 0xD4A4, 0x0000          ; ball saver seconds
	.db 0x3F, 0x00
	.dw 0xD4AC, 0x0000          ; stage
	.db 0x0F, 0x00
	.dw 0xD4B3, 0x000F          ; ball position and speed
	.db 0xFF, 0x00
	.dw 0xD4C8, 0x0000          ; ball size
	.db 0x03, 0x00
	.dw 0xD517, 0x0000          ; Pikachu saver charge
	.db 0x0F, 0x00
	.dw 0xD54A, 0x0000          ; map
	.db 0x0F, 0x00
	.dw 0xD54B, 0x0000          ; special mode active
	.db 0x01, 0x00
	.dw 0xD550, 0x0000          ; special mode
	.db 0x03, 0x00
	.dw 0xD616, 0x0000          ; game over
	.db 0x01, 0x00
	.dw 0xD962, 0x00FF          ; Pokédex (0 unseen, 1 seen, 2 caught)
	.db 0x03, 0x00
	.dw 0xD962, 0x00FF
	.db 0x02, 0x00
	.dw 0xFE00, 0x007F          ; objects
	.db 0xFF, 0x00
	.dw 0xFE80, 0x001F
	.db 0xFF, 0x00
	.dw 0xFF42, 0x0001          ; SCY, SCX
	.db 0xFF, 0x00
	.dw 0x0000
