"""The jinja2 templates of the analysis library's HTML and markdown outputs. `render(name, **data)`
fills one with autoescaping on for .html templates (every name a run holds is escaped)."""

from pathlib import Path

DIRECTORY = Path(__file__).resolve().parent


def environment():
    import jinja2

    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(DIRECTORY)),
                              autoescape=jinja2.select_autoescape(["html", "html.j2"], default_for_string=False),
                              trim_blocks=False, keep_trailing_newline=True)


def render(name, **data):
    return environment().get_template(name).render(**data)
