; wrap_sml: title "SUPER MARIOLAND"; RAM and tile map as Super Mario Land's wrapper reads them.
CART_TYPE = 0x01
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
LCDC_VALUE = 0x83           ; on, BG map 9800, tiles 8800 (signed), objects, BG
CGB_FLAG = 0x00
GAME_EXTRA = 0
	.macro TITLE_TEXT
	.ascii "SUPER MARIOLAND"
	.endm
	.include "wrapgame.inc"

script_table:
	; "START" on the title screen (tiles 284 285 266 283 285 in PyBoy's numbering)
	.db 0
	.dw 40, 0x9800 + 13 * 32 + 6
	.db 5, 28, 29, 10, 27, 29
	; the in-game status bar after START
	.db 1
	.dw 1, 0x9800
	.db 5, 22, 10, 27, 18, 24
	.db 1
	.dw 1, 0x9800 + 32 + 5
	.db 1, 0
	.db 0xFF

chaos_table:
	.dw 0x9800, 0x03FF          ; the whole map
	.db 0x7F, 0x00
	.dw 0x9800 + 32, 0x000F     ; score and coin digits (row 1)
	.db 0x0F, 0x00
	.dw 0x9800 + 32, 0x000F
	.db 0xFF, 0x00
	.dw 0xDA01, 0x0001          ; time left (BCD)
	.db 0xFF, 0x00
	.dw 0xDA15, 0x0000          ; lives (BCD)
	.db 0xFF, 0x00
	.dw 0xFFB4, 0x0000          ; world / level
	.db 0x33, 0x00
	.dw 0xC0AB, 0x0000          ; level block
	.db 0xFF, 0x00
	.dw 0xC202, 0x0000          ; Mario's x
	.db 0xFF, 0x00
	.dw 0xC0A4, 0x0000          ; game over at 0x39
	.db 0x3F, 0x00
	.dw 0xFE00, 0x007F
	.db 0xFF, 0x00
	.dw 0xFF42, 0x0001          ; SCY, SCX
	.db 0xFF, 0x00
	.dw 0x0000
