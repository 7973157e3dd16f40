#!/usr/bin/env bash
# The history of the last N commits, measured now (docs/history.md "Backfill"): each commit is built
# in a git worktree with the release preset (ccache when installed), runs the quick suite, a short
# throughput measurement and the Google Benchmark binaries, and is added to the history store;
# commits that do not build are recorded as such. Options are those of
# `python3 -m ikbench history backfill` (--commits N is required; --db, --time-cap, --jobs, ...).
#
#   scripts/history_backfill.sh --commits 10 [--db results/history.sqlite]
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh main
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
exec /usr/bin/python3 -m ikbench history backfill "$@"
