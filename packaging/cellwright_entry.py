"""The frozen app's entry script (packaging/cellwright.spec): the `cellwright` console script.

It takes the same arguments as the installed `cellwright` command (`app.main:main`).
"""

import sys

from app.main import main

if __name__ == "__main__":
    sys.exit(main())
