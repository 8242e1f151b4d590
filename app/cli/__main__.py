"""`python -m app.cli COMMAND ...`: the headless commands without the GUI entry point."""

import sys

from app.cli import main

sys.exit(main())
