"""Policy pieces for Stable-Baselines3 on emurust: a small CNN features extractor, and the
PyTorch thread count that keeps training fast next to the emulators.

PyTorch starts one thread per core for its own work. Next to emurust's emulator threads on a
small machine they fight for the cores: with SB3's MLP policy on 2 cores, PPO ran at 118 steps/s
with PyTorch's default and 2,529 steps/s with ``torch.set_num_threads(1)``. The small networks
used here gain nothing from more threads, so emurust's commands use
:data:`DEFAULT_TORCH_THREADS` unless told otherwise (``--torch-threads N``)."""

from __future__ import annotations

from typing import Any

__all__ = ["small_cnn", "set_torch_threads", "DEFAULT_TORCH_THREADS"]

#: PyTorch threads for emurust's commands (``--torch-threads``; 0 keeps PyTorch's own default).
DEFAULT_TORCH_THREADS = 1


def set_torch_threads(n: int) -> int:
    """Set PyTorch's intra-op thread count to `n` (0: leave PyTorch's default); returns the
    count in use."""
    import torch

    if n > 0:
        torch.set_num_threads(n)
    return int(torch.get_num_threads())


def small_cnn() -> Any:
    """SB3 features extractor class (``policy_kwargs={"features_extractor_class": small_cnn()}``):
    two conv layers and a 256-unit layer, NatureCNN's shape at a third of its CPU cost."""
    import torch
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from torch import nn

    class SmallCNN(BaseFeaturesExtractor):
        """Two conv layers and a 256-unit layer: NatureCNN's shape at a third of its CPU cost."""

        def __init__(self, observation_space, features_dim: int = 256):
            super().__init__(observation_space, features_dim)
            c = observation_space.shape[0]
            self.cnn = nn.Sequential(nn.Conv2d(c, 16, 8, stride=4), nn.ReLU(), nn.Conv2d(16, 32, 4, stride=2),
                                     nn.ReLU(), nn.Flatten())
            with torch.no_grad():
                n = self.cnn(torch.zeros(1, *observation_space.shape)).shape[1]
            self.linear = nn.Sequential(nn.Linear(n, features_dim), nn.ReLU())

        def forward(self, x):
            return self.linear(self.cnn(x))

    return SmallCNN
