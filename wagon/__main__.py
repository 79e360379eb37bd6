"""``python -m wagon`` runs the command line."""
from .cli import run

run()
