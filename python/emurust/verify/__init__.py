"""The verification layer: emurust diffed against references, level by level.

L1 ``cpu``: SM83 single-step vectors. (L2 interaction checks and L3 rollouts against PyBoy follow.)
Pong (PufferLib's ``pong.h``, compiled as an oracle): :mod:`emurust.verify.pong` (L2-L4).
"""
