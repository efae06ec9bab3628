"""Keep PyTorch from loading Triton in processes emurust owns (its CLI, its tests).

PyTorch imports Triton (a GPU kernel compiler with a ~500 MB LLVM library) as soon as
``torch._dynamo`` loads, which SB3's optimiser step does. emurust trains with plain PyTorch and
never compiles kernels, and loading that library crashed a CI run with SIGSEGV inside the
dynamic loader. Marking the module absent makes PyTorch report "no Triton" and go on.
Set ``EMURUST_ALLOW_TRITON=1`` to let it load (for example to use ``torch.compile``)."""

from __future__ import annotations

import os
import sys


def keep_triton_unloaded() -> bool:
    """Mark ``triton`` unimportable unless it is already loaded or the user allows it.
    Returns True if it is now blocked."""
    if os.environ.get("EMURUST_ALLOW_TRITON") == "1" or "triton" in sys.modules:
        return sys.modules.get("triton", 0) is None
    sys.modules["triton"] = None  # type: ignore[assignment]  # import triton -> ImportError, which PyTorch handles
    return True
