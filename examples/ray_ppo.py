"""PPO on emurust batches spread over Ray actors, with Stable-Baselines3 or RLlib. The same script
runs on a laptop and on a cluster: only --address (or RAY_ADDRESS) changes (docs/ray.md).

Needs `pip install 'emurust[ray,rl]'`. Examples:

    python examples/ray_ppo.py sb3 --actors 2 --envs 8 --threads 1 --steps 20000
    python examples/ray_ppo.py rllib --actors 2 --envs 8 --threads 1 --iterations 5
    python examples/ray_ppo.py rllib --task bench --engine pyboy --actors 16 --envs 4 --threads 1   # PyBoy, same task
    RAY_ADDRESS=auto python examples/ray_ppo.py rllib --actors 16 --envs 64 --threads 4   # on a cluster

Prints environment steps/s (RLlib: sampled steps per second of training, after the first
iteration), the number used by the measurement plan in docs/ray.md.
"""

from __future__ import annotations

import argparse
import time

import ray


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("framework", choices=["sb3", "rllib"])
    p.add_argument("--address", default=None, help="Ray address (default: RAY_ADDRESS, else a local Ray)")
    p.add_argument("--game", default="dodge")
    p.add_argument("--obs", default="grey_half")
    p.add_argument("--actors", type=int, default=2, help="actors (SB3) or env runners (RLlib)")
    p.add_argument("--envs", type=int, default=8, help="environments per actor / env runner")
    p.add_argument("--threads", type=int, default=1, help="threads (= CPUs declared) per actor")
    p.add_argument("--steps", type=int, default=20_000, help="SB3: total environment steps")
    p.add_argument("--iterations", type=int, default=5, help="RLlib: training iterations")
    p.add_argument("--task", choices=["game", "bench"], default="game",
                   help="game: emurust's --game task; bench: benches/rl_throughput.py's Dodge task (grey 144x160), "
                        "which --engine pyboy also implements, for the RLlib emurust vs PyBoy comparison")
    p.add_argument("--engine", choices=["emurust", "pyboy"], default="emurust",
                   help="RLlib with --task bench: pyboy = one PyBoy 2.8.1 per environment, vectorised by RLlib")
    p.add_argument("--batch", type=int, default=4096, help="RLlib: train batch size per learner")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    ray.init(address=args.address)
    if args.framework == "sb3":
        from stable_baselines3 import PPO
        from stable_baselines3.common.vec_env import VecMonitor

        from emurust.ray import RayVecEnv

        venv = VecMonitor(RayVecEnv(args.actors, args.envs, args.threads, game=args.game, obs=args.obs))
        model = PPO("CnnPolicy", venv, n_steps=128, batch_size=256, seed=args.seed, verbose=1)
        t0 = time.perf_counter()
        model.learn(args.steps)
        print(f"sb3: {args.steps / (time.perf_counter() - t0):.0f} environment steps/s (PPO end to end)")
        venv.close()
    else:
        from emurust.ray import register_rllib_env, rllib_ppo_config

        if args.task == "game":
            name = register_rllib_env("emurust-" + args.game, game=args.game, obs=args.obs)
        else:
            import pathlib
            import sys

            sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "benches"))
            import rl_throughput as rt
            from ray import cloudpickle

            cloudpickle.register_pickle_by_value(rt)  # the env runners have no benches/ on their path

            if args.engine == "emurust":
                kw = rt.emurust_kwargs(args.threads, 2000)
                kw.pop("num_threads")
                name = register_rllib_env("emurust-bench", **kw)
            else:
                from ray.tune.registry import register_env

                from emurust.ray import _scaled

                rom = rt.rom_path()
                name = "pyboy-bench"
                register_env(name, lambda ctx: _scaled(rt.pyboy_env(rom, ctx.worker_index, 2000), False))
        config = (
            rllib_ppo_config(name, num_env_runners=args.actors, envs_per_runner=args.envs, threads_per_runner=args.threads)
            .training(train_batch_size_per_learner=args.batch, minibatch_size=min(256, args.batch), num_epochs=4)
            # grey/grey_half images (channel-last for RLlib): RLlib has no default filters for those sizes.
            .rl_module(model_config={"conv_filters": [[16, 8, 4], [32, 4, 2], [32, 3, 1]], "fcnet_hiddens": [256]})
            .debugging(seed=args.seed)
        )
        if args.engine == "pyboy":  # RLlib vectorises single PyBoy environments itself
            config = config.env_runners(gym_env_vectorize_mode="sync").environment(env_config={})
        algo = config.build_algo()
        t0 = steps0 = None
        for i in range(args.iterations):
            res = algo.train()
            steps = res["env_runners"]["num_env_steps_sampled_lifetime"]
            ret = res["env_runners"].get("episode_return_mean")
            print(f"iteration {i + 1}: {steps} steps sampled, episode return mean {ret}")
            if i == 0:
                t0, steps0 = time.perf_counter(), steps
        if args.iterations > 1:
            print(f"rllib: {(steps - steps0) / (time.perf_counter() - t0):.0f} environment steps/s (PPO, after iteration 1)")
        algo.stop()


if __name__ == "__main__":
    main()
