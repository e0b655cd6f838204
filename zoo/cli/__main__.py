"""`python -m zoo.cli ...`: the same as `python -m zoo ...`."""

import sys

from zoo.cli import main

if __name__ == "__main__":
    sys.exit(main())
