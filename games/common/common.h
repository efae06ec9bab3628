/* Shared hardware definitions and helpers for the emurust games. */
#ifndef GAMES_COMMON_H
#define GAMES_COMMON_H
#include <stdint.h>

#define REG(a) (*(volatile uint8_t *)(a))
#define P1   REG(0xFF00)
#define DIV  REG(0xFF04)
#define TIMA REG(0xFF05)
#define TMA  REG(0xFF06)
#define TAC  REG(0xFF07)
#define IF   REG(0xFF0F)
#define LCDC REG(0xFF40)
#define STAT REG(0xFF41)
#define SCY  REG(0xFF42)
#define SCX  REG(0xFF43)
#define LY   REG(0xFF44)
#define LYC  REG(0xFF45)
#define BGP  REG(0xFF47)
#define OBP0 REG(0xFF48)
#define OBP1 REG(0xFF49)
#define WY   REG(0xFF4A)
#define WX   REG(0xFF4B)
#define IE   REG(0xFFFF)

#define MAP0 ((volatile uint8_t *)0x9800)
#define MAP1 ((volatile uint8_t *)0x9C00)
#define VRAM_TILES ((volatile uint8_t *)0x8000)

/* LCDC bits */
#define LCD_ON   0x80
#define WIN_MAP1 0x40
#define WIN_ON   0x20
#define TILES8000 0x10
#define OBJ16    0x04
#define OBJ_ON   0x02
#define BG_ON    0x01

/* OAM attribute bits */
#define ATTR_BEHIND_BG 0x80
#define ATTR_OBP1      0x10
#define ATTR_FLIPX     0x20

/* joypad bits as returned by pad_read(): low nibble d-pad, high nibble buttons */
#define PAD_RIGHT 0x01
#define PAD_LEFT  0x02
#define PAD_UP    0x04
#define PAD_DOWN  0x08
#define PAD_A     0x10
#define PAD_B     0x20
#define PAD_SELECT 0x40
#define PAD_START 0x80

/* State every game keeps at 0xC000 so RL code can read rewards (see README). */
typedef struct {
    uint16_t score;      /* C000 binary u16 little endian */
    uint8_t lives;       /* C002 */
    uint8_t game_over;   /* C003 0/1 */
    uint16_t frames;     /* C004 VBlank count since power-on, u16 LE (wraps) */
    uint8_t player_x;    /* C006 screen pixel x of the player's top-left */
    uint8_t player_y;    /* C007 screen pixel y of the player's top-left */
    uint8_t state;       /* C008 0 title, 1 playing, 2 game over */
    uint16_t hiscore;    /* C009 best score (u16 LE) */
    uint16_t rng;        /* C00B xorshift state */
    uint8_t level;       /* C00D difficulty level, starts at 1 */
    uint8_t pad;         /* C00E buttons held (debounced) */
    uint8_t pad_new;     /* C00F buttons newly pressed this frame */
} gstate_t;

#define ST_TITLE 0
#define ST_PLAY 1
#define ST_OVER 2

gstate_t __at(0xC000) G;
uint8_t __at(0xC100) shadow_oam[160];   /* page aligned: DMA source 0xC100 */

/* set by crt0 */
extern volatile uint8_t vbl_flag;
extern volatile uint16_t timer_ticks;
extern uint8_t base_lcdc, base_scx, base_scy, base_bgp, win_x, win_y;
extern uint8_t split_n;
extern uint8_t split_tab[21];

void wait_vbl(void);
void lcd_off(void);
void lcd_on(void);
void pad_update(void);
uint8_t rnd(void);
void rng_mix(uint8_t v);
void set_bank(uint8_t b);
void vcopy(volatile uint8_t *dst, const uint8_t *src, uint16_t n);
void vfill(volatile uint8_t *dst, uint8_t v, uint16_t n);
void put_text(volatile uint8_t *map, uint8_t x, uint8_t y, const char *s);
void put_num(volatile uint8_t *map, uint8_t x, uint8_t y, uint16_t v, uint8_t digits);
void set_split(uint8_t i, uint8_t line, uint8_t lcdc, uint8_t scx, uint8_t scy, uint8_t bgp);
void hw_init(void);
void oam_clear(void);
void oam_set(uint8_t i, uint8_t x, uint8_t y, uint8_t tile, uint8_t attr);
uint8_t char_tile(char c);

/* font tiles occupy 0..FONT_N-1: ' ', 0-9, A-Z, ':', '-', '!' */
#define FONT_N 40


/* deferred VRAM writes, flushed right after VBlank starts */
void vq_put(volatile uint8_t *addr, uint8_t v);
void vq_flush(void);
void fmt5(char *dst, uint16_t v);
void hud_fill(char *hud);
#endif
