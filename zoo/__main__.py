"""`python -m zoo ...`: see `zoo.cli`."""

import sys

from zoo.cli import main

if __name__ == "__main__":
    sys.exit(main())
