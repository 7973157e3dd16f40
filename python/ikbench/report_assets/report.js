/* ikbench report: draws the page from its embedded data (python/ikbench/render/report.py builds the data; every
   figure comes from the analysis library, this script only lays it out, filters it and animates the solve
   viewer). Plotly is inlined above; nothing is fetched. */
(function () {
  "use strict";

  var errors = [];
  window.ikbenchErrors = errors;
  function showError(msg) {
    errors.push(msg);
    var box = document.getElementById("js-errors");
    if (box) { box.hidden = false; box.textContent = "page error: " + errors.join(" | "); }
  }
  window.addEventListener("error", function (e) { showError(e.message || String(e)); });
  window.addEventListener("unhandledrejection", function (e) { showError("promise: " + (e.reason && e.reason.message || e.reason)); });

  var TIMES = window.ikbenchTimes = window.ikbenchTimes || {};   // ms since navigation start: when each stage ended
  var DATA = JSON.parse(window.IKBENCH_DATA_TEXT);   // unpacked by the page (report.html)
  TIMES.parsed = Math.round(performance.now());
  var TEMPLATE = JSON.parse(document.getElementById("ikbench-template").textContent);
  var CONFIG = { displaylogo: false, responsive: true };
  var STYLE = {};
  DATA.solvers.forEach(function (s) { STYLE[s.spec] = s; });
  var FAMILY = {};
  DATA.families.forEach(function (f) { FAMILY[f.name] = f; });
  var pending = [];

  // ------------------------------------------------------------------ helpers
  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "html") e.innerHTML = attrs[k];
      else if (k === "cls") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c != null) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }
  function swatch(spec) {
    var s = STYLE[spec];
    return el("span", { cls: "sw", style: "background:" + (s ? s.colour : "#999") + (s && s.dash !== "solid" ? ";outline:1px dashed #000" : "") });
  }
  function solverCell(spec) { return el("td", { cls: "l" }, [swatch(spec), spec]); }
  function fmtSci(v, d) { return v == null ? "-" : (isFinite(v) ? Number(v).toExponential(d == null ? 1 : d) : "inf"); }
  function fmtNum(v, d) { return v == null ? "-" : Number(v).toFixed(d == null ? 1 : d); }
  function deepCopy(x) { return JSON.parse(JSON.stringify(x)); }
  function withTemplate(layout) { var l = deepCopy(layout); l.template = TEMPLATE; return l; }
  // Lazy drawing: a figure is drawn when its element comes near the window (IntersectionObserver,
  // 400 px ahead), so that the page is interactive once the first screen is drawn instead of after
  // every figure of every section. Until then the element holds its latest figure (a newer call
  // replaces it) and carries data-lazy="queued"; once drawn, data-lazy="drawn". Without
  // IntersectionObserver everything is drawn at once. window.ikbench.drawAll() draws what is queued.
  var LAZY = typeof IntersectionObserver === "function";
  var queued = new Map(), near = new WeakSet();
  var observer = LAZY ? new IntersectionObserver(function (entries) {
    entries.forEach(function (e) {
      if (!e.isIntersecting) return;
      near.add(e.target);
      observer.unobserve(e.target);
      flush(e.target);
    });
  }, { rootMargin: "400px 0px" }) : null;
  function nearNow(div) {   // within 400 px of the window now (the observer answers only later)
    var r = div.getBoundingClientRect();
    return (r.width > 0 || r.height > 0) && r.top < window.innerHeight + 400 && r.bottom > -400;
  }
  function node(div) { return typeof div === "string" ? document.getElementById(div) : div; }
  function flush(div) {
    var draw = queued.get(div);
    if (!draw) return Promise.resolve();
    queued.delete(div);
    return draw();
  }
  function whenNear(div, draw) {   // draw() now if div is near the window, else when it comes near
    div = node(div);
    if (!LAZY || near.has(div) || nearNow(div)) { near.add(div); return draw(); }
    queued.set(div, function () {
      var p = draw();
      div.setAttribute("data-lazy", "drawn");
      return p;
    });
    div.setAttribute("data-lazy", "queued");
    observer.observe(div);
    return Promise.resolve();
  }
  function unplot(div) { div = node(div); queued.delete(div); if (div.hasAttribute("data-lazy")) div.setAttribute("data-lazy", "empty"); Plotly.purge(div); }
  function drawAll() {
    var all = [];
    Array.from(queued.keys()).forEach(function (div) { near.add(div); observer.unobserve(div); all.push(flush(div)); });
    return Promise.all(all);
  }
  function firstDrawn() { if (TIMES.first_figure == null) TIMES.first_figure = Math.round(performance.now()); }
  function plot(div, fig, visible) {
    var data = fig.data.map(function (t) {
      var c = Object.assign({}, t);
      if (visible && t.meta != null) c.visible = visible.has(t.meta);
      return c;
    });
    var layout = withTemplate(fig.layout);
    var p = whenNear(div, function () { return Plotly.react(div, data, layout, CONFIG).then(function (x) { firstDrawn(); return x; }); });
    pending.push(p);
    return p;
  }
  function rowsOf(table) {  // {columns, rows} -> list of objects
    return table.rows.map(function (r) { var o = {}; table.columns.forEach(function (c, i) { o[c] = r[i]; }); return o; });
  }

  // ------------------------------------------------------------------ CSV of every table
  // Each table has a "CSV" button: the file is made here from the page's data (the exact figures the table
  // shows, not its formatted text), as a Blob, so it works offline from file://. window.ikbench.csv(name) returns
  // the same text (for tests and tools).
  function csvField(v) {
    if (v == null || (typeof v === "number" && isNaN(v))) return "";
    if (v === Infinity) return "inf";
    if (v === -Infinity) return "-inf";
    if (Array.isArray(v)) v = v.join(";");
    var s = typeof v === "boolean" ? (v ? "1" : "0") : String(v);
    return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  function csvText(columns, rows) {
    return [columns].concat(rows).map(function (r) { return r.map(csvField).join(","); }).join("\r\n") + "\r\n";
  }
  function pickRows(objs, columns) { return objs.map(function (o) { return columns.map(function (c) { return o[c]; }); }); }
  var CSV_FIGURES = ["success_rate", "success_ci_low", "success_ci_high", "time_us_median", "time_us_median_ci_low",
    "time_us_median_ci_high", "time_us_mean", "time_us_mean_ci_low", "time_us_mean_ci_high", "time_us_outliers_mild", "time_us_outliers_severe"];
  var CSV_TABLES = {
    headline: function () {
      var cols = ["family", "verdict", "ran", "succeeded", "leaders", "leader"].concat(CSV_FIGURES,
        ["peer", "peer_rank", "peer_success_rate", "peer_success_ci_low", "peer_success_ci_high", "peer_time_us_median",
          "peer_time_us_median_ci_low", "peer_time_us_median_ci_high"]);
      var rows = DATA.headline.map(function (h) {
        var l = h.leaders[0] || {}, p = h.peer || {};
        return [h.family, h.verdict, h.ran, h.succeeded, h.leaders.map(function (c) { return c.solver; }), l.solver]
          .concat(CSV_FIGURES.map(function (k) { return l[k]; }),
            [p.solver, p.rank, p.success_rate, p.success_ci_low, p.success_ci_high, p.time_us_median, p.time_us_median_ci_low, p.time_us_median_ci_high]);
      });
      return csvText(cols, rows);
    },
    robots: function () {
      var cols = ["robot", "solver", "families", "rank", "tied_leader", "solves", "supported", "successes", "success_rate", "success_ci_low",
        "success_ci_high", "time_us_mean", "time_us_median", "time_us_p99", "iterations_median", "available"];
      return csvText(cols, pickRows(DATA.robots, cols));
    },
    summary: function () {
      var cols = DATA.summary.columns.filter(function (c) { return !/_text$/.test(c) || c === "statuses_text"; });
      var at = cols.map(function (c) { return DATA.summary.columns.indexOf(c); });
      return csvText(cols.map(function (c) { return c === "statuses_text" ? "ended" : c; }),
        DATA.summary.rows.map(function (r) { return at.map(function (i) { return r[i]; }); }));
    },
    coverage: function () { return csvText(DATA.coverage.table.columns, DATA.coverage.table.rows); },
    outcomes: function () { return csvText(DATA.quality.outcomes.columns, DATA.quality.outcomes.rows); },
    regimes: function () { return csvText(DATA.quality.regimes.columns, DATA.quality.regimes.rows); },
    families: function () {
      var cols = ["name", "problems", "dof", "effectors", "goal", "sequential", "robot", "traced", "description"];
      return csvText(cols, pickRows(DATA.families, cols));
    }
  };
  function csvButton(name) {
    var b = el("button", { type: "button", cls: "csv", "data-table": name, title: "download this table as CSV (exact figures)", text: "CSV" });
    b.addEventListener("click", function () {
      var blob = new Blob([CSV_TABLES[name]()], { type: "text/csv;charset=utf-8" });
      var url = URL.createObjectURL(blob);
      var a = el("a", { href: url, download: (DATA.run.name || "ikbench") + "-" + name + ".csv" });
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(function () { URL.revokeObjectURL(url); }, 10000);
    });
    return b;
  }
  function csvBefore(table, name) { table.parentNode.insertBefore(el("div", { cls: "csv-bar" }, [csvButton(name)]), table); }

  // ------------------------------------------------------------------ header
  function renderHeader() {
    var r = DATA.run;
    document.getElementById("title").textContent = "ikbench: suite " + r.suite + " (" + r.name + ")";
    var facts = [r.solves + " solves", DATA.families.length + " families", DATA.solvers.length + " solver specs",
      r.start_time ? r.start_time + " – " + (r.end_time || "?") : null, r.cpu ? "CPU " + r.cpu : null,
      r.threads ? r.threads + " threads" : null, r.compiler ? r.compiler + " " + (r.flags || "") : null,
      r.git_revision ? "git " + String(r.git_revision).slice(0, 12) : null,
      "tolerances " + r.tolerances[0] + " m, " + r.tolerances[1] + " rad"];
    document.getElementById("facts").textContent = facts.filter(Boolean).join(" · ");
    if (DATA.playground) {  // the interactive playground written beside the report (docs/playground.md)
      var toc = document.getElementById("toc");
      toc.appendChild(document.createTextNode(" "));
      toc.appendChild(el("a", { id: "playground-link", href: DATA.playground, text: "interactive playground" }));
    }
    var notes = document.getElementById("notes");
    (r.notes || []).forEach(function (n) { notes.appendChild(el("div", { cls: "note", text: "note: " + n })); });
    (r.issues || []).forEach(function (n) { notes.appendChild(el("div", { cls: "note", text: "INCOMPLETE: " + n })); });
    if (r.noisy_text) notes.appendChild(el("div", { cls: "note noisy", id: "noisy-note", text: r.noisy_text }));
  }

  // ------------------------------------------------------------------ headline
  // The verdict per family comes from figures.family_leaders (report.py headline): the tied leaders (not
  // significantly worse than the first), or no winner when no spec succeeded; the peer beside them.
  function twoLines(main, sub) {
    var m = /^(.*?) (\[.*\])$/.exec(main || "");
    if (!m) return el("td", { text: main || "" });
    return el("td", null, [m[1], el("br"), el("span", { cls: "ci", text: m[2] })].concat(sub ? [sub] : []));
  }
  function renderHeadline() {
    plot("headline-chart", DATA.figures.headline);
    var t = document.getElementById("headline-table");
    var peerName = (DATA.headline.filter(function (h) { return h.peer; })[0] || {}).peer;
    var head = [["family", "l"], ["DOF · goal", "l"], ["leaders (tied: =1)", "l"], ["success [95% CI]", ""],
      ["t.median [µs] [95% CI]", ""], ["t.mean", ""], ["out.", ""], ["peer", "l"], ["peer rank", ""],
      ["peer success", ""], ["peer t.median [µs]", ""]];
    t.appendChild(el("thead", null, [el("tr", null, head.map(function (h) { return el("th", { cls: h[1], text: h[0] }); }))]));
    var tb = el("tbody");
    DATA.headline.forEach(function (h) {
      var f = FAMILY[h.family] || {};
      var tr = el("tr", { "data-family": h.family, "data-verdict": h.verdict }, [el("td", { cls: "l", text: h.family }),
        el("td", { cls: "l", text: String(f.dof) + " · " + (f.goal || "") })]);
      if (h.leaders.length) {
        var lead = h.leaders[0];
        var names = el("td", { cls: "l leaders" });
        h.leaders.forEach(function (c, i) {
          var span = el("span", { cls: "leader", title: c.solver + ": " + c.rank_text + ", success " + c.success_text + ", median " + c.time_median_text + " µs" },
            [swatch(c.solver), c.solver]);
          if (i) names.appendChild(document.createTextNode(" "));
          names.appendChild(span);
        });
        if (h.leaders.length > 1) names.insertBefore(el("span", { cls: "tie", text: "tie of " + h.leaders.length + ": " }), names.firstChild);
        tr.appendChild(names);
        tr.appendChild(twoLines(lead.success_text));
        tr.appendChild(twoLines(lead.time_median_text));
        tr.appendChild(el("td", { text: lead.time_mean_text }));
        tr.appendChild(el("td", { text: lead.outliers_text, title: "Tukey outliers of the times: mild / severe" }));
      } else {
        tr.appendChild(el("td", { cls: "l nowin", colspan: "5", text: h.verdict === "no success"
          ? "no winner: none of the " + h.ran + " specs that ran succeeded" : "n/a: no spec could attempt this family" }));
      }
      if (h.peer) {
        tr.appendChild(solverCell(h.peer.solver));
        tr.appendChild(el("td", { text: h.peer.rank_text }));
        tr.appendChild(twoLines(h.peer.success_text));
        tr.appendChild(el("td", { text: h.peer.available ? fmtTime(h.peer.time_us_median) : "" }));
      } else {
        tr.appendChild(el("td", { cls: "l muted", colspan: "4", text: peerName ? "did not run" : "no peer in this run" }));
      }
      tb.appendChild(tr);
    });
    t.appendChild(tb);
    csvBefore(t, "headline");
  }
  // A time [µs] as ikbench.render.numbers writes one: one decimal below 1e5 (an exact tie, x.25 or
  // x.75, to the even digit as Python rounds it), else 3 significant digits.
  function fmtTime(v) {
    if (v == null || !isFinite(v)) return "-";
    v = Number(v);
    if (Math.abs(v) >= 1e5) return Number(v.toPrecision(3)).toExponential().replace(/e([+-])(\d)$/, "e$10$2");
    var q = v * 4, n = Math.floor(v * 10);
    return q === Math.round(q) && Math.abs(q % 2) === 1 ? ((n % 2 === 0 ? n : n + 1) / 10).toFixed(1) : v.toFixed(1);
  }

  // ------------------------------------------------------------------ per robot
  function renderRobots() {
    var box = document.getElementById("robot-tables");
    if (!DATA.robots.length) { box.appendChild(el("p", { cls: "muted", text: "No family of this run comes from a robot description." })); return; }
    var head = ["robot", "solver", "rank", "solves", "supp.", "success [95% CI]", "t.mean", "t.median", "t.p99 [µs]", "out.", "it.median"];
    var t = el("table", { cls: "data", id: "robot-table" });
    t.appendChild(el("thead", null, [el("tr", null, head.map(function (h, i) { return el("th", { cls: i < 2 ? "l" : "", text: h }); }))]));
    var tb = el("tbody"), last = null, fams = {};
    DATA.robots.forEach(function (r) {
      fams[r.robot] = r.families;
      var tr = el("tr", { cls: (r.available ? "" : "na") + (last !== null && last !== r.robot ? " group" : "") }, [
        el("td", { cls: "l", text: r.robot }), solverCell(r.solver), el("td", { text: r.rank_text }),
        el("td", { text: String(r.solves) }), el("td", { text: String(r.supported) }), el("td", { text: r.success_text }),
        el("td", { text: r.time_mean_text }), el("td", { text: r.time_median_text }), el("td", { text: r.time_p99_text }),
        el("td", { text: r.outliers_text }), el("td", { text: r.iterations_text })]);
      last = r.robot;
      tb.appendChild(tr);
    });
    t.appendChild(tb);
    box.appendChild(el("p", { cls: "muted", text: "families: " + Object.keys(fams).map(function (k) { return k + ": " + fams[k]; }).join("; ") }));
    box.appendChild(el("div", { cls: "scroll" }, [t]));
    csvBefore(t.parentNode, "robots");
  }

  // ------------------------------------------------------------------ summary table
  var SUMMARY_COLUMNS = [
    { label: "family", key: "family", text: "family", cls: "l", type: "text" },
    { label: "solver", key: "solver", text: "solver", cls: "l", type: "text", solver: true },
    { label: "rank", key: "rank", text: "rank_text", type: "num" },
    { label: "solves", key: "solves", type: "num" },
    { label: "supp.", key: "supported", type: "num" },
    { label: "success [95% CI]", key: "success_rate", text: "success_text", type: "num" },
    { label: "it.med", key: "iterations_median", text: "iterations_median_text", type: "num" },
    { label: "it.p90", key: "iterations_p90", text: "iterations_p90_text", type: "num" },
    { label: "pos.err [m]", key: "position_error_median", text: "position_error_text", type: "num" },
    { label: "ori.err [rad]", key: "orientation_error_median", text: "orientation_error_text", type: "num" },
    { label: "t.med [µs] [95% CI]", key: "time_us_median", text: "time_median_text", type: "num" },
    { label: "t.mean [µs] [95% CI]", key: "time_us_mean", text: "time_mean_text", type: "num" },
    { label: "t.p99 [µs]", key: "time_us_p99", text: "time_p99_text", type: "num" },
    // the tail a real-time budget meets (docs/analysis.md; `ikbench tail` lists its solves)
    { label: "t.p99.9 [µs]", key: "time_us_p999", text: "time_p999_text", type: "num" },
    { label: "t.max [µs]", key: "time_us_max", text: "time_max_text", type: "num" },
    { label: "out.", key: "time_us_outliers_severe", text: "outliers_text", type: "num" },
    // an external solver's own reported time and the rest of the wall time (docs/external-solvers.md):
    // shown only when the run has them
    { label: "own t.med [µs]", key: "solver_time_us_median", text: "own_time_text", type: "num", optional: true },
    { label: "overhead [µs]", key: "overhead_us_median", text: "overhead_text", type: "num", optional: true },
    { label: "fk/solve", key: "fk_evals_mean", text: "fk_text", type: "num" },
    { label: "J/solve", key: "jacobian_evals_mean", text: "j_text", type: "num" },
    { label: "ended", key: "statuses_text", text: "statuses_text", cls: "l", type: "text" }];
  var summary = { rows: [], sortKey: null, dir: 1 };
  // Optional columns no row fills are left out of the table.
  SUMMARY_COLUMNS = SUMMARY_COLUMNS.filter(function (c) {
    return !c.optional || rowsOf(DATA.summary).some(function (r) { return r[c.key] != null && isFinite(r[c.key]); });
  });

  function renderSummary() {
    summary.rows = rowsOf(DATA.summary).map(function (r, i) { r._order = i; return r; });
    var table = document.getElementById("summary-table");
    var thr = el("tr");
    SUMMARY_COLUMNS.forEach(function (c) {
      var th = el("th", { cls: c.cls || "", "data-key": c.key, title: "sort by " + c.label, text: c.label });
      th.addEventListener("click", function () { sortSummary(c.key); });
      thr.appendChild(th);
    });
    table.tHead.appendChild(thr);
    var tb = table.tBodies[0];
    summary.rows.forEach(function (r) {
      var tr = el("tr", { cls: r.available ? "" : "na", "data-family": r.family, "data-solver": r.solver, "data-available": r.available ? "1" : "0" });
      SUMMARY_COLUMNS.forEach(function (c) {
        if (c.solver) { tr.appendChild(solverCell(r.solver)); return; }
        var v = c.text ? r[c.text] : r[c.key];
        tr.appendChild(el("td", { cls: c.cls || "", "data-key": c.key, "data-value": r[c.key] == null ? "" : String(r[c.key]), text: v == null ? "-" : String(v) }));
      });
      r._tr = tr;
      tb.appendChild(tr);
    });
    document.getElementById("summary-count").parentNode.appendChild(csvButton("summary"));
    document.getElementById("summary-filter").addEventListener("input", filterSummary);
    document.getElementById("summary-show-na").addEventListener("change", filterSummary);
    filterSummary();
  }

  function sortSummary(key) {
    if (summary.sortKey === key) summary.dir = -summary.dir; else { summary.sortKey = key; summary.dir = 1; }
    var col = SUMMARY_COLUMNS.filter(function (c) { return c.key === key; })[0];
    var dir = summary.dir;
    var rows = summary.rows.slice().sort(function (a, b) {
      var x = a[key], y = b[key];
      var xn = x == null || (typeof x === "number" && isNaN(x)), yn = y == null || (typeof y === "number" && isNaN(y));
      if (xn || yn) return xn === yn ? a._order - b._order : (xn ? 1 : -1);  // n/a last either way
      var c = col.type === "text" ? String(x).localeCompare(String(y)) : (x < y ? -1 : x > y ? 1 : 0);
      return c !== 0 ? dir * c : a._order - b._order;
    });
    var tb = document.getElementById("summary-table").tBodies[0];
    rows.forEach(function (r) { tb.appendChild(r._tr); });
    Array.prototype.forEach.call(document.querySelectorAll("#summary-table th"), function (th) {
      th.removeAttribute("aria-sort");
      if (th.getAttribute("data-key") === key) th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
    });
  }

  function filterSummary() {
    var words = document.getElementById("summary-filter").value.toLowerCase().split(/\s+/).filter(Boolean);
    var showNa = document.getElementById("summary-show-na").checked;
    var shown = 0, na = 0;
    summary.rows.forEach(function (r) {
      var hay = (r.family + " " + r.solver).toLowerCase();
      var ok = words.every(function (w) { return hay.indexOf(w) >= 0; });
      if (!r.available) { na += 1; if (!showNa) ok = false; }
      r._tr.hidden = !ok;
      if (ok) shown += 1;
    });
    document.getElementById("summary-count").textContent = "showing " + shown + " of " + summary.rows.length +
      " cells" + (showNa ? "" : " (" + na + " n/a cells hidden)");
  }

  // ------------------------------------------------------------------ per family plots
  var famState = { family: null, picked: null, touched: false };

  function familySolvers(fam) {
    return DATA.summary.rows.filter(function (r) { return r[0] === fam; }).map(function (r) {
      var o = {}; DATA.summary.columns.forEach(function (c, i) { o[c] = r[i]; }); return o;
    });
  }

  function renderFamilySection() {
    var sel = document.getElementById("family-select");
    DATA.families.forEach(function (f) { sel.appendChild(el("option", { value: f.name, text: f.name })); });
    sel.addEventListener("change", function () { showFamily(sel.value); });
    showFamily(DATA.families[0].name);
  }

  function buildPicker(fam) {
    var box = document.getElementById("solver-picker");
    box.innerHTML = "";
    var cells = familySolvers(fam);
    var defaults = DATA.defaults[fam] || [];
    if (!famState.touched || !famState.picked) famState.picked = new Set(defaults);
    var b1 = el("button", { type: "button", text: "best " + Math.min(4, defaults.length) + " + KDL" });
    b1.addEventListener("click", function () { famState.touched = false; famState.picked = new Set(defaults); buildPicker(fam); drawFamily(); });
    var b2 = el("button", { type: "button", text: "all" });
    b2.addEventListener("click", function () { famState.touched = true; famState.picked = new Set(cells.filter(function (c) { return c.available; }).map(function (c) { return c.solver; })); buildPicker(fam); drawFamily(); });
    var b3 = el("button", { type: "button", text: "none" });
    b3.addEventListener("click", function () { famState.touched = true; famState.picked = new Set(); buildPicker(fam); drawFamily(); });
    box.appendChild(el("span", { cls: "muted", text: "solvers:" }));
    [b1, b2, b3].forEach(function (b) { box.appendChild(b); });
    cells.slice().sort(function (a, b) { return (a.rank == null ? 1e9 : a.rank) - (b.rank == null ? 1e9 : b.rank); }).forEach(function (c) {
      var cb = el("input", { type: "checkbox", value: c.solver });
      cb.checked = famState.picked.has(c.solver);
      cb.disabled = !c.available;
      cb.addEventListener("change", function () {
        famState.touched = true;
        if (cb.checked) famState.picked.add(c.solver); else famState.picked.delete(c.solver);
        drawFamily();
      });
      var lab = el("label", { cls: c.available ? "" : "disabled", title: c.available ? ("rank " + c.rank + ", success " + c.success_text) : c.success_text },
        [cb, swatch(c.solver), c.solver + (c.available ? "" : " (n/a)")]);
      box.appendChild(lab);
    });
  }

  function showFamily(fam) {
    famState.family = fam;
    document.getElementById("family-select").value = fam;
    var f = FAMILY[fam];
    document.getElementById("family-desc").textContent = (f.description || "") + " — " + f.dof + " DOF, " + f.effectors +
      " effector(s), " + f.goal + " goals" + (f.sequential ? ", sequential (each problem starts from the previous answer)" : "");
    buildPicker(fam);
    specKey("family-key", familySolvers(fam).filter(function (c) { return c.available; }).map(function (c) { return c.solver; }));
    drawFamily();
  }

  function drawFamily() {
    var fam = famState.family, picked = famState.picked, f = FAMILY[fam];
    var conv = DATA.figures.convergence[fam];
    var ex = document.getElementById("convergence-explain");
    if (conv) {
      ex.textContent = "Median (line) and interquartile band (25–75 %) of the largest goal error over the " + f.traced +
        " traced problems of each picked solver, against the iteration and against the honest time axis (traces.csv time_us: " +
        "the recording pass rescaled to the timed solve's duration). A solve that stopped keeps its final error. Dotted: the tolerance." +
        (f.sparse.length ? " Drawn as markers (start ○ and the quartiles of the last records ◆, no line): " + f.sparse.join(", ") +
          " — they record only their start and end." : "");
      plot("convergence-plot", conv, picked);
    } else {
      ex.textContent = "No traces for this family (the run was made with --no-trace, or the family had no traced problem).";
      unplot("convergence-plot");
    }
    if (DATA.figures.ecdf[fam]) plot("ecdf-plot", DATA.figures.ecdf[fam], picked);
    if (DATA.figures.iterations[fam]) plot("iterations-plot", DATA.figures.iterations[fam], null);
    if (DATA.figures.success && DATA.figures.success[fam]) plot("success-plot", DATA.figures.success[fam], null);
    if (DATA.figures.boxes && DATA.figures.boxes[fam]) plot("box-plot", DATA.figures.boxes[fam], null);
  }

  // ------------------------------------------------------------------ solver x family, per solver
  // A figure names a long spec by its abbreviation (styles.short_labels: backend#hash); the key
  // below the figure spells out each abbreviation the figure uses.
  function specKey(id, specs) {
    var box = document.getElementById(id);
    box.textContent = "";
    var long = specs.filter(function (s) { return STYLE[s] && STYLE[s].label && STYLE[s].label !== s; });
    if (!long.length) return;
    box.appendChild(el("span", { cls: "muted", text: "abbreviations: " }));
    long.forEach(function (s, i) {
      if (i) box.appendChild(document.createTextNode(" · "));
      box.appendChild(el("span", { cls: "key", "data-label": STYLE[s].label, "data-spec": s }, [swatch(s), el("b", { text: STYLE[s].label }), " = ", el("code", { text: s })]));
    });
  }
  function renderHeatmap() {
    if (DATA.figures.heatmap) plot("heatmap-plot", DATA.figures.heatmap, null);
    specKey("heatmap-key", DATA.solvers.map(function (s) { return s.spec; }));
  }

  function renderSolvers() {
    var sel = document.getElementById("solver-select");
    var secs = DATA.solver_sections || [];
    secs.forEach(function (s) { sel.appendChild(el("option", { value: s.spec, text: s.spec })); });
    sel.addEventListener("change", function () { showSolver(sel.value); });
    if (secs.length) showSolver(secs[0].spec);
  }

  function showSolver(spec) {
    var s = (DATA.solver_sections || []).filter(function (x) { return x.spec === spec; })[0];
    var box = document.getElementById("solver-body");
    box.innerHTML = "";
    if (!s) return;
    document.getElementById("solver-select").value = spec;
    box.setAttribute("data-spec", spec);
    box.appendChild(el("p", null, [swatch(spec), el("b", { text: spec }), s.description ? ": " + s.description : ""]));
    var t = s.total;
    box.appendChild(el("p", { cls: "muted", text: "ran on " + t.families + " families (" + t.solves + " solves, " +
      t.successes + " successes); tied leader on " + t.leads + "." }));
    var pt = el("table", { cls: "data", id: "solver-parameters" });
    pt.appendChild(el("thead", null, [el("tr", null, [el("th", { cls: "l", text: "setting" }), el("th", { cls: "l", text: "value in force" }),
      el("th", { cls: "l", text: "from (run.json)" })])]));
    var ptb = el("tbody");
    var texts = s.parameter_texts || [], sources = s.parameter_sources || [];
    s.parameters.forEach(function (kv, i) {
      var text = texts[i] != null ? texts[i] : (kv[1] == null ? "not recorded" : String(kv[1]));
      var from = sources[i] === "suite option" ? "suite.options." + kv[0] : sources[i] === "spec" ? "solvers[].parameters" : (sources[i] || "");
      ptb.appendChild(el("tr", { "data-key": kv[0], "data-source": sources[i] || "" }, [el("td", { cls: "l mono", text: kv[0] }),
        el("td", { cls: "l mono", text: text }), el("td", { cls: "l muted", text: from })]));
    });
    pt.appendChild(ptb);
    box.appendChild(el("div", { cls: "scroll" }, [pt]));
    var ft = el("table", { cls: "data", id: "solver-families" });
    var head = ["family", "rank", "success [95% CI]", "median time [µs] [95% CI]", "mean [µs]", "median iterations"];
    ft.appendChild(el("thead", null, [el("tr", null, head.map(function (h, i) { return el("th", { cls: i < 1 ? "l" : "", text: h }); }))]));
    var ftb = el("tbody");
    s.families.forEach(function (r) {
      ftb.appendChild(el("tr", { "data-family": r.family }, [el("td", { cls: "l", text: r.family }), el("td", { text: r.rank_text }),
        el("td", { text: r.success_text }), el("td", { text: r.time_median_text }), el("td", { text: r.time_mean_text }),
        el("td", { text: r.iterations_text })]));
    });
    ft.appendChild(ftb);
    box.appendChild(el("div", { cls: "scroll" }, [ft]));
    if (s.convergence) {
      box.appendChild(el("p", { cls: "explain", text: "Convergence of " + spec + " on every traced family: the median largest goal error against the iteration (the family's first error kind: solid lines position [m], dashed orientation [rad]; a stopped solve keeps its final error)." }));
      plot("solver-convergence", s.convergence, null);
    } else {
      unplot("solver-convergence");
    }
  }

  // ------------------------------------------------------------------ DOF, sweeps, coverage
  function renderDof() {
    if (!DATA.figures.dof) {
      document.getElementById("dof-plot").appendChild(el("p", { cls: "muted", text: "No families of this run form a DOF sweep (names differing only in numbers, at least two DOF values)." }));
      return;
    }
    plot("dof-plot", DATA.figures.dof, null);
  }

  function renderSweeps() {
    var box = document.getElementById("sweeps-body");
    if (!DATA.sweeps.length) {
      box.appendChild(el("p", { cls: "muted", text: "This run has no grid of solver specs (a spec like dls:lambda={0.01,0.1}:max_step={0.5,1} expands into a grid). Sweeps across runs: python3 -m ikbench compare --sweep RUN_A RUN_B ... --out sweep.html" }));
      return;
    }
    box.appendChild(el("p", { cls: "explain", text: "Success (Wilson 95% interval) and mean time (bootstrap 95% interval) of each spec of the grid against each swept parameter, one line per value of the other parameters; pooled over the families the grid ran on, or per family." }));
    DATA.sweeps.forEach(function (s, k) {
      box.appendChild(el("h3", { text: s.name }));
      var sel = el("select", { id: "sweep-family-" + k });
      Object.keys(s.figures).forEach(function (f) { sel.appendChild(el("option", { value: f, text: f })); });
      box.appendChild(el("div", { cls: "controls" }, [el("label", null, ["families ", sel])]));
      var div = el("div", { cls: "plot", id: "sweep-plot-" + k });
      box.appendChild(div);
      sel.addEventListener("change", function () { plot(div, s.figures[sel.value], null); });
      plot(div, s.figures[sel.value], null);
    });
  }

  function renderCoverage() {
    var box = document.getElementById("coverage-body");
    var c = DATA.coverage;
    if (!c) {
      box.appendChild(el("p", { cls: "muted", text: "No solve of this run returned several solutions and no spec asks for all (solutions=all): no coverage figure." }));
      return;
    }
    box.appendChild(el("p", { cls: "explain", text: c.has_reference ?
      "Coverage = distinct solutions a multi-solution backend found (solutions=all) over the closed-form count of " + c.reference +
      " on the same problem (capped at 100 %), averaged per family, with a bootstrap 95% interval. Distinct: joint-space distance above " +
      c.tolerance + " after wrapping revolute angles into (-π, π]." :
      "Distinct solutions found per problem (solutions=all), averaged per family, with a bootstrap 95% interval; no closed-form backend of this run gives a reference count, so there is no coverage ratio. Distinct: joint-space distance above " + c.tolerance + " after wrapping revolute angles." }));
    var div = el("div", { cls: "plot", id: "coverage-plot" });
    box.appendChild(div);
    plot(div, c.figure, null);
    var rows = rowsOf(c.table);
    var head = ["family", "solver", "role", "problems", "found / problem [95% CI]", "reference / problem", "coverage [95% CI]", "found > reference"];
    var t = el("table", { cls: "data", id: "coverage-table" });
    t.appendChild(el("thead", null, [el("tr", null, head.map(function (h, i) { return el("th", { cls: i < 3 ? "l" : "", text: h }); }))]));
    var tb = el("tbody");
    rows.forEach(function (r) {
      function ci(v, lo, hi, scale, d) { return v == null ? "-" : (v * scale).toFixed(d) + (lo == null ? "" : " [" + (lo * scale).toFixed(d) + ", " + (hi * scale).toFixed(d) + "]"); }
      tb.appendChild(el("tr", null, [el("td", { cls: "l", text: r.family }), solverCell(r.solver), el("td", { cls: "l", text: r.role }),
        el("td", { text: String(r.problems) }), el("td", { text: ci(r.found_mean, r.found_ci_low, r.found_ci_high, 1, 2) }),
        el("td", { text: r.reference_mean == null ? "-" : r.reference_mean.toFixed(2) }),
        el("td", { text: ci(r.coverage_mean, r.coverage_ci_low, r.coverage_ci_high, 100, 1) + (r.coverage_mean == null ? "" : " %") }),
        el("td", { text: String(r.problems_above) })]));
    });
    t.appendChild(tb);
    box.appendChild(el("div", { cls: "scroll" }, [t]));
    csvBefore(t.parentNode, "coverage");
  }

  // ------------------------------------------------------------------ outcomes and answer quality
  function renderQuality() {
    var box = document.getElementById("quality-body");
    var q = DATA.quality;
    if (!q) return;
    function pct(v, lo, hi) { return v == null ? "-" : (100 * v).toFixed(1) + (lo == null ? "" : " [" + (100 * lo).toFixed(1) + ", " + (100 * hi).toFixed(1) + "]"); }
    function num(v) { return v == null ? "-" : (Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3) ? Number(v).toExponential(2) : Number(v).toPrecision(3)); }
    box.appendChild(el("p", { cls: "explain", text: "Every solve classified (docs/protocols.md): converged (FK within tolerance and within the limits: the success rate), " +
      "wrong (the backend claimed convergence and FK disagrees, or the answer leaves the joint limits), not found (a reachable target, no answer), " +
      "refused (a target known unreachable, correctly answered without a claim), timed out (the budget ended it). Rates over all solves with Wilson 95% intervals [%]. " +
      (q.recorded ? "Quality of converged answers: median manipulability (Yoshikawa) and limit margin, median distance from the start; tracked paths: largest joint jump, branch switches, RMS joint velocity, acceleration and jerk." :
        "This run did not record the quality columns (ikbench run --protocol NAME or --quality does): the quality figures are empty.") }));
    var cols = [["family", "family"], ["solver", "solver"], ["start", "start (regime)"], ["targets", "targets"], ["solves", "solves"],
      ["success", "converged"], ["wrong", "wrong"], ["not_found", "not found"], ["refused", "refused"], ["timed_out", "timed out"],
      ["targets_solved_rate", "targets solved (any start)"], ["manipulability_median", "manipulability"], ["limit_margin_median", "limit margin"],
      ["seed_distance_median", "distance from start"], ["joint_jump_max", "largest jump"], ["branch_switches", "branch switches"],
      ["joint_velocity_rms", "RMS velocity"], ["joint_acceleration_rms", "RMS acceleration"], ["joint_jerk_rms", "RMS jerk"]];
    var t = el("table", { cls: "data", id: "outcomes-table" });
    t.appendChild(el("thead", null, [el("tr", null, cols.map(function (c, i) { return el("th", { cls: i < 4 ? "l" : "", text: c[1] }); }))]));
    var tb = el("tbody");
    rowsOf(q.outcomes).forEach(function (r) {
      tb.appendChild(el("tr", null, cols.map(function (c, i) {
        var k = c[0];
        if (k === "solver") return solverCell(r.solver);
        if (i < 4) return el("td", { cls: "l", text: r[k] == null ? "-" : String(r[k]) });
        if (k === "solves") return el("td", { text: String(r.solves) });
        if (k === "success") return el("td", { text: pct(r.success_rate, r.success_ci_low, r.success_ci_high) });
        if (r[k + "_rate"] !== undefined) return el("td", { text: pct(r[k + "_rate"], r[k + "_ci_low"], r[k + "_ci_high"]) });
        if (k === "targets_solved_rate") return el("td", { text: r[k] == null ? "-" : (100 * r[k]).toFixed(1) });
        return el("td", { text: num(r[k]) });
      })));
    });
    t.appendChild(tb);
    box.appendChild(el("div", { cls: "scroll" }, [t]));
    csvBefore(t.parentNode, "outcomes");
    box.appendChild(el("h3", { text: "By seed regime" }));
    var rt = el("table", { cls: "data", id: "regimes-table" });
    rt.appendChild(el("thead", null, [el("tr", null, ["regime", "solver", "families", "solves", "success [95% CI] %", "median time [95% CI] µs"].map(function (h, i) { return el("th", { cls: i < 2 ? "l" : "", text: h }); }))]));
    var rb = el("tbody");
    rowsOf(q.regimes).forEach(function (r) {
      rb.appendChild(el("tr", null, [el("td", { cls: "l", text: r.regime }), solverCell(r.solver), el("td", { text: String(r.families) }),
        el("td", { text: String(r.solves) }), el("td", { text: pct(r.success_rate, r.success_ci_low, r.success_ci_high) }),
        el("td", { text: num(r.time_us_median) + (r.time_us_median_ci_low == null ? "" : " [" + num(r.time_us_median_ci_low) + ", " + num(r.time_us_median_ci_high) + "]") })]));
    });
    rt.appendChild(rb);
    box.appendChild(el("div", { cls: "scroll" }, [rt]));
    csvBefore(rt.parentNode, "regimes");
    var fams = Object.keys(q.figures);
    if (!fams.length) return;
    box.appendChild(el("h3", { text: "Distributions" }));
    var sel = el("select", { id: "quality-family" });
    fams.forEach(function (f) { sel.appendChild(el("option", { value: f, text: f })); });
    box.appendChild(el("div", { cls: "controls" }, [el("label", null, ["family ", sel])]));
    var holder = el("div", { id: "quality-plots" });
    box.appendChild(holder);
    function draw() {
      Array.prototype.forEach.call(holder.children, function (d) { unplot(d); });
      holder.textContent = "";
      q.figures[sel.value].forEach(function (fig, k) {
        var div = el("div", { cls: "plot", id: "quality-plot-" + k });
        holder.appendChild(div);
        plot(div, fig, null);
      });
    }
    sel.addEventListener("change", draw);
    draw();
  }

  // ------------------------------------------------------------------ run metadata
  function renderRun() {
    var box = document.getElementById("run-body");
    var r = DATA.run, e = DATA.embedding, v = DATA.viewer;
    if (r.throughput) box.appendChild(el("p", { text: r.throughput }));
    if (r.command_line) box.appendChild(el("p", { cls: "mono", text: r.command_line }));
    var emb = "Embedded in this page: every figure above (from python/ikbench: figures.summarize, rank_cells, robot_summary, curves, sweep, coverage; docs/analysis.md), " +
      "drawn curves rounded to " + e.curve_digits + " significant digits (table figures exact). The solve viewer has the traces of " +
      (e.trace_problems === "all" ? "every traced problem" : "the first " + e.trace_problems + " traced problems") +
      " of each family (of " + (r.trace_problems_per_family == null ? "?" : r.trace_problems_per_family) +
      " traced, a seeded sample), each thinned to its first " + e.trace_head + " records, then at most " + e.trace_points + " more at an even stride, always with the last" +
      (v ? " (" + v.records.embedded + " of " + v.records.total + " records of those traces)" : "") +
      "; a sequential family plays as a clip of its first " + e.clip_frames + " problems (returned q from solves.csv). Regenerate with other limits: " +
      "ikbench report RUN_DIR --trace-problems K --trace-head N --trace-points M --clip-frames F.";
    box.appendChild(el("p", { cls: "explain", text: emb }));
    if (DATA.plots && DATA.plots.length) {
      var d = el("details", null, [el("summary", { text: "static figures for papers (PNG/SVG written by scripts/plot.py)" })]);
      var ul = el("ul");
      DATA.plots.forEach(function (p) {
        var li = el("li", null, [p.title + ": "]);
        p.files.forEach(function (f) { li.appendChild(el("a", { href: f, text: f.split("/").pop() })); li.appendChild(document.createTextNode(" ")); });
        ul.appendChild(li);
      });
      d.appendChild(ul);
      box.appendChild(d);
    }
    var fams = el("details", null, [el("summary", { text: "families (" + DATA.families.length + ")" })]);
    var ft = el("table", { cls: "data", id: "families-table" });
    ft.appendChild(el("tr", null, ["family", "problems", "DOF", "effectors", "goal", "sequential", "robot", "traced", "description"].map(function (h) { return el("th", { cls: "l", text: h }); })));
    DATA.families.forEach(function (f) {
      ft.appendChild(el("tr", null, [f.name, f.problems, f.dof, f.effectors, f.goal, f.sequential ? "yes" : "", f.robot || "", f.traced, f.description || ""].map(function (x) { return el("td", { cls: "l", text: x == null ? "" : String(x) }); })));
    });
    fams.appendChild(el("div", { cls: "scroll" }, [ft]));
    csvBefore(ft.parentNode, "families");
    box.appendChild(fams);
    var sol = el("details", null, [el("summary", { text: "solver specs (" + DATA.solvers.length + ")" })]);
    var ul2 = el("ul");
    DATA.solvers.forEach(function (s) { ul2.appendChild(el("li", null, [swatch(s.spec), el("b", { text: s.spec }), ": " + (s.description || "")])); });
    sol.appendChild(ul2);
    box.appendChild(sol);
    box.appendChild(el("details", null, [el("summary", { text: "run metadata (run.json)" }), el("pre", { id: "meta-json", text: JSON.stringify(DATA.meta, null, 2) })]));
  }

  // ------------------------------------------------------------------ kinematics (report_assets/kinematics.js)
  var quatMat = IKB_KIN.quatMat, mv = IKB_KIN.mv, add = IKB_KIN.add, fk = IKB_KIN.fk,
    jointsOnLimit = IKB_KIN.jointsOnLimit, goalState = IKB_KIN.goalState;

  // ------------------------------------------------------------------ solve viewer
  var V = { fam: null, problem: null, solvers: [], frames: [], frame: 0, timer: null, views: [], model: null, scale: 0.1, rev: 0, solPick: {} };
  var VIEWER = DATA.viewer;
  var WARN = "#e6550d", JOINT = "#333333";

  function viewerFamilies() { return VIEWER ? DATA.families.filter(function (f) { return VIEWER.families[f.name]; }) : []; }

  function renderViewer() {
    var exp = document.getElementById("viewer-explain");
    if (!VIEWER) { exp.textContent = "This run has no models.json / problems.jsonl (format version 1): nothing to draw."; return Promise.resolve(); }
    var e = DATA.embedding;
    exp.textContent = "Pick a family, a problem and up to four solvers: each view replays a solver's iterates from traces.csv (q after each " +
      "iteration; forward kinematics computed in this page from models.json), side by side with the same camera. The slider moves all views " +
      "through the iterations (a solver that stopped keeps its last configuration) and the marker on the error curve below; a solve with restarts " +
      "shows each attempt in turn, and the status line says which attempt is drawn and where it ended. The last frame draws the configuration the " +
      "solve returned (solves.csv q), or, for a solve that returned several (solutions=all, closed forms), the solution picked beside its status. Embedded: " +
      (e.trace_problems === "all" ? "every traced problem" : "the first " + e.trace_problems + " traced problems") +
      " of each family (the run traces a seeded sample), traces thinned to " + e.trace_head + " records then " + e.trace_points +
      " at a stride (always the last). A sequential (tracking) family plays as a clip: one frame per problem, each solver's returned q with that problem's targets.";
    var fsel = document.getElementById("viewer-family");
    viewerFamilies().forEach(function (f) { fsel.appendChild(el("option", { value: f.name, text: f.name + (f.sequential ? " (clip)" : "") })); });
    fsel.addEventListener("change", function () { viewerFamily(fsel.value); });
    document.getElementById("viewer-problem").addEventListener("change", function (ev) { viewerProblem(Number(ev.target.value)); });
    var slider = document.getElementById("viewer-slider");
    slider.addEventListener("input", function () { setFrame(Number(slider.value)); });
    document.getElementById("viewer-play").addEventListener("click", togglePlay);
    var fams = viewerFamilies();
    if (!fams.length) { exp.textContent += " (no family embedded)"; return Promise.resolve(); }
    return viewerFamily(fams[0].name);
  }

  function famData() { return VIEWER.families[V.fam]; }
  function currentProblem() {
    var fd = famData();
    if (fd.mode === "clip") return null;
    return fd.problems.filter(function (p) { return p.problem === V.problem; })[0];
  }
  function solversOf() {  // solvers available for the current selection, in run order
    var fd = famData(), have;
    if (fd.mode === "clip") have = fd.solves;
    else have = currentProblem().solves;
    return DATA.solvers.map(function (s) { return s.spec; }).filter(function (s) { return have[s]; });
  }

  function viewerFamily(fam) {
    stop();
    V.fam = fam;
    V.solPick = {};
    document.getElementById("viewer-family").value = fam;
    var fd = famData(), psel = document.getElementById("viewer-problem");
    psel.innerHTML = "";
    document.getElementById("viewer-problem-label").hidden = fd.mode === "clip";
    if (fd.mode === "trace") {
      fd.problems.forEach(function (p) {
        var specs = Object.keys(p.solves), ok = specs.filter(function (s) { return p.solves[s].success; }).length;
        psel.appendChild(el("option", { value: String(p.problem), text: "problem " + p.problem + " — " + ok + " of " + specs.length + " solvers succeed" }));
      });
      V.problem = fd.problems.length ? fd.problems[0].problem : null;
    } else {
      V.problem = null;  // a clip's frames are its problems
    }
    var defaults = (DATA.defaults[fam] || []);
    var avail = solversOf();
    V.solvers = defaults.filter(function (s) { return avail.indexOf(s) >= 0; }).slice(0, 4);
    if (!V.solvers.length) V.solvers = avail.slice(0, 4);
    buildViewerPicker();
    return viewerSelect();
  }

  function viewerProblem(p) { stop(); V.problem = p; V.solPick = {}; buildViewerPicker(); return viewerSelect(); }

  function buildViewerPicker() {
    var box = document.getElementById("viewer-solvers");
    box.innerHTML = "";
    box.appendChild(el("span", { cls: "muted", text: "solvers (up to 4):" }));
    var fd = famData(), p = currentProblem();
    solversOf().forEach(function (s) {
      var info = fd.mode === "clip" ? null : p.solves[s];
      var mark = info ? (info.success ? " ✓" : info.status === "unsupported" ? " (unsupported)" : " ✗") : "";
      var cb = el("input", { type: "checkbox", value: s });
      cb.checked = V.solvers.indexOf(s) >= 0;
      cb.disabled = !cb.checked && V.solvers.length >= 4;
      cb.addEventListener("change", function () {
        stop();
        if (cb.checked) { if (V.solvers.length < 4) V.solvers.push(s); }
        else V.solvers = V.solvers.filter(function (x) { return x !== s; });
        var order = solversOf();
        V.solvers.sort(function (a, b) { return order.indexOf(a) - order.indexOf(b); });
        buildViewerPicker();
        viewerSelect();
      });
      box.appendChild(el("label", { title: info ? info.status + (info.message ? ": " + info.message : "") : "" }, [cb, swatch(s), s + mark]));
    });
  }

  // The frames of the selection. A trace-mode frame is a record position (iteration, occurrence: an attempt
  // after a restart opens with a record at the iteration reached so far, so an iteration can occur twice), then
  // a last frame, "returned", that draws the configuration the solve returned (or the solution picked of a
  // solve that returned several). Per view, for every slider position, the record or solution drawn.
  function recordKeys(its) {
    var seen = {};
    return its.map(function (i) { var s = seen[i] || 0; seen[i] = s + 1; return [i, s]; });
  }
  function keyLess(a, b) { return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]); }

  function viewerSelect() {
    var fd = famData();
    V.rev += 1;
    V.views = [];
    if (fd.mode === "clip") {
      V.model = VIEWER.models[fd.model];
      V.frames = fd.frames.map(function (f) { return { it: f.problem, sub: 0, problem: f.problem }; });
      V.solvers.forEach(function (s) {
        var d = fd.solves[s];
        V.views.push({ spec: s, clip: d, recs: { q: d.q }, sols: [], fk: [] });
      });
    } else {
      var p = currentProblem();
      V.model = VIEWER.models[p.model];
      var keys = {}, anyResult = false;
      V.solvers.forEach(function (s) {
        var info = p.solves[s], tr = info.trace, v = { spec: s, info: info, fk: [], attempts: info.attempts || [],
          // solution 0 is the solve's q, embedded once (report_viewer._slim)
          sols: (info.solutions || []).map(function (x) { return x.q == null && x.solution === 0 ? Object.assign({}, x, { q: info.q }) : x; }) };
        if (tr && traceQ(tr).length) v.recs = { it: tr.it, q: tr.q, pe: tr.pe, oe: tr.oe, a: tr.a };
        else { v.recs = { it: [0], q: [p.q0], pe: [null], oe: [null], a: [null] }; if (info.q) v.untraced = true; else v.unsupported = true; }
        v.keys = recordKeys(v.recs.it);
        v.keys.forEach(function (k) { keys[k[0] + ":" + k[1]] = k; });
        if (!(s in V.solPick) || V.solPick[s] >= v.sols.length) V.solPick[s] = 0;
        v.result = v.sols.length > 0;
        anyResult = anyResult || v.result;
        V.views.push(v);
      });
      V.frames = Object.keys(keys).map(function (k) { return keys[k]; }).sort(function (a, b) { return keyLess(a, b) ? -1 : keyLess(b, a) ? 1 : 0; })
        .map(function (k) { return { it: k[0], sub: k[1] }; });
      if (!V.frames.length) V.frames = [{ it: 0, sub: 0 }];
      if (anyResult) V.frames.push({ it: Math.max.apply(null, V.frames.map(function (f) { return f.it; })), sub: 0, result: true });
    }
    // record index of every view at every frame ("R": the returned configuration), FK of every drawable
    // configuration, and the extent of the drawing
    var lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    function grow(x) { for (var k = 0; k < 3; k++) { if (x[k] < lo[k]) lo[k] = x[k]; if (x[k] > hi[k]) hi[k] = x[k]; } }
    V.views.forEach(function (v) {
      v.idx = V.frames.map(function (f, n) {
        if (fd.mode === "clip") return n;
        if (f.result) return v.result ? "R" : v.recs.q.length - 1;
        var k = 0; while (k + 1 < v.keys.length && !keyLess([f.it, f.sub], v.keys[k + 1])) k++; return k;
      });
      v.fk = v.recs.q.map(function (q) { return q ? fk(V.model, q) : null; });
      v.fkSol = v.sols.map(function (s) { return fk(V.model, s.q); });
      v.fk.concat(v.fkSol).forEach(function (F) { if (F) F.p.forEach(grow); });
    });
    var goalsAll = fd.mode === "clip" ? fd.frames.map(function (f) { return f.goals; }) : [currentProblem().goals];
    goalsAll.forEach(function (gs) { gs.forEach(function (g) { if (g.kind !== "orientation") grow(g.target_position); }); });
    var q0 = fd.mode === "clip" ? fd.q0 : currentProblem().q0;
    V.start = fk(V.model, q0);
    V.start.p.forEach(grow);
    if (!isFinite(lo[0])) { lo = [-1, -1, -1]; hi = [1, 1, 1]; }
    var ext = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-3);
    var pad = 0.08 * ext;
    V.range = [0, 1, 2].map(function (k) { var c = (lo[k] + hi[k]) / 2, h = Math.max(hi[k] - lo[k], 0.15 * ext) / 2 + pad; return [c - h, c + h]; });
    V.scale = 0.08 * ext;
    var slider = document.getElementById("viewer-slider");
    slider.max = String(V.frames.length - 1);
    V.frame = V.frames.length - 1;
    slider.value = String(V.frame);
    return draw(true);
  }

  // What a view draws at frame n: the configuration, its FK, and what the status line may say about it. The
  // verdicts come from the page data (report.py decides them by FK of these very configurations, or, for the
  // returned q, solves.csv's converged); the error shown beside them is computed here from the drawing.
  function drawnOf(v, n) {
    var k = v.idx[n], fd = famData();
    if (fd.mode === "clip") {
      var c = v.clip, q = c.q[k];
      return { q: q, F: v.fk[k], kind: "clip", claim: q == null ? "nothing" : c.converged[k] ? "converged" : "not converged",
        label: "problem " + V.frames[n].problem + ": " + c.status[k] + (c.success[k] ? " ✓" : "") +
          (q == null ? " (no configuration)" : c.converged[k] ? "" : c.status[k] === "converged" ? " (FK error above tolerance)" : ": not converged") };
    }
    if (k === "R") {
      var j = V.solPick[v.spec], s = v.sols[j], K = v.sols.length;
      return { q: s.q, F: v.fkSol[j], kind: "result", solution: j, claim: s.converged ? "converged" : "not converged",
        label: "drawn: " + (K > 1 ? "solution " + j + " of " + K + (j === 0 ? " (the returned q, solves.csv)" : " (solutions.csv)") : "the returned q (solves.csv)") +
          ": " + (s.converged ? "converged (FK error within tolerance)" : "not converged") };
    }
    var d = { q: v.recs.q[k], F: v.fk[k], kind: "record", record: k };
    if (v.unsupported) { d.claim = "start"; d.label = "drawn: the start configuration (the solve returned none)"; return d; }
    if (v.untraced) { d.claim = "start"; d.label = "drawn: the start configuration (not traced; the last frame draws the returned q)"; return d; }
    var a = v.recs.a ? v.recs.a[k] : null, att = a == null ? null : v.attempts[a], A = v.attempts.length;
    var where = (A > 1 ? "attempt " + (a + 1) + " of " + A + ", " : "") + "iteration " + v.recs.it[k] + " (record " + (k + 1) + " of " + v.recs.q.length + ")";
    d.attempt = a;
    function ended(t) { return "ended at " + fmtSci(t.position_error, 2) + " m" + (t.orientation_error == null ? "" : ", " + fmtSci(t.orientation_error, 2) + " rad") + ": not converged"; }
    if (!att || att.converged == null) { d.claim = "in progress"; d.label = "drawn: " + where; }
    else if (att.last === k) {
      d.claim = att.converged ? "converged" : "not converged";
      d.label = "drawn: " + where + ": " + (A > 1 ? "this attempt " : "") + (att.converged ? "converged" : ended(att));
    } else {
      d.claim = "in progress";
      d.label = "drawn: " + where + ", in progress; " + (A > 1 ? "this attempt" : "the trace") + " ends at iteration " + att.iteration + ", " +
        (att.converged ? "converged" : ended(att));
    }
    return d;
  }

  function lineSegments(pairs) {
    var x = [], y = [], z = [];
    pairs.forEach(function (s) { x.push(s[0][0], s[1][0], null); y.push(s[0][1], s[1][1], null); z.push(s[0][2], s[1][2], null); });
    return { x: x, y: y, z: z };
  }
  // Bones: parent body to joint frame, and a prismatic joint's travel. A free joint's translation is not a bone:
  // a free root (a skeleton's hips) is drawn where it is, with no segment from the world origin.
  function links(model, F) {
    var segs = [];
    model.joints.forEach(function (j, i) {
      if (j.parent >= 0) segs.push([F.p[j.parent], F.o[i]]);
      if (j.type !== "free" && (F.o[i][0] !== F.p[i][0] || F.o[i][1] !== F.p[i][1] || F.o[i][2] !== F.p[i][2])) segs.push([F.o[i], F.p[i]]);
    });
    return lineSegments(segs);
  }
  function frameAxes(R, origin, s, axis) {
    var col = [R[axis] * s, R[3 + axis] * s, R[6 + axis] * s];
    return [origin, add(origin, col)];
  }
  var AXIS_COLOURS = ["#d62728", "#2ca02c", "#1f77b4"];

  // The scene of a model posed in one (docs/collision.md): its obstacles as meshes, and every link
  // shape the collision world checks, as a surface, red on the returned configuration when the exact
  // check found that link in a collision, orange when it came within NEAR of one (the pair the
  // results name).
  var NEAR = 0.01, OBSTACLE = "#8c7b6b";
  function shapeMesh(s) {
    var R = quatMat(s.quat[0], s.quat[1], s.quat[2], s.quat[3]), v = [], f = [], k, a;
    function ring(z, r, n) { var base = v.length; for (k = 0; k < n; k++) { a = 2 * Math.PI * k / n; v.push([r * Math.cos(a), r * Math.sin(a), z]); } return base; }
    function band(b0, b1, n) { for (k = 0; k < n; k++) { var k1 = (k + 1) % n; f.push([b0 + k, b0 + k1, b1 + k]); f.push([b0 + k1, b1 + k1, b1 + k]); } }
    if (s.type === "box" || s.type === "mesh" && !s.vertices) {
      var h = s.size.map(function (x) { return x / 2; });
      for (k = 0; k < 8; k++) v.push([(k & 1 ? 1 : -1) * h[0], (k & 2 ? 1 : -1) * h[1], (k & 4 ? 1 : -1) * h[2]]);
      f = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]];
    } else if (s.type === "mesh") {
      v = s.vertices; f = s.triangles;
    } else {
      // sphere, capsule, cylinder: rings along z (hemispherical caps for sphere and capsule)
      var n = 16, r = s.radius, L = s.length || 0, rings = [], caps = s.type !== "cylinder";
      if (caps) for (k = 0; k <= 4; k++) { a = -Math.PI / 2 + Math.PI / 2 * k / 4; rings.push([-L / 2 + r * Math.sin(a), r * Math.cos(a) + 1e-9]); }
      else rings.push([-L / 2, r]);
      if (caps) for (k = 0; k <= 4; k++) { a = Math.PI / 2 * k / 4; rings.push([L / 2 + r * Math.sin(a), r * Math.cos(a) + 1e-9]); }
      else rings.push([L / 2, r]);
      var bases = rings.map(function (zr) { return ring(zr[0], zr[1], n); });
      for (k = 0; k + 1 < bases.length; k++) band(bases[k], bases[k + 1], n);
    }
    var w = v.map(function (x) { return add(mv(R, x), s.xyz); });
    return { x: w.map(function (p) { return p[0]; }), y: w.map(function (p) { return p[1]; }), z: w.map(function (p) { return p[2]; }),
      i: f.map(function (t) { return t[0]; }), j: f.map(function (t) { return t[1]; }), k: f.map(function (t) { return t[2]; }) };
  }
  function sceneTraces(model, F, info, result, scene) {
    var sc = model.scene, out = [];
    if (!sc) return out;
    if (!sc._meshes) sc._meshes = sc.obstacles.map(shapeMesh);
    sc.obstacles.forEach(function (o, i) {
      out.push(Object.assign({ type: "mesh3d", name: o.name, scene: scene, color: OBSTACLE, opacity: 0.35, flatshading: true,
        hovertemplate: o.name + " (" + o.type + ")<extra></extra>", showlegend: false }, sc._meshes[i]));
    });
    if (!F) return out;
    var hit = {}, state = null;
    if (result && info && info.collision_free != null && info.collision_pair) {
      state = info.collision_free === 0 ? "collides" : info.min_clearance < NEAR ? "near" : null;
      info.collision_pair.split("~").forEach(function (n) { hit[n.split("#")[0]] = true; });
    }
    // Every checked link shape (sphere, capsule, cylinder, box) as a surface moved by its body.
    if (!sc._linkMeshes) sc._linkMeshes = sc.links.map(shapeMesh);
    sc.links.forEach(function (l, i) {
      var on = state && hit[model.joints[l.body].body_name];
      var colour = on && state === "collides" ? "#d62728" : on && state === "near" ? "#ff7f0e" : "#9a9a9a";
      var m = sc._linkMeshes[i], R = F.R[l.body], p = F.p[l.body], x = [], y = [], z = [];
      for (var k = 0; k < m.x.length; k++) { var w = add(mv(R, [m.x[k], m.y[k], m.z[k]]), p); x.push(w[0]); y.push(w[1]); z.push(w[2]); }
      out.push({ type: "mesh3d", name: l.name, scene: scene, color: colour, opacity: 0.45, flatshading: true,
        hovertemplate: l.name + " (" + l.type + ")<extra></extra>", showlegend: false, x: x, y: y, z: z, i: m.i, j: m.j, k: m.k });
    });
    // Link meshes (or hulls) moved by their bodies, coloured like the capsules.
    (sc.link_meshes || []).forEach(function (m) {
      var on = state && hit[model.joints[m.body].body_name];
      var colour = on && state === "collides" ? "#d62728" : on && state === "near" ? "#ff7f0e" : "#9a9a9a";
      var R = F.R[m.body], p = F.p[m.body], w = m.vertices.map(function (x) { return add(mv(R, x), p); });
      out.push({ type: "mesh3d", name: model.joints[m.body].body_name, scene: scene, color: colour, opacity: 0.5, flatshading: true,
        hoverinfo: "skip", showlegend: false,
        x: w.map(function (q) { return q[0]; }), y: w.map(function (q) { return q[1]; }), z: w.map(function (q) { return q[2]; }),
        i: m.triangles.map(function (t) { return t[0]; }), j: m.triangles.map(function (t) { return t[1]; }), k: m.triangles.map(function (t) { return t[2]; }) });
    });
    return out;
  }

  function goalsAt(n) { var fd = famData(); return fd.mode === "clip" ? fd.frames[n].goals : currentProblem().goals; }

  function viewTraces(v, n, scene) {
    var model = V.model, d = drawnOf(v, n), F = d.F, goals = goalsAt(n), out = [], st = STYLE[v.spec] || { colour: "#444" };
    out.push.apply(out, sceneTraces(model, F, v.info, (V.frames[n] || {}).result, scene));
    var ghost = links(model, V.start);
    out.push(Object.assign({ type: "scatter3d", mode: "lines", name: "start", scene: scene, hoverinfo: "skip", showlegend: false, line: { color: "#c8c8c8", width: 3 } }, ghost));
    var state = null;
    if (F) {
      var L = links(model, F);
      out.push(Object.assign({ type: "scatter3d", mode: "lines", name: "links", scene: scene, hoverinfo: "skip", showlegend: false, line: { color: st.colour, width: 6 } }, L));
      var lim = jointsOnLimit(model, d.q);
      out.push({ type: "scatter3d", mode: "markers", name: "joints", scene: scene, showlegend: false,
        x: F.p.map(function (p) { return p[0]; }), y: F.p.map(function (p) { return p[1]; }), z: F.p.map(function (p) { return p[2]; }),
        text: model.joints.map(function (j, i) { return j.name + " (" + j.type + ")" + (lim[i] ? " ON A LIMIT" : ""); }),
        hovertemplate: "%{text}<extra></extra>",
        marker: { size: model.joints.map(function (j, i) { return lim[i] ? 6 : (j.type === "fixed" ? 2.5 : 4); }), color: lim.map(function (b) { return b ? WARN : JOINT; }) } });
      state = goalState(goals, F);
      state.limits = lim.filter(Boolean).length;
    }
    if (state) { state.claim = d.claim; state.label = d.label; state.kind = d.kind; state.record = d.record; state.solution = d.solution; state.attempt = d.attempt; state.q = d.q; }
    else state = { claim: d.claim, label: d.label, kind: d.kind, eff: null, pe: null, oe: null, limits: null };
    var tp = goals.map(function (g) { return g.target_position; });
    out.push({ type: "scatter3d", mode: "markers", name: "targets", scene: scene, showlegend: false,
      x: tp.map(function (p) { return p[0]; }), y: tp.map(function (p) { return p[1]; }), z: tp.map(function (p) { return p[2]; }),
      text: goals.map(function (g) { return "target of " + g.body + " (" + g.kind + ")"; }), hovertemplate: "%{text}<extra></extra>",
      marker: { size: 5, symbol: "diamond-open", color: "#000" } });
    var poseGoals = goals.filter(function (g) { return g.kind !== "position"; });
    for (var a = 0; a < 3; a++) {
      var segs = poseGoals.map(function (g) { var t = g.target_quat_xyzw; return frameAxes(quatMat(t[0], t[1], t[2], t[3]), g.target_position, V.scale, a); });
      out.push(Object.assign({ type: "scatter3d", mode: "lines", name: "target axis " + "xyz"[a], scene: scene, hoverinfo: "skip", showlegend: false, line: { color: AXIS_COLOURS[a], width: 5 } }, lineSegments(segs)));
    }
    if (state) {
      out.push({ type: "scatter3d", mode: "markers", name: "effector", scene: scene, showlegend: false,
        x: state.eff.map(function (p) { return p[0]; }), y: state.eff.map(function (p) { return p[1]; }), z: state.eff.map(function (p) { return p[2]; }),
        text: goals.map(function (g) { return "effector " + g.body; }), hovertemplate: "%{text}<extra></extra>",
        marker: { size: 4, color: st.colour, line: { color: "#000", width: 1 } } });
      for (var b = 0; b < 3; b++) {
        var es = [];
        goals.forEach(function (g, gi) { if (g.kind !== "position") es.push(frameAxes(F.R[g.body_index], state.eff[gi], V.scale * 0.8, b)); });
        out.push(Object.assign({ type: "scatter3d", mode: "lines", name: "effector axis " + "xyz"[b], scene: scene, hoverinfo: "skip", showlegend: false, line: { color: AXIS_COLOURS[b], width: 3, dash: "dash" } }, lineSegments(es)));
      }
    }
    return { traces: out, state: state };
  }

  function sceneLayout(i, n) {
    var up = V.model.up === "y" ? { x: 0, y: 1, z: 0 } : { x: 0, y: 0, z: 1 };
    var eye = V.model.up === "y" ? { x: 1.3, y: 0.7, z: 1.3 } : { x: 1.4, y: 1.3, z: 0.8 };
    var r = V.range, ext = Math.max(r[0][1] - r[0][0], r[1][1] - r[1][0], r[2][1] - r[2][0]);
    var gap = 0.01;
    return {
      domain: { x: [i / n + gap, (i + 1) / n - gap], y: [0, 1] },
      xaxis: { range: r[0], title: { text: "x" } }, yaxis: { range: r[1], title: { text: "y" } }, zaxis: { range: r[2], title: { text: "z" } },
      aspectmode: "manual", aspectratio: { x: (r[0][1] - r[0][0]) / ext, y: (r[1][1] - r[1][0]) / ext, z: (r[2][1] - r[2][0]) / ext },
      camera: V.camera || { up: up, eye: eye }, uirevision: "v" + V.rev
    };
  }

  function draw(fresh) {
    var n = V.frame, traces = [], layout = { margin: { l: 0, r: 0, t: 24, b: 0 }, showlegend: false, uirevision: "v" + V.rev, annotations: [] };
    var nv = Math.max(V.views.length, 1), states = [];
    if (fresh) V.camera = null;
    V.views.forEach(function (v, i) {
      var scene = i === 0 ? "scene" : "scene" + (i + 1);
      var t = viewTraces(v, n, scene);
      traces = traces.concat(t.traces);
      states.push(t.state);
      layout[scene] = sceneLayout(i, nv);
      layout.annotations.push({ text: v.spec, x: i / nv + 0.01, y: 1, xref: "paper", yref: "paper", xanchor: "left", yanchor: "bottom", showarrow: false, font: { color: (STYLE[v.spec] || {}).colour || "#000", size: 13 } });
    });
    // A scene whose collision geometry leaves a moving link uncovered or a pair unchecked (models.json's coverage).
    if (V.model.scene && V.model.scene.coverage_warning)
      layout.annotations.push({ text: "collision geometry flagged: " + V.model.scene.coverage_warning, x: 0, y: 0, xref: "paper", yref: "paper", xanchor: "left", yanchor: "bottom", showarrow: false, font: { color: WARN, size: 11 } });
    if (!V.views.length) { layout.scene = sceneLayout(0, 1); layout.annotations.push({ text: "pick a solver", x: 0.5, y: 0.5, xref: "paper", yref: "paper", showarrow: false }); }
    V.states = states;
    var div = document.getElementById("viewer-3d");
    var drawnKey = [V.fam, V.problem == null ? "" : V.problem, V.solvers.join(","), n].join("|");
    var p = whenNear(div, function () { return Plotly.react(div, traces, withTemplate(layout), CONFIG).then(drawn); });
    function drawn() {
      // what is on screen now (for tests and tools): family|problem|solvers|frame
      document.getElementById("solve-viewer").setAttribute("data-drawn", drawnKey);
      if (!div._ikbSync) {
        div._ikbSync = true;
        div.on("plotly_relayout", function (ev) {
          if (V.syncing) return;
          var key = Object.keys(ev).filter(function (k) { return /^scene\d*\.camera$/.test(k); })[0];
          if (!key) return;
          V.camera = ev[key];
          var upd = {};
          V.views.forEach(function (v, i) { var s = i === 0 ? "scene" : "scene" + (i + 1); if (s + ".camera" !== key) upd[s + ".camera"] = ev[key]; });
          V.syncing = true;
          Plotly.relayout(div, upd).then(function () { V.syncing = false; }, function () { V.syncing = false; });
        });
      }
    }
    pending.push(p);
    writeStatus();
    drawCurve();
    var fd = famData(), lab = document.getElementById("viewer-frame-label");
    var f = V.frames[n];
    lab.textContent = fd.mode === "clip" ? ("frame " + (n + 1) + " of " + V.frames.length + ": problem " + f.problem) :
      (f.result ? "the returned configuration" : "iteration " + f.it + (f.sub ? " (next attempt)" : "")) + " (frame " + (n + 1) + " of " + V.frames.length + ")";
    return p;
  }

  function writeStatus() {
    var box = document.getElementById("viewer-status"), fd = famData(), n = V.frame;
    box.innerHTML = "";
    V.views.forEach(function (v, i) {
      var st = V.states[i], col = (STYLE[v.spec] || {}).colour || "#999", parts = [];
      var d = el("div", { style: "border-left-color:" + col, "data-solver": v.spec, "data-claim": st.claim });
      d.appendChild(el("b", { text: v.spec }));
      if (fd.mode === "clip") {
        parts.push(st.label);
      } else {
        var info = v.info, A = v.attempts.length;
        parts.push("solve: " + info.status + (info.success ? " ✓" : info.converged ? " (outside limits)" : "") + " after " + info.iterations + " iterations" +
          (A > 1 ? " over " + A + " attempts" : "") + ", " + fmtNum(info.time_us, 1) + " µs" + (v.sols.length > 1 ? ", " + v.sols.length + " solutions" : ""));
        if (info.message) parts.push(info.message);
        if (info.collision_free != null)
          parts.push(info.collision_free ? "collision-free (clearance " + fmtNum(info.min_clearance * 1000, 1) + " mm, " + info.collision_pair + ")"
            : "COLLIDES: " + info.collision_pair + " (" + fmtNum(-info.min_clearance * 1000, 1) + " mm deep)");
        parts.push(st.label);
        if (info.trace && info.trace.records > traceQ(info.trace).length) parts.push("trace of " + info.trace.records + " records thinned to " + info.trace.q.length + " (each attempt's first and last kept)");
      }
      if (st.eff) {
        parts.push("effector–target error (drawn): " + (st.pe == null ? "" : fmtSci(st.pe, 2) + " m") + (st.pe != null && st.oe != null ? ", " : "") + (st.oe == null ? "" : fmtSci(st.oe, 2) + " rad"));
        if (st.limits) parts.push(st.limits + " joint(s) on a limit");
      }
      d.appendChild(el("span", { cls: "err", text: " — " + parts.join(" · ") }));
      if (fd.mode !== "clip" && v.sols.length > 1) {
        // a solve that returned several solutions: pick the one the last frame draws
        var sel = el("select", { cls: "viewer-solution", "data-solver": v.spec, title: "solution drawn on the last frame" });
        v.sols.forEach(function (s, j) {
          sel.appendChild(el("option", { value: String(j), text: "solution " + j + (j === 0 ? " (returned)" : "") + (s.converged ? "" : " ✗") }));
        });
        sel.value = String(V.solPick[v.spec]);
        sel.addEventListener("change", function () { stop(); pickSolution(v.spec, Number(sel.value)); });
        d.appendChild(el("label", { cls: "solution-pick" }, [" draw ", sel]));
      }
      box.appendChild(d);
    });
  }

  function pickSolution(spec, j) {
    V.solPick[spec] = j;
    return setFrame(V.frames.length - 1);  // the last frame draws the picked solution
  }

  function drawCurve() {
    var fd = famData(), n = V.frame, data = [], cur = { x: [], y: [], c: [] }, ret = { x: [], y: [], c: [], t: [] };
    var kindP = fd.mode === "clip" ? true : currentProblem().goals.some(function (g) { return g.kind !== "orientation"; });
    var kindO = fd.mode === "clip" ? goalsAt(0).some(function (g) { return g.kind !== "position"; }) : currentProblem().goals.some(function (g) { return g.kind !== "position"; });
    var floor = function (e) { return e == null ? null : Math.max(e, 1e-16); };
    V.views.forEach(function (v) {
      var col = (STYLE[v.spec] || {}).colour || "#444";
      var x = [], pe = [], oe = [];
      if (fd.mode === "clip") { x = V.frames.map(function (f) { return f.problem; }); pe = v.clip.pe.map(floor); oe = v.clip.oe.map(floor); }
      else {
        // one line per attempt: a gap where a restart begins, so that a restart is not drawn as the error rising
        v.recs.it.forEach(function (it, k) {
          if (k && v.recs.a && v.recs.a[k] !== v.recs.a[k - 1]) { x.push(it); pe.push(null); oe.push(null); }
          x.push(it); pe.push(floor(v.recs.pe[k])); oe.push(floor(v.recs.oe[k]));
        });
      }
      if (kindP) data.push({ type: "scatter", mode: "lines+markers", name: v.spec + " position [m]", x: x, y: pe, line: { color: col, width: 1.6 }, marker: { size: 4 } });
      if (kindO) data.push({ type: "scatter", mode: "lines+markers", name: v.spec + " orientation [rad]", x: x, y: oe, line: { color: col, width: 1.2, dash: "dash" }, marker: { size: 3 } });
      var k = v.idx[n], xr = fd.mode === "clip" ? null : v.info.iterations;
      if (k === "R") {
        var s = v.sols[V.solPick[v.spec]];
        if (kindP && s.position_error != null) { cur.x.push(xr); cur.y.push(floor(s.position_error)); cur.c.push(col); }
        if (kindO && s.orientation_error != null) { cur.x.push(xr); cur.y.push(floor(s.orientation_error)); cur.c.push(col); }
      } else {
        var px = fd.mode === "clip" ? V.frames[k].problem : v.recs.it[k], ep = fd.mode === "clip" ? v.clip.pe[k] : v.recs.pe[k], eo = fd.mode === "clip" ? v.clip.oe[k] : v.recs.oe[k];
        if (kindP && ep != null) { cur.x.push(px); cur.y.push(floor(ep)); cur.c.push(col); }
        if (kindO && eo != null) { cur.x.push(px); cur.y.push(floor(eo)); cur.c.push(col); }
      }
      if (fd.mode !== "clip" && v.sols.length) {
        var s0 = v.sols[V.solPick[v.spec]], lab = v.sols.length > 1 ? "solution " + V.solPick[v.spec] : "returned q";
        if (kindP && s0.position_error != null) { ret.x.push(xr); ret.y.push(floor(s0.position_error)); ret.c.push(col); ret.t.push(v.spec + ": " + lab + " (position)"); }
        if (kindO && s0.orientation_error != null) { ret.x.push(xr); ret.y.push(floor(s0.orientation_error)); ret.c.push(col); ret.t.push(v.spec + ": " + lab + " (orientation)"); }
      }
    });
    if (ret.x.length) data.push({ type: "scatter", mode: "markers", name: "returned", x: ret.x, y: ret.y, text: ret.t, hovertemplate: "%{text}: %{y:.3g}<extra></extra>", marker: { size: 11, symbol: "star", color: ret.c, line: { color: "#000", width: 1 } } });
    data.push({ type: "scatter", mode: "markers", name: "current", x: cur.x, y: cur.y, showlegend: false, hoverinfo: "skip", marker: { size: 12, color: "rgba(0,0,0,0)", line: { color: cur.c, width: 2.5 } } });
    var f = V.frames[n], xnow = fd.mode === "clip" ? f.problem : f.it;
    var tol = DATA.run.tolerances;
    var shapes = [{ type: "line", xref: "x", x0: xnow, x1: xnow, yref: "paper", y0: 0, y1: 1, line: { color: "#555", width: 1, dash: "dot" } },
      { type: "line", xref: "paper", x0: 0, x1: 1, yref: "y", y0: tol[0], y1: tol[0], line: { color: "#000", width: 1, dash: "dot" } }];
    var layout = { height: 300, margin: { l: 70, r: 20, t: 30, b: 45 }, shapes: shapes, hovermode: "closest",
      title: { text: fd.mode === "clip" ? "error of each problem's returned configuration (solves.csv)" : "error over the traced iterations (traces.csv; one line per attempt), ★ the returned configuration", font: { size: 13 } },
      xaxis: { title: { text: fd.mode === "clip" ? "problem (frame)" : "iteration (over all attempts)" } },
      yaxis: { type: "log", title: { text: "error (dotted: tolerance)" }, exponentformat: "power" }, legend: { font: { size: 10 } }, uirevision: "c" + V.rev };
    var lay = withTemplate(layout);
    pending.push(whenNear("viewer-curve", function () { return Plotly.react("viewer-curve", data, lay, CONFIG); }));
  }

  function setFrame(n) {
    n = Math.max(0, Math.min(V.frames.length - 1, n | 0));
    V.frame = n;
    document.getElementById("viewer-slider").value = String(n);
    return draw(false);
  }
  function stop() { if (V.timer) { clearInterval(V.timer); V.timer = null; document.getElementById("viewer-play").textContent = "play"; } }
  function togglePlay() {
    if (V.timer) { stop(); return; }
    if (V.frame >= V.frames.length - 1) setFrame(0);
    document.getElementById("viewer-play").textContent = "pause";
    V.timer = setInterval(function () {
      if (V.frame >= V.frames.length - 1) { stop(); return; }
      setFrame(V.frame + 1);
    }, 120);
  }

  // A trace's configurations travel delta-coded (report_viewer.encode_trace_q): row k is
  // unit * (delta[0] + ... + delta[k]), except the exact rows (each attempt's last record).
  // Decoded once, when the viewer first shows the solve.
  function traceQ(tr) {
    if (tr.q) return tr.q;
    var qd = tr.qd, rows = [];
    if (qd) {
      var acc = qd.delta.length ? qd.delta[0].map(function () { return 0; }) : [];
      qd.delta.forEach(function (d) {
        for (var j = 0; j < d.length; j++) acc[j] += d[j];
        rows.push(acc.map(function (x) { return x * qd.unit; }));
      });
      qd.exact.forEach(function (e) { rows[e[0]] = e[1]; });
    }
    tr.q = rows;
    return rows;
  }

  // state for tests and tools: what the viewer draws now
  window.ikbench = {
    data: DATA,
    viewer: {
      state: function () {
        return { family: V.fam, problem: V.problem, solvers: V.solvers.slice(), frame: V.frame,
          frames: V.frames.map(function (f) { return f.result ? "returned" : f.it; }),
          tolerances: DATA.run.tolerances,
          views: V.views.map(function (v, i) {
            var s = V.states[i] || {};
            return { spec: v.spec, effectors: s.eff || null, position_error: s.pe, orientation_error: s.oe, joints_on_limit: s.limits,
              claim: s.claim, label: s.label, drawn: s.kind, record: s.record, attempt: s.attempt, solution: s.solution,
              solutions: v.sols ? v.sols.length : 0, q: s.q || null };
          }) };
      },
      solution: function (spec, j) { stop(); return pickSolution(spec, j); },
      family: viewerFamily, problem: viewerProblem, setFrame: setFrame,
      solvers: function (list) { stop(); V.solvers = list.slice(0, 4); buildViewerPicker(); return viewerSelect(); }
    },
    sortSummary: sortSummary, fk: fk, drawAll: drawAll,
    csv: function (name) { return CSV_TABLES[name](); }
  };

  // ------------------------------------------------------------------ go
  function main() {
    renderHeader();
    renderHeadline();
    renderRobots();
    renderSummary();
    renderHeatmap();
    renderFamilySection();
    renderDof();
    renderSolvers();
    renderSweeps();
    renderCoverage();
    renderQuality();
    renderRun();
    var v = renderViewer();
    TIMES.laid_out = Math.round(performance.now());
    Promise.resolve(v).then(function () { return Promise.all(pending); }).then(function () {
      TIMES.ready = Math.round(performance.now());
      document.body.setAttribute("data-ikbench-ready", errors.length ? "error" : "1");
    }, function (e) { showError(String(e && e.message || e)); document.body.setAttribute("data-ikbench-ready", "error"); });
  }
  try { main(); } catch (e) { showError(e && e.stack || String(e)); document.body.setAttribute("data-ikbench-ready", "error"); }
})();
