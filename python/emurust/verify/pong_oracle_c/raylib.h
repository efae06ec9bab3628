/* Minimal stand-in for raylib.h so the reference's pong.h compiles without raylib: only the
 * types, constants and functions its client (make_client/render) names, as no-ops. emurust's
 * own file; the oracle never renders. */
#ifndef EMURUST_RAYLIB_STUB_H
#define EMURUST_RAYLIB_STUB_H

typedef struct Color { unsigned char r, g, b, a; } Color;
typedef struct Vector2 { float x, y; } Vector2;
typedef struct Rectangle { float x, y, width, height; } Rectangle;
typedef struct Texture2D { unsigned int id; int width, height, mipmaps, format; } Texture2D;

#define WHITE ((Color){255, 255, 255, 255})
#define KEY_ESCAPE 256

static inline void InitWindow(int w, int h, const char *t) { (void)w; (void)h; (void)t; }
static inline void SetTargetFPS(int fps) { (void)fps; }
static inline Texture2D LoadTexture(const char *f) { (void)f; Texture2D t = {0}; return t; }
static inline void CloseWindow(void) {}
static inline int IsKeyDown(int k) { (void)k; return 0; }
static inline void BeginDrawing(void) {}
static inline void EndDrawing(void) {}
static inline void ClearBackground(Color c) { (void)c; }
static inline void DrawRectangle(int x, int y, int w, int h, Color c) { (void)x; (void)y; (void)w; (void)h; (void)c; }
static inline void DrawTexturePro(Texture2D t, Rectangle s, Rectangle d, Vector2 o, float r, Color c) {
    (void)t; (void)s; (void)d; (void)o; (void)r; (void)c;
}
static inline const char *TextFormat(const char *f, ...) { return f; }
static inline int MeasureText(const char *t, int s) { (void)t; (void)s; return 0; }
static inline void DrawText(const char *t, int x, int y, int s, Color c) { (void)t; (void)x; (void)y; (void)s; (void)c; }

#endif
