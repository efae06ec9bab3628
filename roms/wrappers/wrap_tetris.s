; wrap_tetris: title "TETRIS"; RAM and tile map laid out as Tetris' wrapper reads them.
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
LCDC_VALUE = 0x93           ; on, BG map 9800, tiles 8000 (unsigned), objects, BG
CGB_FLAG = 0x00
GAME_EXTRA = 0
	.macro TITLE_TEXT
	.ascii "TETRIS"
	.rept 9
	.db 0
	.endm
	.endm
	.include "wrapgame.inc"

script_table:
	; "1PLAYER" on row 14 from column 2 (start_game waits for it)
	.db 0
	.dw 40, 0x9800 + 14 * 32 + 2
	.db 7, 89, 25, 21, 10, 34, 14, 27
	.db 0xFF

chaos_table:
	.dw 0x9800, 0x01FF          ; playfield and surroundings (rows 0-15)
	.db 0xFF, 0x00
	.dw 0x9800, 0x01FF
	.db 0x87, 0x28              ; mostly the game's own tiles (0x28-0xAF)
	.dw 0x9800 + 3 * 32 + 13, 0x0007   ; score digits
	.db 0x0F, 0x00
	.dw 0x9800 + 7 * 32 + 14, 0x0003   ; level
	.db 0x0F, 0x00
	.dw 0x9800 + 10 * 32 + 14, 0x0003  ; lines
	.db 0x0F, 0x00
	.dw 0x9800 + 2, 0x0000      ; game-over tile position
	.db 0xFF, 0x00
	.dw 0xC213, 0x0000          ; next tetromino
	.db 0x1C, 0x00
	.dw 0xFE00, 0x007F          ; objects 0-31
	.db 0xFF, 0x00
	.dw 0xFF42, 0x0001          ; SCY, SCX
	.db 0x0F, 0x00
	.dw 0x0000
