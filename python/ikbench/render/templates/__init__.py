"""The jinja2 templates of the package's HTML, markdown and LaTeX outputs, and the one jinja2
environment that fills them: this folder (compare.html.j2 and the history site's pages) and
report_assets/ (report.html's page and the LaTeX table, kept beside the package's data).

    templates.render("compare.html.j2", **data)

Autoescaping is on for .html templates (every name a run holds is escaped) and off for the
others (the LaTeX table escapes its cells itself, ikbench.render.latex); an undefined name is an
error, never an empty string; a block tag's own line break and indentation are dropped."""

import functools
import json
from pathlib import Path

DIRECTORY = Path(__file__).resolve().parent
# report.html's page, style and script and the LaTeX table template.
ASSETS = Path(__file__).resolve().parents[2] / "report_assets"


def _tojson_script(value):
    """A JSON value for a <script> element: compact, '</' written as '<\\/' so that no string ends
    the element."""
    from markupsafe import Markup

    return Markup(json.dumps(value, separators=(",", ":")).replace("</", "<\\/"))


@functools.lru_cache(maxsize=1)
def environment():
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader([str(DIRECTORY), str(ASSETS)]),
                             autoescape=jinja2.select_autoescape(["html", "html.j2"], default_for_string=False),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters["tojson_script"] = _tojson_script
    return env


def render(name, **data):
    return environment().get_template(name).render(**data)
