/* DODGE (MBC1): steer a ship at the bottom of a vertically scrolling starfield,
 * dodge falling rocks, shoot them with A for points. 3 lives. */
#include "common.h"
#include "assets.h"

#define NROCK 8
#define SHIP_Y_MIN 64
#define SHIP_Y_MAX 128
/* game-specific state right after the common block, also at fixed addresses */
typedef struct {
    uint8_t rx[NROCK];      /* C010 rock screen x */
    uint16_t ry[NROCK];     /* C018 rock y in 1/16 px (y>>4 = screen y) */
    uint8_t rspd[NROCK];    /* C028 speed in 1/16 px per frame, 0 = slot free */
    uint8_t rtile[NROCK];   /* C030 */
    uint8_t bullet_x;       /* C038 */
    uint8_t bullet_y;       /* C039 0 = no bullet */
    uint8_t invuln;         /* C03A frames of invulnerability left */
    uint8_t spawn_timer;    /* C03B */
    uint8_t wave_pos;       /* C03C index into the bank-3 wave table */
    uint8_t star_scy;       /* C03D starfield scroll */
    uint16_t last_tick;     /* C03E timer tick at last score-over-time */
} dodge_t;
dodge_t __at(0xC010) D;

static char hud[20];
static uint8_t hud_dirty;

static void hud_prepare(void)
{
    uint8_t i;
    const char *t;
    if (G.state == ST_OVER) {
        t = "GAME OVER - START   ";
        for (i = 0; i < 20; i++)
            hud[i] = (char)char_tile(t[i]);
    } else {
        hud_fill(hud);
    }
    hud_dirty = 1;
}

static void draw_starfield(void)
{
    uint16_t i;
    uint8_t r, x, y;
    vfill(MAP0, 0, 1024);
    for (i = 0; i < 110; i++) {
        r = rnd();
        MAP0[((uint16_t)(rnd() & 3) << 8) | r] = (r & 3) ? 40 : 41;
    }
    /* a few 2x2 nebulae: rocks (BG-priority sprites) slide behind them */
    for (i = 0; i < 6; i++) {
        x = rnd() & 31;
        y = rnd() & 31;
        MAP0[(y << 5) | x] = 42;
        MAP0[(y << 5) | ((x + 1) & 31)] = 43;
        MAP0[(((y + 1) & 31) << 5) | x] = 44;
        MAP0[(((y + 1) & 31) << 5) | ((x + 1) & 31)] = 45;
    }
}

static void title_screen(void)
{
    lcd_off();
    draw_starfield();
    put_text(MAP0, 7, 6, "DODGE");
    put_text(MAP0, 4, 10, "PRESS START");
    put_text(MAP0, 2, 12, "A FIRE  DPAD MOVE");
    vfill(MAP1, 0, 32);
    oam_clear();
    G.state = ST_TITLE;
    base_scy = 0;
    base_lcdc = BG_ON | TILES8000;  /* no window, no sprites on the title */
    split_n = 0;
    split_tab[0] = 0xFF;
    lcd_on();
}

static void new_game(void)
{
    uint8_t i;
    lcd_off();
    draw_starfield();   /* RNG already seeded by START timing, so the sky differs */
    G.score = 0;
    G.lives = 3;
    G.game_over = 0;
    G.level = 1;
    G.player_x = 72;
    G.player_y = SHIP_Y_MAX;
    G.state = ST_PLAY;
    for (i = 0; i < NROCK; i++)
        D.rspd[i] = 0;
    D.bullet_y = 0;
    D.invuln = 60;
    D.spawn_timer = 30;
    D.wave_pos = rnd() & 63;
    D.last_tick = timer_ticks;
    /* lines 0-7: window HUD, no sprites; line 8+: starfield with sprites */
    base_lcdc = BG_ON | TILES8000 | WIN_ON | WIN_MAP1;
    win_x = 7;
    win_y = 0;
    split_n = 1;
    set_split(0, 8, BG_ON | TILES8000 | OBJ_ON, 0, D.star_scy, 0xE4);
    split_tab[5] = 0xFF;
    hud_prepare();
    vcopy(MAP1, (const uint8_t *)hud, 20);
    lcd_on();
}

static void spawn_rock(void)
{
    uint8_t i;
    const uint8_t *w;
    for (i = 0; i < NROCK; i++)
        if (!D.rspd[i])
            break;
    if (i == NROCK)
        return;
    set_bank(WAVES_BANK);
    w = WAVES + ((uint16_t)D.wave_pos << 2);
    D.rx[i] = (uint8_t)(w[0] + (rnd() & 15) - 8);
    if (D.rx[i] > 152)
        D.rx[i] = 152;
    D.ry[i] = 8 << 4;
    D.rspd[i] = w[1] + (G.level << 2);
    D.rtile[i] = w[3];
    D.spawn_timer = w[2] > G.level * 2 + 6 ? w[2] - G.level * 2 : 6;
    D.wave_pos = (D.wave_pos + 1 + (rnd() & 3)) & 63;
}

static void play_frame(void)
{
    uint8_t i, x, y, px, py;

    /* score rises with the 64 Hz timer interrupt: +1 every 32 ticks */
    while ((uint16_t)(timer_ticks - D.last_tick) >= 32) {
        D.last_tick += 32;
        G.score++;
    }
    if (G.pad & PAD_LEFT && G.player_x > 8) G.player_x -= 2;
    if (G.pad & PAD_RIGHT && G.player_x < 144) G.player_x += 2;
    if (G.pad & PAD_UP && G.player_y > SHIP_Y_MIN) G.player_y -= 1;
    if (G.pad & PAD_DOWN && G.player_y < SHIP_Y_MAX) G.player_y += 1;
    if (G.pad_new & PAD_A && !D.bullet_y) {
        D.bullet_x = G.player_x + 4;
        D.bullet_y = G.player_y;
    }
    if (D.bullet_y) {
        D.bullet_y = D.bullet_y > 12 ? D.bullet_y - 4 : 0;
    }
    if (!--D.spawn_timer)
        spawn_rock();
    if (D.invuln)
        D.invuln--;
    px = G.player_x;
    py = G.player_y;
    for (i = 0; i < NROCK; i++) {
        if (!D.rspd[i])
            continue;
        D.ry[i] += D.rspd[i];
        y = (uint8_t)(D.ry[i] >> 4);
        x = D.rx[i];
        if (y >= 144) {
            D.rspd[i] = 0;  /* dodged */
            continue;
        }
        /* bullet hit: +10 */
        if (D.bullet_y && (uint8_t)(D.bullet_x - x + 2) < 10 && (uint8_t)(D.bullet_y - y + 4) < 12) {
            D.rspd[i] = 0;
            D.bullet_y = 0;
            G.score += 10;
            continue;
        }
        /* ship hit (16x8 ship, 8x8 rock, forgiving box) */
        if (!D.invuln && (uint8_t)(x - px + 6) < 20 && (uint8_t)(y - py + 5) < 11) {
            D.rspd[i] = 0;
            D.invuln = 90;
            if (--G.lives == 0) {
                G.game_over = 1;
                G.state = ST_OVER;
                if (G.score > G.hiscore)
                    G.hiscore = G.score;
            }
        }
    }
    G.level = (uint8_t)(1 + G.score / 64);
    if (G.level > 9)
        G.level = 9;
    D.star_scy -= 1 + (G.level >> 2);  /* stars drift down, faster with level */
}

static void build_oam(void)
{
    uint8_t i, n = 0;
    oam_clear();
    if (G.state != ST_TITLE && !(D.invuln & 4)) {
        oam_set(n++, G.player_x, G.player_y, 64, 0);
        oam_set(n++, G.player_x + 8, G.player_y, 65, 0);
    }
    if (D.bullet_y)
        oam_set(n++, D.bullet_x, D.bullet_y, 68, 0);
    for (i = 0; i < NROCK; i++)
        if (D.rspd[i])  /* rocks: OBP1, drawn behind non-zero BG (nebulae, stars) */
            oam_set(n++, D.rx[i], (uint8_t)(D.ry[i] >> 4), D.rtile[i], ATTR_OBP1 | ATTR_BEHIND_BG | ((i & 1) ? ATTR_FLIPX : 0));
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
    title_screen();
    for (;;) {
        wait_vbl();
        if (hud_dirty) {
            vcopy(MAP1, (const uint8_t *)hud, 20);
            hud_dirty = 0;
        }
        pad_update();
        if (G.state == ST_TITLE) {
            rng_mix(DIV);   /* the longer you wait, the different the game */
            base_scy--;
            if (G.pad_new & PAD_START)
                new_game();
        } else if (G.state == ST_PLAY) {
            play_frame();
            split_tab[3] = D.star_scy;  /* scroll applies below the HUD split */
            hud_prepare();
        } else {
            if (G.pad_new & PAD_START) {
                rng_mix(DIV);
                new_game();
            }
        }
        build_oam();
    }
}
