"""``python -m memstrata.cli``: the same as the ``memstrata`` command."""

from memstrata.cli.main import run

run()
