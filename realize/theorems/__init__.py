"""The papers' checkable claims, one entry each with a check that runs in seconds (claims.py: the registry and the
evidence statuses; grazzi.py, brandoit.py, dlr.py, terzic.py: the checks, registered on import in the table's order)."""

from __future__ import annotations

# isort: off
from . import grazzi, brandoit, dlr, terzic  # noqa: F401  (registered in this order: the table's)
# isort: on
from . import claims
from .claims import *  # noqa: F403  (the registry's public names: claims.__all__)

__all__ = claims.__all__
