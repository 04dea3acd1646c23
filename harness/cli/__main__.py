"""``python -m harness.cli`` = ``galapagos``."""

from harness.cli import main

main()
