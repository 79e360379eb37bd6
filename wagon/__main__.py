"""``python -m wagon`` runs the command line."""
from .cli import main

main()
