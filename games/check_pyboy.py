#!/usr/bin/env python3
"""Black-box check of the three games in PyBoy 2.8.1.

Plays each ROM with a seeded random button policy, prints score/lives/game-over
progression from the documented WRAM map, checks that the screen changes, that
lives are lost, that game over happens and that START restarts. Saves PNG
screenshots to games/screenshots/.

usage: python3 games/check_pyboy.py [--frames N] [--seed S]
"""
import argparse
import os
import random
import sys

from pyboy import PyBoy

HERE = os.path.dirname(os.path.abspath(__file__))
GAMES = {
    # name: buttons the random policy uses
    "dodge": ["left", "right", "up", "down", "a"],
    "snake": ["left", "right", "up", "down"],
    "runner": ["a"],
}


def state(m):
    return dict(
        score=m[0xC000] | m[0xC001] << 8,
        lives=m[0xC002],
        over=m[0xC003],
        frames=m[0xC004] | m[0xC005] << 8,
        x=m[0xC006],
        y=m[0xC007],
        st=m[0xC008],
        hi=m[0xC009] | m[0xC00A] << 8,
    )


def play(name, frames, seed, shots):
    rom = os.path.join(HERE, name + ".gb")
    p = PyBoy(rom, window="null")
    rng = random.Random(seed)
    m = p.memory
    p.tick(90)  # PyBoy's boot ROM animation
    assert state(m)["st"] == 0, "expected the title screen"
    if shots:
        p.screen.image.save(os.path.join(shots, f"{name}_title.png"))
    p.button("start")
    p.tick(10)  # new game redraws the map with the LCD off
    s = state(m)
    assert s["st"] == 1 and s["lives"] == 3, s
    held = None
    prev_screen = p.screen.ndarray.copy()
    screen_changes = 0
    lives_lost = 0
    game_overs = 0
    restarts = 0
    first_over = None
    last = state(m)
    max_score = 0
    shot_taken = False
    for f in range(frames):
        # random policy: every few frames pick a button to hold for a while
        if f % 6 == 0:
            if held:
                p.button_release(held)
                held = None
            if rng.random() < 0.6:
                held = rng.choice(GAMES[name])
                p.button_press(held)
        p.tick(1)
        s = state(m)
        if s["lives"] < last["lives"] and s["st"] != 0:
            lives_lost += last["lives"] - s["lives"]
        if s["score"] > max_score:
            max_score = s["score"]
        if s["over"] and not last["over"]:
            game_overs += 1
            if first_over is None:
                first_over = f
            print(f"  [{name}] frame {f}: GAME OVER score={s['score']} hi={s['hi']}")
            if shots:
                p.screen.image.save(os.path.join(shots, f"{name}_gameover.png"))
        if s["over"] and f % 60 == 30:
            p.button("start")  # restart
        if last["over"] and not s["over"]:
            restarts += 1
            assert s["lives"] == 3 and s["score"] == 0, s
        if f == 400 and shots and not shot_taken:
            p.screen.image.save(os.path.join(shots, f"{name}.png"))
            shot_taken = True
        if f % 300 == 0:
            print(f"  [{name}] frame {f}: {s}")
            scr = p.screen.ndarray
            if (scr != prev_screen).any():
                screen_changes += 1
            prev_screen = scr.copy()
        last = s
    p.stop(save=False)
    ok = game_overs > 0 and restarts > 0 and max_score > 0 and lives_lost >= 3 and screen_changes > 3
    print(
        f"{name}: max_score={max_score} lives_lost={lives_lost} game_overs={game_overs} "
        f"restarts={restarts} first_game_over_frame={first_over} screen_changes={screen_changes} "
        f"-> {'OK' if ok else 'FAIL'}"
    )
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-shots", action="store_true")
    a = ap.parse_args()
    shots = None if a.no_shots else os.path.join(HERE, "screenshots")
    if shots:
        os.makedirs(shots, exist_ok=True)
    ok = all([play(g, a.frames, a.seed, shots) for g in GAMES])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
