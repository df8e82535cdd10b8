"""``python -m memstrata``: the ``memstrata`` command."""

from memstrata.cli.main import run

run()
