; wrap_2048: title "2048"; variables at the addresses wrap_2048.sym gives (the 2048 wrapper
; finds them through the symbol file, as with the real homebrew game).
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
LCDC_VALUE = 0xE3
CGB_FLAG = 0x00
GAME_EXTRA = 0
	.macro TITLE_TEXT
	.ascii "2048"
	.rept 11
	.db 0
	.endm
	.endm
	.include "wrapgame.inc"

BOARD = 0xC800
SCORE = 0xC840
WINNER = 0xC842
STATE = 0xC843

script_table:
	; "PRESS START" in the window (tiles 294 309 296 292 311 296 295 291 293)
	.db 0
	.dw 40, 0x9C00 + 5 * 32 + 5
	.db 9, 38, 53, 40, 36, 55, 40, 39, 35, 37
	; START: playing, with two tiles on the board
	.db 1
	.dw 1, STATE
	.db 1, 1
	.db 1
	.dw 1, BOARD
	.db 4, 2, 0, 4, 0
	.db 0xFF

chaos_table:
	.dw BOARD, 0x003F           ; board (25 little-endian words) and beyond
	.db 0x0E, 0x00
	.dw SCORE, 0x0001
	.db 0xFF, 0x00
	.dw WINNER, 0x0000
	.db 0x01, 0x00
	.dw STATE, 0x0000
	.db 0x03, 0x00
	.dw 0x9800, 0x03FF
	.db 0xFF, 0x00
	.dw 0xFE00, 0x007F
	.db 0xFF, 0x00
	.dw 0x0000
