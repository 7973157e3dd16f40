"""The command line, `python -m ikbench ...`: one parser tree, with `gate` and `history` as
subcommand groups. The top layer: imports render, analysis and io."""

from .main import main  # noqa: F401
