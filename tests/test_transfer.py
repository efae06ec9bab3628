"""L4: the PyBoy mirror environment equals emurust's, step for step, and a short cross-backend
PPO transfer run decides equivalence with TOST."""

import tempfile

import numpy as np
import pytest

from emurust.verify.transfer import (
    Hyper,
    make_emurust_venv,
    make_pyboy_venv,
    run_transfer,
    t_sf,
    tost_paired,
    tost_welch,
)


def test_student_t_tail_and_tost():
    assert t_sf(0.0, 5) == pytest.approx(0.5)
    assert t_sf(2.015, 5) == pytest.approx(0.05, abs=5e-4)  # t(0.95, 5) = 2.015
    assert t_sf(-1.812, 10) == pytest.approx(0.95, abs=5e-4)
    t = tost_paired([0.1, -0.2, 0.05, 0.0, 0.1, -0.1], margin=1.0)
    assert t.equivalent and t.p_value < 0.05
    far = tost_paired([3.0, 3.5, 2.8, 3.1, 3.3], margin=1.0)
    assert not far.equivalent
    noisy = tost_welch([0, 10, 20], [5, 15, 25], margin=1.0)
    assert not noisy.equivalent


@pytest.mark.parametrize("game", ["dodge", "runner", "snake"])
def test_pyboy_mirror_equals_emurust_env(game):
    e = make_emurust_venv(2, game, noop_max=0, life_penalty=10.0, max_episode_steps=120)
    p = make_pyboy_venv(2, game, noop_max=0, life_penalty=10.0, max_episode_steps=120)
    assert np.array_equal(e.reset(), p.reset())
    rng = np.random.default_rng(3)
    episodes = 0
    for _ in range(260):
        a = rng.integers(0, e.action_space.n, 2)
        e.step_async(a)
        p.step_async(a)
        oe, re, de, ie = e.step_wait()
        op, rp, dp, ip = p.step_wait()
        np.testing.assert_array_equal(oe, op)
        np.testing.assert_array_equal(re, rp)
        np.testing.assert_array_equal(de, dp)
        for k in np.nonzero(de)[0]:
            np.testing.assert_array_equal(ie[k]["terminal_observation"], ip[k]["terminal_observation"])
            assert ie[k]["TimeLimit.truncated"] == ip[k]["TimeLimit.truncated"]
        episodes += int(de.sum())
    assert episodes >= 2  # autoresets were exercised
    e.close()
    p.close()


def test_short_transfer_run_is_equivalent(tmp_path, monkeypatch):
    # Training leaves no SB3 log folder in the temporary directory (SB3's default logger would).
    monkeypatch.delenv("SB3_LOGDIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    res = run_transfer("dodge", [1, 2], Hyper(steps=256, envs=2, n_steps=64, batch_size=64), episodes=2, margin=5.0, progress=lambda m: None)
    assert res.transfer.equivalent and res.training.equivalent and res.equivalent
    assert res.returns["emurust->emurust"] == res.returns["emurust->pyboy"]
    assert not list(tmp_path.glob("SB3-*"))


def test_tost_power_and_the_exact_case():
    from emurust.verify.transfer import tost_paired, tost_power

    assert tost_power(0.0, 5.0) == 1.0
    assert tost_power(1.0, 5.0) > 0.99 and tost_power(10.0, 5.0) == 0.0
    t = tost_paired([0.0] * 8, 5.0)
    assert t.equivalent and t.power == 1.0
    # All differences equal but outside the margin: exactly known, not equivalent.
    t = tost_paired([6.0] * 8, 5.0)
    assert not t.equivalent and t.p_value == 1.0
    # Spread: the t-test decides, and power reflects the spread.
    t = tost_paired([8.0, -8.0, 7.0, -7.0, 9.0, -9.0], 5.0)
    assert not t.equivalent and 0.0 <= t.power < 0.5


def test_a_planted_divergence_fails_tost():
    """L4 can fail: the emurust backend perturbed on purpose (every reward +0.5, about +50 per
    episode here) is not shown equivalent, while the unperturbed run of the same size is."""
    from emurust.verify.transfer import format_table, planted

    hp = Hyper(steps=256, envs=2, n_steps=64, batch_size=64)
    res = run_transfer("dodge", [1, 2], hp, episodes=2, margin=5.0, progress=lambda m: None, plant="reward_bias=0.5")
    assert not res.transfer.equivalent and not res.equivalent
    assert res.transfer.mean_difference > 5.0
    table = format_table(res)
    assert "NOT SHOWN EQUIVALENT" in table and "planted divergence in the emurust backend: reward_bias=0.5" in table
    with pytest.raises(ValueError):
        planted(object(), "gravity=2")
