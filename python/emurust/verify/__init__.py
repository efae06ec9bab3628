"""The verification layer: emurust diffed against references, level by level.

L1 ``cpu``: SM83 single-step vectors. L2 ``interactions``: small programs exercising one
interaction between components each, on emurust and PyBoy 2.8.1. L3 ``rollout``: whole games
run side by side with PyBoy, compared every frame. L4 ``transfer``: PPO trained on each backend,
evaluated on both (TOST). ``report`` runs L1-L3 into one report. The command line:
``emurust verify cpu|rollout|make-states|transfer|report``.
Pong (PufferLib's ``pong.h``, compiled as an oracle): :mod:`emurust.verify.pong` (L2-L4).
"""
