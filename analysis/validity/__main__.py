"""``python -m analysis.validity`` (see :mod:`analysis.validity.commands`)."""
import sys

from .commands import main

sys.exit(main())
