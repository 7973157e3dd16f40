"""docs/solver-parameters.md from `ikbench list solvers --format json`: every backend's spec keys
with their type, default, range, unit and meaning, the keys every solver accepts and the presets,
as Markdown tables (python3-tabulate). The C++ command line says what the bindings are; this
module only writes them down.

    ikbench list solvers --format json | python3 -m ikbench.render.solver_docs
"""

import json
import sys

from tabulate import tabulate

HEAD = ["key", "type", "default", "range", "unit", "meaning"]


def _cell(text):
    return str(text).replace("|", "\\|")  # a '|' in a help text would end the table cell


def _unset(p):
    """An empty default: a text key (ext's cmd) has none; a number takes the run's setting."""
    return "(none)" if p["type"] == "text" else "(run's)"


def _table(params):
    rows = [[f"`{p['name']}`", p["type"], f"`{p['default'] or _unset(p)}`", p["range"], p["unit"],
             _cell(p["help"])] for p in params]
    return tabulate(rows, headers=HEAD, tablefmt="github", disable_numparse=True)


def markdown(listing):
    """The Markdown of a `list solvers --format json` listing."""
    out = []
    for s in listing["solvers"]:
        out += [f"### `{s['name']}`", "", s["description"], ""]
        out += [_table(s["parameters"]), ""] if s["parameters"] else ["No parameters of its own.", ""]
    out += ["### Keys every solver accepts", "", _table(listing["common_parameters"]), "", "### Presets", ""]
    rows = [[f"`{p['name']}`", f"`{p['spec']}`", _cell(p["description"])] for p in listing["presets"]]
    out += [tabulate(rows, headers=["preset", "spec", "meaning"], tablefmt="github", disable_numparse=True), ""]
    return "\n".join(out)


def main(argv=None):
    try:
        listing = json.load(sys.stdin)
    except ValueError as e:
        print(f"solver_docs: standard input is not the JSON of `ikbench list solvers --format json`: {e}",
              file=sys.stderr)
        return 2
    sys.stdout.write(markdown(listing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
