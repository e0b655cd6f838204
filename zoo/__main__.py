"""`python -m zoo ...`: see `zoo.cli`.

Its quiet TensorFlow start (`zoo_startup.quiet_tensorflow_start`) has happened by the time
this runs: Python imports the package `zoo` first, and `zoo/__init__.py` starts TensorFlow
quietly when `python -m zoo` is what imports it.
"""

import sys

from zoo.cli import main

if __name__ == "__main__":
    sys.exit(main())
