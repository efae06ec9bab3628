; wrap_pokered: title "POKEMON RED"; RAM, tile maps and the collision pointer as the Pokémon
; Gen 1 wrapper reads them. MBC1 + RAM + battery (battery-RAM tests use it too).
CART_TYPE = 0x03
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x03
LCDC_VALUE = 0xE3           ; on, window map 9C00 on, BG map 9800, tiles 8800 (signed)
CGB_FLAG = 0x00
GAME_EXTRA = 0
	.macro TITLE_TEXT
	.ascii "POKEMON RED"
	.rept 4
	.db 0
	.endm
	.endm
	.include "wrapgame.inc"

script_table:
	; the collision-table pointer (wTilesetCollisionPtr)
	.db 4
	.dw 0, 0xD530
	.db 2, <collision, >collision
	; window: "NEW GAME" menu, the dialogue arrow, the naming screens' first letter
	.db 0
	.dw 150, 0x9C00 + 2 * 32 + 2
	.db 1, 141
	.db 4
	.dw 0, 0x9C00 + 16 * 32 + 18
	.db 1, 238
	.db 3
	.dw 1, 0x9C00 + 4 * 32 + 2
	.db 1, 129
	.db 2
	.dw 1, 0x9C00 + 4 * 32 + 2
	.db 1, 145
	.db 0xFF

collision:
	.db 0x01, 0x05, 0x0A, 0x10, 0x11, 0x12, 0x1F, 0xFF

chaos_table:
	.dw 0x9800, 0x03FF          ; background: tiles 0-31 (some walkable)
	.db 0x1F, 0x00
	.dw 0x9800, 0x03FF
	.db 0x1F, 0x00
	.dw 0xD163, 0x0000          ; party count
	.db 0x03, 0x00
	.dw 0xD164, 0x0007          ; party species
	.db 0xFF, 0x00
	.dw 0xD16B, 0x00FF          ; party records
	.db 0xFF, 0x00
	.dw 0xD273, 0x007F          ; OT names, nicknames
	.db 0xFF, 0x00
	.dw 0xD347, 0x0003          ; money (BCD)
	.db 0xFF, 0x00
	.dw 0xD31D, 0x0000          ; bag count
	.db 0x0F, 0x00
	.dw 0xD31E, 0x001F          ; bag items
	.db 0xFF, 0x00
	.dw 0xD356, 0x0000          ; badges
	.db 0xFF, 0x00
	.dw 0xD747, 0x00FF          ; event flags
	.db 0xFF, 0x00
	.dw 0xFFD7, 0x0000          ; tileset type
	.db 0x01, 0x00
	.dw 0xD535, 0x0000          ; grass tile
	.db 0x1F, 0x00
	.dw 0xA000, 0x00FF          ; cartridge RAM (when enabled)
	.db 0xFF, 0x00
	.dw 0xFE00, 0x007F
	.db 0xFF, 0x00
	.dw 0xFF42, 0x0001          ; SCY, SCX
	.db 0xFF, 0x00
	.dw 0xFF4A, 0x0000          ; WY: 0 or 0x80
	.db 0x80, 0x00
	; the player walks: map (wCurMap) and y/x (wYCoord, wXCoord) in a small area, so that
	; positions repeat (the exploration reward counts each once per episode)
	.dw 0xD35E, 0x0000
	.db 0x01, 0x00
	.dw 0xD361, 0x0001
	.db 0x03, 0x00
	.dw 0x0000
