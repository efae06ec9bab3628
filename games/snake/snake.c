/* SNAKE (MBC3 + battery RAM): eat apples, grow, don't hit walls or yourself.
 * 3 lives; top-5 high-score table persists in cartridge RAM. */
#include "common.h"
#include "assets.h"

#define W 20
#define H 17            /* rows 0-16 are the board, line 136+ is the HUD */
#define T_BODY 40
#define T_WALL 41
#define T_FLOOR 42
#define MAXLEN 128

typedef struct {
    uint8_t hx, hy;         /* C010 head cell */
    uint8_t dir;            /* C012 0 right 1 left 2 up 3 down */
    uint8_t next_dir;       /* C013 queued direction */
    uint8_t len;            /* C014 */
    uint8_t fx, fy;         /* C015 apple cell */
    uint8_t period;         /* C017 timer ticks (64 Hz) per step */
    uint16_t last_step;     /* C018 */
    uint8_t shake;          /* C01A frames of death screen shake */
    uint8_t head_i;         /* C01B ring index of the head */
    uint8_t px, py;         /* C01C previous head cell (for smooth sprite motion) */
} snake_t;
snake_t __at(0xC010) S;

static uint8_t bx[MAXLEN], by[MAXLEN];
static uint8_t occ[W * H];
static char hud[20];

/* ---- battery RAM high-score table: "SNK1", 5 x u16 LE, checksum ---- */
#define SRAM ((volatile uint8_t *)0xA000)
static uint16_t table[5];

static void sram_on(void) { *(volatile uint8_t *)0x0000 = 0x0A; *(volatile uint8_t *)0x4000 = 0; }
static void sram_off(void) { *(volatile uint8_t *)0x0000 = 0x00; }

static void table_load(void)
{
    uint8_t i, sum = 0;
    sram_on();
    for (i = 0; i < 14; i++)
        sum += SRAM[i];
    if (SRAM[0] == 'S' && SRAM[1] == 'N' && SRAM[2] == 'K' && SRAM[3] == '1' && sum == SRAM[14]) {
        for (i = 0; i < 5; i++)
            table[i] = SRAM[4 + 2 * i] | (SRAM[5 + 2 * i] << 8);
    } else {
        for (i = 0; i < 5; i++)
            table[i] = 0;
    }
    sram_off();
    G.hiscore = table[0];
}

static void table_save(void)
{
    uint8_t i, sum = 0;
    sram_on();
    SRAM[0] = 'S'; SRAM[1] = 'N'; SRAM[2] = 'K'; SRAM[3] = '1';
    for (i = 0; i < 5; i++) {
        SRAM[4 + 2 * i] = (uint8_t)table[i];
        SRAM[5 + 2 * i] = (uint8_t)(table[i] >> 8);
    }
    for (i = 0; i < 14; i++)
        sum += SRAM[i];
    SRAM[14] = sum;
    sram_off();
}

static void table_insert(uint16_t s)
{
    uint8_t i, j;
    for (i = 0; i < 5; i++)
        if (s > table[i])
            break;
    if (i == 5)
        return;
    for (j = 4; j > i; j--)
        table[j] = table[j - 1];
    table[i] = s;
    table_save();
    G.hiscore = table[0];
}

static void hud_prepare(void)
{
    hud_fill(hud);
}

static void place_food(void)
{
    uint8_t x, y, tries = 0;
    do {
        x = 1 + rnd() % (W - 2);
        y = 1 + rnd() % (H - 2);
    } while (occ[y * W + x] && ++tries < 100);
    S.fx = x;
    S.fy = y;
}

/* board + snake reset; LCD must be off */
static void reset_board(void)
{
    uint8_t x, y, i;
    volatile uint8_t *row;
    for (y = 0; y < H; y++) {
        row = MAP0 + ((uint16_t)y << 5);
        for (x = 0; x < W; x++) {
            uint8_t wall = (x == 0 || y == 0 || x == W - 1 || y == H - 1);
            row[x] = wall ? T_WALL : ((rnd() & 7) ? 0 : T_FLOOR);
            occ[y * W + x] = wall;
        }
    }
    S.len = 3;
    S.dir = S.next_dir = 0;
    S.head_i = 2;
    for (i = 0; i < 3; i++) {
        bx[i] = 3 + i;
        by[i] = 8;
        occ[8 * W + 3 + i] = 1;
        MAP0[(8 << 5) + 3 + i] = T_BODY;
    }
    S.hx = S.px = 5;
    S.hy = S.py = 8;
    S.last_step = timer_ticks;
    place_food();
}

static void setup_play_screen(void)
{
    base_lcdc = BG_ON | TILES8000 | OBJ_ON | WIN_ON | WIN_MAP1;
    base_bgp = 0xE4;
    win_x = 7;
    win_y = 136;
    /* line 136: HUD row drawn with an inverted palette and without sprites */
    split_n = 1;
    set_split(0, 136, BG_ON | TILES8000 | WIN_ON | WIN_MAP1, 0, 0, 0x1B);
    split_tab[5] = 0xFF;
    hud_prepare();
    vcopy(MAP1, (const uint8_t *)hud, 20);
}

static void new_game(void)
{
    lcd_off();
    G.score = 0;
    G.lives = 3;
    G.game_over = 0;
    G.level = 1;
    G.state = ST_PLAY;
    S.shake = 0;
    reset_board();
    setup_play_screen();
    lcd_on();
}

static void show_table(void)
{
    uint8_t i;
    lcd_off();
    vfill(MAP1, 0, 32 * 18);
    put_text(MAP1, 5, 2, "GAME OVER");
    put_text(MAP1, 4, 4, "SCORE");
    put_num(MAP1, 11, 4, G.score, 5);
    put_text(MAP1, 5, 6, "TOP SCORES");
    for (i = 0; i < 5; i++) {
        put_num(MAP1, 6, 8 + i, i + 1, 1);
        put_num(MAP1, 9, 8 + i, table[i], 5);
    }
    put_text(MAP1, 4, 15, "PRESS START");
    oam_clear();
    win_y = 0;          /* full-screen window */
    split_n = 0;
    split_tab[0] = 0xFF;
    base_scx = base_scy = 0;
    lcd_on();
}

static void title_screen(void)
{
    lcd_off();
    vfill(MAP0, 0, 1024);
    put_text(MAP0, 7, 5, "SNAKE");
    put_text(MAP0, 4, 9, "PRESS START");
    put_text(MAP0, 3, 11, "DPAD TO STEER");
    put_text(MAP0, 6, 14, "HI");
    put_num(MAP0, 9, 14, G.hiscore, 5);
    base_lcdc = BG_ON | TILES8000;
    split_n = 0;
    split_tab[0] = 0xFF;
    G.state = ST_TITLE;
    lcd_on();
}

static void die(void)
{
    G.lives--;
    S.shake = 24;
    if (G.lives == 0) {
        G.game_over = 1;
        G.state = ST_OVER;
        table_insert(G.score);
        show_table();
        return;
    }
    lcd_off();
    reset_board();
    setup_play_screen();
    lcd_on();
}

static void step(void)
{
    uint8_t nx = S.hx, ny = S.hy, grow, tail_i;
    S.dir = S.next_dir;
    if (S.dir == 0) nx++;
    else if (S.dir == 1) nx--;
    else if (S.dir == 2) ny--;
    else ny++;
    grow = (nx == S.fx && ny == S.fy);
    if (!grow) {
        /* tail leaves first, so moving into the old tail cell is legal */
        tail_i = (uint8_t)(S.head_i - S.len + 1) & (MAXLEN - 1);
        occ[by[tail_i] * W + bx[tail_i]] = 0;
        vq_put(MAP0 + ((uint16_t)by[tail_i] << 5) + bx[tail_i], 0);
    }
    if (occ[ny * W + nx]) {
        die();
        return;
    }
    if (grow) {
        if (S.len < MAXLEN - 1)
            S.len++;
        G.score += 10 * G.level;
        G.level = 1 + S.len / 8;
    }
    S.head_i = (S.head_i + 1) & (MAXLEN - 1);
    bx[S.head_i] = nx;
    by[S.head_i] = ny;
    occ[ny * W + nx] = 1;
    vq_put(MAP0 + ((uint16_t)ny << 5) + nx, T_BODY);
    S.px = S.hx;
    S.py = S.hy;
    S.hx = nx;
    S.hy = ny;
    if (grow)
        place_food();
    /* faster as the snake grows */
    S.period = S.len > 40 ? 4 : 10 - S.len / 7;
}

static void play_frame(void)
{
    uint8_t p = G.pad_new;
    /* no reversing into yourself */
    if (p & PAD_RIGHT && S.dir != 1) S.next_dir = 0;
    else if (p & PAD_LEFT && S.dir != 0) S.next_dir = 1;
    else if (p & PAD_UP && S.dir != 3) S.next_dir = 2;
    else if (p & PAD_DOWN && S.dir != 2) S.next_dir = 3;
    if (!S.period)
        S.period = 10;
    /* the 64 Hz timer interrupt paces the snake */
    if ((uint16_t)(timer_ticks - S.last_step) >= S.period) {
        S.last_step = timer_ticks;
        step();
    }
}

static void build_oam(void)
{
    uint8_t hx, hy, f;
    oam_clear();
    if (G.state != ST_PLAY)
        return;
    /* head glides between cells according to the timer phase */
    f = (uint8_t)(timer_ticks - S.last_step);
    if (f > S.period)
        f = S.period;
    f = (uint8_t)(f * 8 / S.period);
    hx = S.px * 8 + (uint8_t)((S.hx - S.px) * f);
    hy = S.py * 8 + (uint8_t)((S.hy - S.py) * f);
    G.player_x = hx;
    G.player_y = hy;
    oam_set(0, hx, hy, 64, 0);
    oam_set(1, S.fx * 8, S.fy * 8 - ((G.frames >> 3) & 1), 65, ATTR_OBP1);
}

void main(void)
{
    lcd_off();
    set_bank(FONT_TILES_BANK);
    vcopy(VRAM_TILES, FONT_TILES, FONT_TILES_LEN);
    vcopy(VRAM_TILES + 40 * 16, BG_TILES, BG_TILES_LEN);
    vcopy(VRAM_TILES + 64 * 16, SPR_TILES, SPR_TILES_LEN);
    hw_init();
    table_load();
    title_screen();
    for (;;) {
        wait_vbl();
        vq_flush();
        if (G.state == ST_PLAY)
            vcopy(MAP1, (const uint8_t *)hud, 20);
        pad_update();
        if (G.state == ST_TITLE) {
            rng_mix(DIV);
            if (G.pad_new & PAD_START)
                new_game();
        } else if (G.state == ST_PLAY) {
            play_frame();
            /* death shake: wobble the background scroll (HUD window stays put) */
            if (S.shake) {
                S.shake--;
                base_scx = (S.shake & 2) ? 2 : 0;
                base_scy = (S.shake & 4) ? 1 : 0;
            }
            hud_prepare();
        } else if (G.pad_new & PAD_START) {
            rng_mix(DIV);
            new_game();
        }
        build_oam();
    }
}
