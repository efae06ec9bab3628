/* emurust's oracle shim around PufferLib's pong.h (compiled at test time, loaded with ctypes).
 *
 * Each oracle game owns a glibc random_r stream (TYPE_3, 128 bytes of state, as rand() uses)
 * seeded like srand(seed): pong.h's rand() calls are routed to the stream of the game being
 * stepped, so games are independent as in emurust-pong, and one game equals the reference run
 * alone after srand(seed). Nothing else of pong.h is changed. */
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <string.h>

static struct random_data *oracle_current_rng;

static int oracle_rand(void) {
    int32_t r;
    random_r(oracle_current_rng, &r);
    return r;
}

#define rand() oracle_rand()
#include "pong.h"
#undef rand

/* Only the oracle_* functions are exported (the library is built with -fvisibility=hidden):
 * pong.h's init/reset/step must not be interposed by same-named symbols of the process. */
#define EXPORT __attribute__((visibility("default")))

typedef struct OracleGame {
    Pong env;
    struct random_data rng;
    char rng_state[128];
} OracleGame;

EXPORT size_t oracle_sizeof_pong(void) { return sizeof(Pong); }

EXPORT OracleGame *oracle_new(const Pong *config, unsigned int seed) {
    OracleGame *g = (OracleGame *)calloc(1, sizeof(OracleGame));
    if (!g) return NULL;
    g->env = *config;
    allocate(&g->env);
    /* random_data must start zeroed (glibc's initstate_r reads its fields). */
    memset(&g->rng, 0, sizeof g->rng);
    initstate_r(seed, g->rng_state, sizeof g->rng_state, &g->rng);
    return g;
}

EXPORT void oracle_free(OracleGame *g) {
    if (!g) return;
    free_allocated(&g->env);
    free(g);
}

EXPORT Pong *oracle_pong(OracleGame *g) { return &g->env; }

EXPORT void oracle_reset(OracleGame *g) {
    oracle_current_rng = &g->rng;
    reset(&g->env);
}

EXPORT void oracle_step(OracleGame *g, int action) {
    oracle_current_rng = &g->rng;
    g->env.actions[0] = action;
    step(&g->env);
}

/* Step games[i] with actions[i]; copy out its 8 observations, reward and terminal. */
EXPORT void oracle_step_many(OracleGame **games, int n, const int *actions, float *obs, float *rewards,
                      unsigned char *terminals) {
    for (int i = 0; i < n; i++) {
        OracleGame *g = games[i];
        oracle_current_rng = &g->rng;
        g->env.actions[0] = actions[i];
        step(&g->env);
        memcpy(obs + 8 * i, g->env.observations, 8 * sizeof(float));
        rewards[i] = g->env.rewards[0];
        terminals[i] = g->env.terminals[0];
    }
}

/* The reference's own loop, for the speed benchmark: `steps` steps of all n games, actions
 * from a (rows x n) table, row t % rows at step t (as pong.py's test_performance). */
EXPORT double oracle_run_steps(OracleGame **games, int n, const int *actions, int rows, long steps) {
    double total = 0;
    for (long t = 0; t < steps; t++) {
        const int *row = actions + (t % rows) * n;
        for (int i = 0; i < n; i++) {
            OracleGame *g = games[i];
            oracle_current_rng = &g->rng;
            g->env.actions[0] = row[i];
            step(&g->env);
            total += g->env.rewards[0];
        }
    }
    return total;
}
