"""``python -m analysis <command>``: see :mod:`analysis.cli`."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
