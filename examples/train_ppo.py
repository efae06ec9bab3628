"""Train PPO (Stable-Baselines3, CnnPolicy) on an emurust game; see `python examples/train_ppo.py -h`.

Needs `pip install 'emurust[rl]' tensorboard tqdm rich`. Example:

    python examples/train_ppo.py --game dodge --steps 150000 --envs 16
    tensorboard --logdir runs/
"""

from emurust.train import main

if __name__ == "__main__":
    main()
