"""Where the third-party reference implementations live (run as oracles, never copied).

``EMURUST_REFERENCES`` names the folder; by default ``../shared/data/references`` beside the
source checkout. Tests that need a reference skip with a reason on a user's machine without it,
and fail when ``CI`` is set or when ``EMURUST_REFERENCES`` was given explicitly
(:func:`reference_required`).
"""

from __future__ import annotations

import os
from pathlib import Path


def references_dir() -> Path:
    """The references folder (it may not exist)."""
    env = os.environ.get("EMURUST_REFERENCES")
    if env:
        return Path(env).expanduser()
    # The source checkout (the one holding this package, or the current directory's: a
    # non-editable install lives in site-packages), then ../shared/data/references beside it.
    from ..prompts import repo_root

    root = repo_root() or Path.cwd()
    return root.parent / "shared" / "data" / "references"


def reference_required() -> bool:
    """True when a missing reference is an error rather than a reason to skip."""
    return bool(os.environ.get("CI")) or bool(os.environ.get("EMURUST_REFERENCES"))


def reference_path(name: str) -> Path:
    """``references_dir() / name``; FileNotFoundError with the setting to use if absent."""
    p = references_dir() / name
    if not p.exists():
        raise FileNotFoundError(
            f"reference {name!r} not found at {p}; set EMURUST_REFERENCES to the folder holding it"
        )
    return p
