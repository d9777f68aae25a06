"""Run the workbench with ``python -m workbench``."""

from workbench.cli import main

main()
