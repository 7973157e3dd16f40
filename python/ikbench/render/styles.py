"""One look per solver spec, the same in every figure of the package: the matplotlib plots
(ikbench.render.plots, `ikbench plot convergence|time|success`) and report.html's plotly figures.

A spec's look depends on its text alone, never on which other specs a figure draws, so a spec has
the same colour in every report and figure of every run:

* the backends and presets the project ships (KNOWN, in a fixed order) each own one of the 24
  colours of PALETTE, drawn solid, with a marker of their own among neighbours;
* any other spec (one with parameters, `dls:lambda=0.1`, or a backend from outside the project)
  takes its colour, a dashed, dotted or dash-dotted line and a marker from the FNV-1a 64-bit hash
  of its text: never solid, so it is never confused with a shipped backend's plain spec. Two such
  specs share colour and line style with probability 1/72.

    spec_style("dls")            -> Style(colour="#1CA71C", dash="solid", marker="^")
    spec_style("dls:lambda=0.1") -> a hashed colour, dashed or dotted
"""

from dataclasses import dataclass

from ..io.hashing import fnv1a64_reference

# plotly's Dark24 qualitative palette (python3-plotly: plotly.colors.qualitative.Dark24): 24 colours
# distinct on a white background, kept here so that matplotlib figures need no plotly.
PALETTE = ("#2E91E5", "#E15F99", "#1CA71C", "#FB0D0D", "#DA16FF", "#222A2A", "#B68100", "#750D86",
           "#EB663B", "#511CFB", "#00A08B", "#FB00D1", "#FC0080", "#B2828D", "#6C7C32", "#778AAE",
           "#862A16", "#A777F1", "#620042", "#1616A7", "#DA60CA", "#6C4516", "#0D2A63", "#AF0038")

# The shipped backends and presets (`ikbench list solvers`), each with its palette index: the ones
# most often drawn together first, so that they get the most distinct colours.
KNOWN = ("auto", "kdl-lma", "dls", "ccd", "fabrik", "kdl-nr-jl", "lm", "sdls", "jt", "pinv", "gn",
         "dls-adaptive", "dls-marquardt", "gd-momentum", "ceres-lm", "ceres-dogleg", "two-bone",
         "planar-analytic", "analytic-6r", "analytic-7r", "nullspace", "hqp")

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")   # matplotlib marker codes
HASHED_DASHES = ("dash", "dot", "dashdot")            # plotly names of the line styles of hashed specs
MPL_LINES = {"solid": "-", "dash": "--", "dot": ":", "dashdot": "-."}
PLOTLY_SYMBOLS = {"o": "circle", "s": "square", "^": "triangle-up", "D": "diamond", "v": "triangle-down",
                  "P": "cross", "X": "x", "*": "star"}


@dataclass(frozen=True)
class Style:
    colour: str      # "#RRGGBB"
    dash: str        # plotly's name: solid, dash, dot, dashdot
    marker: str      # matplotlib's code (PLOTLY_SYMBOLS names plotly's)

    @property
    def ls(self):
        """The matplotlib line style."""
        return MPL_LINES[self.dash]

    @property
    def symbol(self):
        """The plotly marker symbol."""
        return PLOTLY_SYMBOLS[self.marker]

    def mpl(self):
        """Keyword arguments of matplotlib's plot for a line in this style."""
        return {"color": self.colour, "ls": self.ls}


def spec_hash(spec):
    """The 64-bit FNV-1a hash of the spec's UTF-8 text, its halves folded (the low bits alone of a
    short text's hash vary little)."""
    h = fnv1a64_reference(str(spec).encode("utf-8"))
    return h ^ (h >> 29)


def spec_style(spec):
    """The look of a solver spec (see the module's docstring): a function of the text alone."""
    spec = str(spec)
    if spec in KNOWN:
        i = KNOWN.index(spec)
        return Style(PALETTE[i], "solid", MARKERS[i % len(MARKERS)])
    h = spec_hash(spec)
    return Style(PALETTE[h % len(PALETTE)], HASHED_DASHES[(h // len(PALETTE)) % len(HASHED_DASHES)],
                 MARKERS[(h // (len(PALETTE) * len(HASHED_DASHES))) % len(MARKERS)])


def styles(specs):
    """{spec: Style} of the given specs."""
    return {s: spec_style(s) for s in specs}


def matplotlib_modules():
    """(matplotlib, pyplot) on the Agg backend, SVG text kept as text and SVG ids stable (the same
    figure gives the same file)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.fonttype"] = "none"      # text stays text (searchable, smaller)
    matplotlib.rcParams["svg.hashsalt"] = "ikbench"   # stable ids: the same files give the same SVG
    return matplotlib, plt


def safe_name(s):
    """`s` with every character but letters, digits and -_. replaced by _: a file name part."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in s)


# A spec longer than this is drawn on a figure's axis by its abbreviation (short_label), with a key
# from abbreviation to spec beside the figure: tick labels of a 1280 px page or a PNG panel then
# neither overlap one another nor the axis titles.
LABEL_MAX = 15


def short_label(spec, digits=4):
    """The axis label of a solver spec, a function of its text alone (stable across runs and
    figures): the spec itself when it has at most LABEL_MAX characters, else the name it is written
    with (its backend or preset, cut to 8
    characters) and `digits` hex digits of the spec's hash, e.g. "auto#3fa0"."""
    from ..analysis.family_figures import spec_name   # the name a spec is written with

    spec = str(spec)
    if len(spec) <= LABEL_MAX:
        return spec
    backend = spec_name(spec)[:8]
    return f"{backend}#{spec_hash(spec) % (16 ** digits):0{digits}x}"


def short_labels(specs):
    """{spec: short_label(spec)} of the given specs, distinct: should two long specs share an
    abbreviation, their labels take more hash digits until they differ."""
    specs = list(dict.fromkeys(str(s) for s in specs))
    out = {s: short_label(s) for s in specs}
    digits = 4
    while len(set(out.values())) < len(out) and digits < 16:
        digits += 2
        clash = {lab for lab in out.values() if list(out.values()).count(lab) > 1}
        out.update({s: short_label(s, digits) for s in specs if out[s] in clash})
    return out


def label_key(labels):
    """[(abbreviation, spec)] of the specs that `labels` (short_labels) abbreviates: the key that a
    figure drawing abbreviations shows beside it."""
    return [(lab, spec) for spec, lab in labels.items() if lab != spec]
