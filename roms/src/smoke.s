; smoke: minimal ROM (print, pass) -- used to check header handling.
USE_RST = 0
CART_TYPE = 0x00
ROM_SIZE_CODE = 0x00
RAM_SIZE_CODE = 0x00
CGB_FLAG = 0x00
IDLE_LCDC = 0x91
	.include "common.inc"
	no_interrupt_handlers
main:
	ld hl,#msg
	call puts
	ld a,#0x5A
	expect 0x5A, 1
	ret
msg: .asciz "smoke\n"
