"""``emurust.utils``: the names of ``pyboy.utils`` (``WindowEvent``, exceptions, BCD helpers),
so that ``from emurust.utils import WindowEvent`` mirrors ``from pyboy.utils import ...``."""

from .pyboy_api.utils import *  # noqa: F401,F403
from .pyboy_api.utils import __all__  # noqa: F401
