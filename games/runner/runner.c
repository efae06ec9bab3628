/* RUNNER (MBC5 + battery RAM): auto-running side scroller. Jump (A) over cacti
 * and low birds, grab coins. Three parallax bands via LYC splits. 3 lives. */
#include "common.h"
#include "assets.h"

#define PLAYER_X 24
#define GROUND_Y 112            /* sprite top when standing (8x16 sprite, feet at 128) */
#define LCDC_PLAY (BG_ON | TILES8000 | OBJ_ON | OBJ16)

typedef struct {
    uint16_t cam;           /* C010 camera x in pixels (fast layer SCX = low byte) */
    uint8_t cam_frac;       /* C012 1/16 px */
    uint8_t speed;          /* C013 1/16 px per frame */
    uint16_t py16;          /* C014 player y in 1/16 px */
    int16_t vy;             /* C016 1/16 px per frame, negative = up */
    uint8_t on_ground;      /* C018 */
    uint8_t invuln;         /* C019 */
    uint16_t next_col;      /* C01A next world column to stream into the map */
    uint8_t chunk;          /* C01C current level chunk (bank 3) */
    uint8_t chunk_pos;      /* C01D column within the chunk */
    uint8_t bird_x;         /* C01E screen x, 0 = no bird */
    uint8_t bird_y;         /* C01F */
    uint16_t bird_tick;     /* C020 timer tick when the next bird may spawn */
    uint16_t dist_mark;     /* C022 cam value of the last distance point */
    uint16_t best;          /* C024 best score, mirrored from cartridge RAM */
} runner_t;
runner_t __at(0xC010) R;

static uint8_t col_data[32];    /* per map column: bits 0-1 cactus height, bit 2 coin */
static char hud[20];

#define SRAM ((volatile uint8_t *)0xA000)

static void best_load(void)
{
    *(volatile uint8_t *)0x0000 = 0x0A;     /* enable cartridge RAM */
    *(volatile uint8_t *)0x4000 = 0;        /* RAM bank 0 */
    if (SRAM[0] == 'R' && SRAM[1] == 'U' && SRAM[2] == 'N' && SRAM[3] == '1' &&
        (uint8_t)(SRAM[4] ^ SRAM[5] ^ 0xA5) == SRAM[6])
        G.hiscore = SRAM[4] | (SRAM[5] << 8);
    else
        G.hiscore = 0;
    *(volatile uint8_t *)0x0000 = 0;
    R.best = G.hiscore;
}

static void best_save(void)
{
    *(volatile uint8_t *)0x0000 = 0x0A;
    *(volatile uint8_t *)0x4000 = 0;
    SRAM[0] = 'R'; SRAM[1] = 'U'; SRAM[2] = 'N'; SRAM[3] = '1';
    SRAM[4] = (uint8_t)G.hiscore;
    SRAM[5] = (uint8_t)(G.hiscore >> 8);
    SRAM[6] = (uint8_t)(SRAM[4] ^ SRAM[5] ^ 0xA5);
    *(volatile uint8_t *)0x0000 = 0;
    R.best = G.hiscore;
}

static void hud_prepare(void)
{
    uint8_t i;
    const char *t;
    if (G.state == ST_OVER) {
        t = "GAME OVER - START   ";
        for (i = 0; i < 20; i++)
            hud[i] = (char)char_tile(t[i]);
        return;
    }
    hud_fill(hud);
}

/* write one world column of the fast layer (rows 13-15) from the bank-3 chunk data */
static void stream_column(void)
{
    uint8_t d, h, mc = (uint8_t)R.next_col & 31;
    volatile uint8_t *p = MAP0 + (13 << 5) + mc;
    set_bank(CHUNKS_BANK);
    d = CHUNKS[((uint16_t)R.chunk << 5) + R.chunk_pos];
    if (R.next_col < 24)
        d = 0;              /* a clear run-up at the start */
    if (++R.chunk_pos == 32) {
        R.chunk_pos = 0;
        R.chunk = rnd() & 15;
    }
    col_data[mc] = d;
    h = d & 3;
    vq_put(p, (d & 4) ? 49 : 0);
    vq_put(p + 32, h == 2 ? 47 : 0);
    vq_put(p + 64, h == 2 ? 48 : (h == 1 ? 47 : 0));
    R.next_col++;
}

static void draw_world(void)
{
    uint8_t i;
    set_bank(PARALLAX_MAP_BANK);
    vfill(MAP0, 0, 1024);
    vcopy(MAP0 + 32, PARALLAX_MAP, PARALLAX_MAP_LEN);
    for (i = 0; i < 32; i++)
        col_data[i] = 0;
}

static void title_screen(void)
{
    lcd_off();
    R.cam = 0;
    draw_world();
    put_text(MAP0, 7, 1, "RUNNER");
    put_text(MAP0, 4, 3, "PRESS START");
    put_text(MAP0, 1, 14, "A JUMP  GET COINS");
    oam_clear();
    base_lcdc = BG_ON | TILES8000;
    base_scx = 0;
    split_n = 0;
    split_tab[0] = 0xFF;
    G.state = ST_TITLE;
    lcd_on();
}

static void new_game(void)
{
    lcd_off();
    draw_world();
    R.cam = 0;
    R.cam_frac = 0;
    R.speed = 24;
    R.py16 = GROUND_Y << 4;
    R.vy = 0;
    R.on_ground = 1;
    R.invuln = 0;
    R.next_col = 0;
    R.chunk = rnd() & 15;
    R.chunk_pos = 0;
    R.bird_x = 0;
    R.bird_tick = timer_ticks + 192;
    R.dist_mark = 0;
    while (R.next_col < 22) {
        stream_column();
        vq_flush();         /* LCD is off: VRAM is free */
    }
    G.score = 0;
    G.lives = 3;
    G.game_over = 0;
    G.level = 1;
    G.player_x = PLAYER_X;
    G.player_y = GROUND_Y;
    G.state = ST_PLAY;
    /* HUD window on lines 0-7 (sprites off there), then three scroll bands */
    base_lcdc = BG_ON | TILES8000 | WIN_ON | WIN_MAP1 | OBJ16;
    base_scx = 0;
    base_scy = 0;
    win_x = 7;
    win_y = 0;
    split_n = 3;
    set_split(0, 8, LCDC_PLAY, 0, 0, 0xE4);
    set_split(1, 72, LCDC_PLAY, 0, 0, 0xE4);
    set_split(2, 104, LCDC_PLAY, 0, 0, 0xE4);
    split_tab[15] = 0xFF;
    hud_prepare();
    vcopy(MAP1, (const uint8_t *)hud, 20);
    lcd_on();
}

static void lose_life(void)
{
    R.invuln = 90;
    if (--G.lives == 0) {
        G.game_over = 1;
        G.state = ST_OVER;
        if (G.score > G.hiscore) {
            G.hiscore = G.score;
            best_save();
        }
    }
}

static void play_frame(void)
{
    uint8_t py, c, d, h, top, i;
    uint16_t wc;
    uint16_t step = (uint16_t)R.cam_frac + R.speed;

    R.cam += step >> 4;
    R.cam_frac = step & 15;
    while ((uint16_t)((R.cam >> 3) + 21) >= R.next_col)
        stream_column();
    /* distance points: +1 per 16 px */
    while ((uint16_t)(R.cam - R.dist_mark) >= 16) {
        R.dist_mark += 16;
        G.score++;
    }
    /* jump: A on the ground; releasing A early cuts the jump short */
    if (R.on_ground && (G.pad_new & PAD_A)) {
        R.vy = -56;
        R.on_ground = 0;
    }
    if (!R.on_ground) {
        if (R.vy < -16 && !(G.pad & PAD_A))
            R.vy = -16;
        R.vy += 3;
        R.py16 += R.vy;
        if (R.py16 >= (GROUND_Y << 4)) {
            R.py16 = GROUND_Y << 4;
            R.vy = 0;
            R.on_ground = 1;
        }
    }
    py = (uint8_t)(R.py16 >> 4);
    G.player_y = py;
    if (R.invuln)
        R.invuln--;
    /* collide with the two map columns under the player's narrow hitbox */
    for (i = 0; i < 2; i++) {
        wc = (R.cam + PLAYER_X + 2 + i * 4) >> 3;
        c = (uint8_t)wc & 31;
        d = col_data[c];
        if ((d & 4) && py < 110) {
            col_data[c] = d & 3;
            vq_put(MAP0 + (13 << 5) + c, 0);
            G.score += 10;
        }
        h = d & 3;
        top = 128 - 8 * h;
        if (h && !R.invuln && (uint8_t)(py + 16) > (uint8_t)(top + 2))
            lose_life();
    }
    /* birds: spawned on the 64 Hz timer clock; low ones must be jumped */
    if (!R.bird_x && (int16_t)(timer_ticks - R.bird_tick) >= 0) {
        R.bird_x = 168;
        R.bird_y = (rnd() & 1) ? 108 : 80;
    }
    if (R.bird_x) {
        R.bird_x -= 2;
        if (R.bird_x < 4) {
            R.bird_x = 0;
            G.score += 5;   /* survived it */
            R.bird_tick = timer_ticks + 96 + (rnd() & 127);
        } else if (!R.invuln && (uint8_t)(R.bird_x - PLAYER_X + 6) < 12 &&
                   (uint8_t)(R.bird_y + 12 - py) < 26) {
            lose_life();
        }
    }
    G.level = (uint8_t)(1 + G.score / 128);
    if (G.level > 8)
        G.level = 8;
    R.speed = 20 + G.level * 4;
}

static void build_oam(void)
{
    uint8_t t;
    oam_clear();
    if (G.state == ST_TITLE)
        return;
    if (!(R.invuln & 4)) {
        /* legs alternate on the timer clock (8 Hz) while running */
        t = !R.on_ground ? 66 : ((timer_ticks & 8) ? 64 : 66);
        oam_set(0, PLAYER_X, G.player_y, t, 0);
    }
    if (R.bird_x) {
        /* high birds fly behind the hills (BG priority), all birds use OBP1 */
        oam_set(1, R.bird_x - 8, R.bird_y, 68, ATTR_OBP1 | (R.bird_y < 100 ? ATTR_BEHIND_BG : 0));
    }
}

void main(void)
{
    lcd_off();
    set_bank(SPR_TILES_BANK);
    vcopy(VRAM_TILES + 64 * 16, SPR_TILES, SPR_TILES_LEN);
    set_bank(FONT_TILES_BANK);
    vcopy(VRAM_TILES, FONT_TILES, FONT_TILES_LEN);
    vcopy(VRAM_TILES + 40 * 16, BG_TILES, BG_TILES_LEN);
    hw_init();
    best_load();
    title_screen();
    for (;;) {
        wait_vbl();
        vq_flush();
        if (G.state != ST_TITLE)
            vcopy(MAP1, (const uint8_t *)hud, 20);
        pad_update();
        if (G.state == ST_TITLE) {
            rng_mix(DIV);
            if (G.pad_new & PAD_START)
                new_game();
        } else if (G.state == ST_PLAY) {
            play_frame();
            /* parallax: mountains 1/4, hills 1/2, ground full speed */
            split_tab[2] = (uint8_t)(R.cam >> 2);
            split_tab[7] = (uint8_t)(R.cam >> 1);
            split_tab[12] = (uint8_t)R.cam;
            hud_prepare();
        } else if (G.pad_new & PAD_START) {
            rng_mix(DIV);
            new_game();
        }
        build_oam();
    }
}
