"""Rendering: console text, tables, LaTeX, plots, report.html, the history site and report, the
generated doc tables. Takes data computed by ikbench.analysis; imports analysis and io only."""
