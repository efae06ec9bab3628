/* Runtime helpers shared by the games: VBlank wait, joypad, RNG, banking, text. */
#include "common.h"


void wait_vbl(void)
{
    vbl_flag = 0;
    /* STAT and timer interrupts also wake HALT, so loop until VBlank ran */
    while (!vbl_flag) {
        __asm__("halt");
    }
}

void lcd_off(void)
{
    if (!(LCDC & LCD_ON))
        return;
    while (LY < 144)
        ;
    LCDC = 0;
}

void lcd_on(void)
{
    LCDC = base_lcdc | LCD_ON;
}

static uint8_t pad_read(void)
{
    uint8_t d, b, i;
    /* lines are active low and take a few cycles to settle after selecting a
     * group: read each group several times and OR the raw values, so a key only
     * counts as pressed if every read saw it (glitch filter / debounce) */
    P1 = 0x20;              /* P14 low: d-pad */
    d = P1;
    d |= P1;
    P1 = 0x10;              /* P15 low: buttons */
    b = P1;
    for (i = 0; i < 4; i++)
        b |= P1;
    P1 = 0x30;              /* deselect */
    return (uint8_t)(~((b << 4) | (d & 0x0F)));
}

void pad_update(void)
{
    uint8_t cur = pad_read();
    G.pad_new = cur & (uint8_t)~G.pad;   /* edge: pressed this frame, not last */
    G.pad = cur;
    if (G.pad_new)
        rng_mix(DIV);       /* button timing feeds the RNG */
}

void rng_mix(uint8_t v)
{
    G.rng ^= ((uint16_t)v << 8) | (uint8_t)(v ^ 0x5A);
    if (G.rng == 0)
        G.rng = 0xACE1;
}

void set_bank(uint8_t b)
{
    /* 0x2000-0x2FFF selects the low 8 bits of the ROM bank on MBC1/3/5 */
    *(volatile uint8_t *)0x2000 = b;
    *(volatile uint8_t *)0x3000 = 0;    /* MBC5 bank bit 8; ignored by MBC1 (same reg range) */
    *(volatile uint8_t *)0x2000 = b;
}

uint8_t char_tile(char c)
{
    if (c >= '0' && c <= '9')
        return (uint8_t)(c - '0' + 1);
    if (c >= 'A' && c <= 'Z')
        return (uint8_t)(c - 'A' + 11);
    if (c == ':')
        return 37;
    if (c == '-')
        return 38;
    if (c == '!')
        return 39;
    return 0;
}

void put_text(volatile uint8_t *map, uint8_t x, uint8_t y, const char *s)
{
    volatile uint8_t *p = map + ((uint16_t)y << 5) + x;
    while (*s)
        *p++ = char_tile(*s++);
}

void put_num(volatile uint8_t *map, uint8_t x, uint8_t y, uint16_t v, uint8_t digits)
{
    volatile uint8_t *p = map + ((uint16_t)y << 5) + x + digits;
    while (digits--) {
        *--p = (uint8_t)(v % 10 + 1);
        v /= 10;
    }
}

void set_split(uint8_t i, uint8_t line, uint8_t lcdc, uint8_t scx, uint8_t scy, uint8_t bgp)
{
    uint8_t *e = &split_tab[i * 5];
    e[0] = line - 1;        /* ISR fires on the line before and waits for its HBlank */
    e[1] = lcdc | LCD_ON;
    e[2] = scx;
    e[3] = scy;
    e[4] = bgp;
}

void hw_init(void)
{
    uint8_t i;
    for (i = 0; i < 21; i++)
        split_tab[i] = 0xFF;
    split_n = 0;
    base_bgp = 0xE4;
    BGP = 0xE4;
    OBP0 = 0xE4;    /* player palette: light, dark, black */
    OBP1 = 0x90;    /* enemy palette: light, light, black */
    /* timer: 4096 Hz input / 64 = 64 Hz game tick */
    TMA = 192;
    TIMA = TMA;
    TAC = 0x04;
    STAT = 0x40;    /* LYC=LY interrupt source for the splits */
    G.rng = 0xACE1;
    G.level = 1;
    IF = 0;
    IE = 0x07;      /* VBlank, STAT, Timer */
    __asm__("ei");
}

void oam_set(uint8_t i, uint8_t x, uint8_t y, uint8_t tile, uint8_t attr)
{
    uint8_t *o = &shadow_oam[i << 2];
    o[0] = y + 16;
    o[1] = x + 8;
    o[2] = tile;
    o[3] = attr;
}

#define VQ_MAX 40
static volatile uint8_t *vq_addr[VQ_MAX];
static uint8_t vq_val[VQ_MAX];
static uint8_t vq_n;

void vq_put(volatile uint8_t *addr, uint8_t v)
{
    if (vq_n < VQ_MAX) {
        vq_addr[vq_n] = addr;
        vq_val[vq_n] = v;
        vq_n++;
    }
}

void vq_flush(void)
{
    uint8_t i;
    for (i = 0; i < vq_n; i++)
        *vq_addr[i] = vq_val[i];
    vq_n = 0;
}

/* 5 decimal digits as font tile indices; subtraction avoids slow 16-bit division */
void fmt5(char *dst, uint16_t v)
{
    static const uint16_t pow10[4] = {10000, 1000, 100, 10};
    uint8_t i, d;
    for (i = 0; i < 4; i++) {
        d = 1;
        while (v >= pow10[i]) {
            v -= pow10[i];
            d++;
        }
        *dst++ = (char)d;
    }
    *dst = (char)(v + 1);
}

/* "SC 00000 HI 00000 L3" */
void hud_fill(char *hud)
{
    hud[0] = (char)char_tile('S');
    hud[1] = (char)char_tile('C');
    hud[2] = 0;
    fmt5(hud + 3, G.score);
    hud[8] = 0;
    hud[9] = (char)char_tile('H');
    hud[10] = (char)char_tile('I');
    hud[11] = 0;
    fmt5(hud + 12, G.hiscore);
    hud[17] = 0;
    hud[18] = (char)char_tile('L');
    hud[19] = (char)(G.lives + 1);
}
