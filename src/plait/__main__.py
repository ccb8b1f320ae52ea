"""``python -m plait`` runs the demo."""

from plait.demo import main

main()
