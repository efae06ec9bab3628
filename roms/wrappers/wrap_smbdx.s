; wrap_smbdx: title "MARIO DELUXAHY" (header "MARIO DELUXAHYE"), a Game Boy Color-only MBC5 +
; RAM + battery cartridge as the real game is; RAM as Super Mario Bros. Deluxe's wrapper reads
; it. The game's mode byte (FFB5) moves through title, menu, file select, world map and level
; on START and A as the wrapper's start_game expects (also the level selector and Challenge
; paths); in a level, RIGHT and LEFT move the progress; the level's metatile map (WRAM banks
; 6 and 7), the objects (WRAM bank 1) and the counters change every frame. ROM bank 3 holds a
; metatile interaction table (types 0-22) where the game has its own.
CART_TYPE = 0x1B
ROM_SIZE_CODE = 0x02        ; 8 banks: the interaction table is in bank 3
RAM_SIZE_CODE = 0x02
LCDC_VALUE = 0x87           ; on, BG map 9800, tiles 8800 (signed), 8x16 objects, BG
CGB_FLAG = 0xC0
GAME_EXTRA = 1
	.macro TITLE_TEXT
	.ascii "MARIO DELUXAHYE"
	.endm
	.include "wrapgame.inc"

PREV_PAD = 0xFF88           ; the pad as game_extra last saw it
MODE = 0xFFB5
LEVEL_X = 0xFFA7
PLAYER_X = 0xC1CA
MENU_SELECTION = 0xC1A8
BTN_A = 0x01
BTN_B = 0x02
BTN_START = 0x08
BTN_RIGHT = 0x10
BTN_LEFT = 0x20

game_extra:
	; first frame: mode 0, the game's HRAM (FFA0-FFBF) cleared
	ldh a,(FRAME_HI)
	or a
	jr nz,1$
	ldh a,(FRAME_LO)
	cp #1
	jr nz,1$
	ld hl,#0xFFA0
	ld b,#0x20
	xor a
0$:	ld (hl+),a
	dec b
	jr nz,0$
1$:	; C = newly pressed buttons
	ldh a,(PREV_PAD)
	cpl
	ld c,a
	ldh a,(PAD)
	ldh (PREV_PAD),a
	and c
	ld c,a
	; the main menu with "Challenge" selected goes to the Challenge selector on A
	ldh a,(MODE)
	cp #0x19
	jr nz,2$
	bit 0,c
	jr z,2$
	ld a,(MENU_SELECTION)
	cp #1
	jr nz,2$
	ld a,#0x1E
	ldh (MODE),a
	jr moved$
2$:	; the first transition_table entry for (mode, a new press of one of its buttons)
	ld hl,#transition_table
3$:	ld a,(hl+)
	cp #0xFF
	jr z,moved$
	ld b,a
	ld a,(hl+)
	ld e,a                      ; E = buttons (0: none needed)
	ld a,(hl+)
	ld d,a                      ; D = next mode
	ldh a,(MODE)
	cp b
	jr nz,3$
	ld a,e
	or a
	jr z,4$
	and c
	jr z,3$
4$:	ld a,d
	ldh (MODE),a
moved$:
	; in a level, held RIGHT moves the camera's level x, held LEFT the player's x
	ldh a,(MODE)
	cp #0x0B
	jr nz,6$
	ldh a,(PAD)
	ld b,a
	bit 4,b
	jr z,5$
	ldh a,(LEVEL_X)
	inc a
	ldh (LEVEL_X),a
5$:	bit 5,b
	jr z,6$
	ld a,(PLAYER_X)
	add a,#3
	ld (PLAYER_X),a
6$:	; 8 random metatiles into each of WRAM banks 6 and 7
	ld a,#6
	call scribble_bank
	ld a,#7
	call scribble_bank
	xor a
	ldh (0x70),a
	ret

; scribble_bank: 8 random bytes at random places of D000-DFFF in WRAM bank A
scribble_bank:
	ldh (0x70),a
	ld b,#8
1$:	push bc
	call rnd                    ; A = low, D = high
	ld l,a
	ld a,d
	and #0x0F
	or #0xD0
	ld h,a
	push hl
	call rnd
	pop hl
	ld (hl),a
	pop bc
	dec b
	jr nz,1$
	ret

transition_table:
	; mode, buttons, next mode
	.db 0x00, BTN_START, 0x03   ; power-on -> title screen
	.db 0x03, BTN_START, 0x19   ; title -> main menu
	.db 0x19, BTN_A, 0x17       ; main menu -> file select
	.db 0x17, BTN_A, 0x05       ; file select -> world map
	.db 0x1E, BTN_A, 0x05       ; Challenge selector -> world map
	.db 0x05, BTN_START, 0x0B   ; world map -> level
	.db 0x31, 0x00, 0x32        ; level selector: init -> menu
	.db 0x32, BTN_A, 0x0B       ; level selector -> level
	.db 0x0B, BTN_B, 0x04       ; level -> next level's set-up
	.db 0x04, BTN_A, 0x0B       ; set-up -> level
	.db 0x04, BTN_START, 0x0E   ; set-up -> game over
	.db 0x0E, BTN_START, 0x0B   ; game over -> level
	.db 0xFF

script_table:
	.db 0xFF

chaos_table:
	.dw 0xFFB8, 0x0001          ; camera x (metatile columns 0-511 and beyond)
	.db 0xFF, 0x00
	.dw 0xFFB9, 0x0000
	.db 0x3F, 0x00
	.dw 0xFFBA, 0x0000          ; camera y
	.db 0x3F, 0x00
	.dw 0xFFA9, 0x0000          ; player y
	.db 0xFF, 0x00
	.dw 0xC163, 0x0000          ; level (0x20 and up: not World w-l)
	.db 0x3F, 0x00
	.dw 0xC17A, 0x0003          ; score (3 bytes BCD), time (2 bytes)
	.db 0x99, 0x00
	.dw 0xC17D, 0x0001
	.db 0xFF, 0x00
	.dw 0xC17F, 0x0000          ; lives
	.db 0x7F, 0x00
	.dw 0xC1F2, 0x0000          ; coins
	.db 0x7F, 0x00
	.dw 0xC1C1, 0x0000          ; player state (3: dying)
	.db 0x07, 0x00
	.dw 0xD000, 0x000F          ; objects: status
	.db 0x01, 0x00
	.dw 0xD00F, 0x000F          ; ids (fireball 0x0D, fire bars 0x0F-0x16 among them)
	.db 0x1F, 0x00
	.dw 0xD01E, 0x007F          ; positions, speeds
	.db 0xFF, 0x00
	.dw 0xD01E, 0x003F
	.db 0x07, 0x00
	.dw 0xD09E, 0x01FF          ; the other fields
	.db 0xFF, 0x00
	.dw 0xFE00, 0x007F          ; objects on screen
	.db 0xFF, 0x00
	.dw 0xFE80, 0x001F
	.db 0xFF, 0x00
	.dw 0xFE00, 0x007F
	.db 0x7F, 0x20
	.dw 0x0000

	; ROM bank 3, 6D16: the metatiles' interaction types
	.org 0xED16
interaction_types:
	.db 4,0,0,18,20,7,0,0,3,9,18,0,19,1,6,9
	.db 2,3,7,6,0,18,18,0,1,20,0,10,0,0,0,20
	.db 0,14,5,0,0,0,16,1,0,0,0,21,0,20,0,0
	.db 0,0,3,0,17,14,14,12,0,16,15,0,16,8,3,16
	.db 0,10,0,13,15,2,0,0,21,4,13,0,14,0,1,4
	.db 20,21,0,1,13,0,0,8,19,0,11,5,12,4,22,0
	.db 18,0,0,0,11,21,11,19,17,0,9,16,0,15,0,0
	.db 16,17,21,20,0,9,9,0,15,11,0,0,0,0,0,11
	.db 0,5,19,8,0,0,7,15,0,22,0,12,9,0,19,0
	.db 0,0,17,0,8,5,5,3,0,0,6,0,7,22,17,7
	.db 13,1,0,4,6,16,0,0,12,18,4,0,5,10,15,18
	.db 11,12,0,15,4,0,0,22,10,6,2,19,0,0,13,0
	.db 9,0,14,0,0,12,2,10,8,0,0,7,0,6,0,14
	.db 7,8,12,11,0,0,0,0,0,2,0,0,2,17,0,2
	.db 0,19,10,22,1,0,21,6,0,13,22,3,0,0,10,0
	.db 0,0,0,0,22,0,0,17,5,0,20,14,21,13,8,0
