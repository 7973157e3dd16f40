// The text boxes of plotly figures, for browser_test.py: arguments[0] lists plot element ids; for
// each drawn one, the pairs of its SVG texts (tick labels, axis titles, annotations, colour bar,
// text traces) whose screen boxes (getBoundingClientRect) intersect by more than 1 px both ways,
// and the texts reaching outside the figure's element (clipped). The figures draw tick labels
// horizontal or vertical, never slanted, so a label's screen box is the label's own box.
var ids = arguments[0], out = {};
ids.forEach(function (id) {
  var div = document.getElementById(id);
  if (!div) { out[id] = null; return; }
  var box = div.getBoundingClientRect();
  var sel = ".xtick text, .ytick text, .g-xtitle text, .g-ytitle text, .g-x2title text, .g-y2title text, .annotation-text, .gtitle, .textpoint text, .cbaxis text, .cbtitle text";
  var texts = Array.from(div.querySelectorAll(sel)).filter(function (t) { return t.textContent.trim() && t.getBBox().width > 0; });
  var rs = texts.map(function (t) { var r = t.getBoundingClientRect(); return { t: t.textContent, l: r.left, r: r.right, tp: r.top, b: r.bottom }; });
  var pairs = [], clipped = [];
  for (var i = 0; i < rs.length; i++) {
    var a = rs[i];
    if (a.l < box.left - 1 || a.r > box.right + 1 || a.tp < box.top - 1 || a.b > box.bottom + 1) clipped.push(a.t);
    for (var j = i + 1; j < rs.length; j++) {
      var b = rs[j];
      var ox = Math.min(a.r, b.r) - Math.max(a.l, b.l), oy = Math.min(a.b, b.b) - Math.max(a.tp, b.tp);
      if (ox > 1 && oy > 1) pairs.push([a.t, b.t, Math.round(ox), Math.round(oy)]);
    }
  }
  out[id] = { texts: rs.length, overlaps: pairs.slice(0, 10), n_overlaps: pairs.length, clipped: clipped.slice(0, 10), height: box.height };
});
return out;
