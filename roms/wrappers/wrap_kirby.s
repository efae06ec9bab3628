; wrap_kirby: title "KIRBY DREAM LAN"; RAM as Kirby's Dream Land's wrapper reads it.
CART_TYPE = 0x01
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
LCDC_VALUE = 0x93
CGB_FLAG = 0x00
GAME_EXTRA = 0
	.macro TITLE_TEXT
	.ascii "KIRBY DREAM LAN"
	.endm
	.include "wrapgame.inc"

script_table:
	; "HAL" on row 16 (start_game waits for it)
	.db 0
	.dw 40, 0x9800 + 16 * 32
	.db 3, 231, 224, 235
	.db 0xFF

chaos_table:
	.dw 0x9800, 0x03FF
	.db 0xFF, 0x00
	.dw 0xD070, 0x0003          ; score digits
	.db 0x0F, 0x00
	.dw 0xD086, 0x0000          ; health
	.db 0x07, 0x00
	.dw 0xD089, 0x0000          ; lives + 1
	.db 0x03, 0x00
	.dw 0xFE00, 0x007F
	.db 0xFF, 0x00
	.dw 0xFF42, 0x0001
	.db 0xFF, 0x00
	.dw 0x0000
