; wrap_dmgtris: title "DMGTRIS" (Pandora's Blocks); HRAM as its wrapper reads it.
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
LCDC_VALUE = 0x93
CGB_FLAG = 0x00
GAME_EXTRA = 0
	.macro TITLE_TEXT
	.ascii "DMGTRIS"
	.rept 8
	.db 0
	.endm
	.endm
	.include "wrapgame.inc"

script_table:
	; the title screen's logo row (start_game waits for it)
	.db 0
	.dw 40, 0x9800 + 2 * 32 + 3
	.db 14, 171, 177, 179, 185, 187, 193, 195, 201, 203, 209, 211, 217, 219, 225
	; START: gameplay state
	.db 1
	.dw 1, 0xFFFD
	.db 1, 3
	.db 0xFF

chaos_table:
	.dw 0x9800, 0x03FF
	.db 0xFF, 0x00
	.dw 0xFFB8, 0x0007          ; score digits
	.db 0x07, 0x00
	.dw 0xFF90, 0x0003          ; level digits
	.db 0x07, 0x00
	.dw 0xFFD2, 0x0000          ; next block (0-7; 7 is not a piece)
	.db 0x07, 0x00
	.dw 0xFFDB, 0x0000          ; mode (21, 24: game over)
	.db 0x1F, 0x00
	.dw 0xFE00, 0x007F
	.db 0xFF, 0x00
	.dw 0x0000
