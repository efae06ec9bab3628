"""Train PPO (Stable-Baselines3) on an emurust game and evaluate it against a random policy; the
same as `emurust train` (see `python examples/train_ppo.py -h`).

Needs `pip install 'emurust[rl]'`. Example:

    python examples/train_ppo.py --game dodge --steps 60000 --seed 1
    tensorboard --logdir runs/
"""

import sys

from emurust.train import main

if __name__ == "__main__":
    sys.exit(main())
