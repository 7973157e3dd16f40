// The playground page (docs/playground.md): drag a target, and up to four
// solver specs follow it, solved by the project's own C++ compiled to
// WebAssembly (playground/session.h). This file is the page's control: the
// model, scene and spec panels, the per-frame solving, step and path modes,
// and window.ikbenchPlayground (the state the browser test reads). Drawing is
// scene.js's.
//
// A frame solves only when something moved (a target, a parameter), renders
// only when something changed, refreshes the spec panels (text, curves) at
// most every PANEL_MS, and times its parts (state.perf).
/* global THREE, IkbScene, createIkbenchPlayground */
"use strict";

(function () {
  var DATA = JSON.parse(document.getElementById("playground-data").textContent);
  var COLORS = [0x1f77b4, 0xff7f0e, 0x2ca02c, 0x9467bd];
  var CSS_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"];
  var MAX_SPECS = 4;
  var MAX_RESIDUALS = 400;      // points of a step-mode residual curve
  // The page's first specs on each model and goal kind: the first three of
  // DEFAULT_CHOICES that apply to it (a backend that does not, FABRIK on
  // pose goals say, answers `unsupported`), then auto. Until the user
  // changes a spec; from then on the specs are theirs.
  var DEFAULT_CHOICES = ["dls", "ccd", "fabrik", "lm", "sdls"];
  var PANEL_MS = 100;           // the panels' refresh interval in live and path mode

  var P = {
    session: null, catalog: null, backends: {}, presets: {},
    modelKey: null, model: null, info: null, goals: [], kind: "position",
    specs: [], mode: "live", layout: "overlay", dirty: true, redraw: true, panelsShown: 0, panelsStale: false,
    sceneKey: "", scene: null, sceneInfo: null, obstacles: null, margin: 0.01, showShapes: false, renderer: "",
    path: {shape: "circle", radius: 0.15, period: 4, t: 0, center: null, u: null, v: null, last: 0, frames: 0},
    frames: 0, scale: 1, errors: []
  };
  // Where a frame's time goes: the module's calls (the C++ solves), the
  // JavaScript around them (JSON, panels, updating the drawn objects), and
  // three.js' render call; the last PERF_FRAMES frames, for the header and
  // state.perf.
  var PERF_FRAMES = 240, BUDGET_MS = 1000 / 60;
  var T = {module: 0};   // this frame's time in the module's calls [ms]
  var perf = {work: [], module: [], render: [], glue: [], stamps: []};
  // What the page shows, read by the tests: computed when read (getters, see
  // stateGetters), so that frames do not pay for it.
  var state = {ready: false, absent: [], errors: P.errors};
  window.ikbenchPlayground = {state: state};

  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // One Session call (playground/session.h): JSON in, JSON out.
  function call(method, arg) {
    var text = arg === undefined ? undefined : JSON.stringify(arg);
    var t0 = performance.now(), out = text === undefined ? P.session[method]() : P.session[method](text);
    T.module += performance.now() - t0;
    return JSON.parse(out);
  }
  function fmtNum(x, digits) {
    if (x === null || x === undefined || !isFinite(x)) return String(x);
    if (x === 0) return "0";
    return Math.abs(x) >= 1e-3 && Math.abs(x) < 1e4 ? x.toPrecision(digits || 3) : x.toExponential((digits || 3) - 1);
  }

  // ---------------------------------------------------------------- specs
  // A spec's text from its backend (or preset) and the keys set in its panel.
  function parseSpecText(text) {
    var parts = text.split(":"), keys = {};
    parts.slice(1).forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) keys[kv.slice(0, i)] = kv.slice(i + 1);
    });
    return {name: parts[0], keys: keys};
  }
  function specText(name, keys) {
    var s = name;
    Object.keys(keys).forEach(function (k) { if (keys[k] !== "") s += ":" + k + "=" + keys[k]; });
    return s;
  }
  // The parameters a spec's panel offers: the backend's own (a preset's
  // backend, the preset's values as defaults), then the keys every solver takes.
  function paramsOf(name) {
    var backend = name, defaults = {};
    if (P.presets[name]) {
      var p = parseSpecText(P.presets[name].spec);
      backend = p.name;
      defaults = p.keys;
    }
    var own = (P.backends[backend] || {parameters: []}).parameters.map(function (p) {
      return Object.assign({}, p, {group: backend, default: defaults[p.name] !== undefined ? defaults[p.name] : p.default});
    });
    // collision= only means something in a scene: offered when one is shown.
    var common = P.catalog.common_parameters.filter(function (p) { return p.name !== "collision" || P.scene; }).map(function (p) {
      return Object.assign({}, p, {group: "every solver", default: defaults[p.name] !== undefined ? defaults[p.name] : p.default});
    });
    return own.concat(common);
  }
  // "[0, inf)", "(0, 2]", "{a, b}" -> {lo, hi, choices}
  function parseRange(text) {
    text = (text || "").trim();
    if (text[0] === "{") return {choices: text.slice(1, -1).split(",").map(function (s) { return s.trim(); })};
    var m = /^([[(])\s*([^,]+),\s*([^\])]+)([\])])$/.exec(text);
    if (!m) return {};
    var num = function (s) { s = s.trim(); return s === "inf" ? Infinity : s === "-inf" ? -Infinity : Number(s); };
    return {lo: num(m[2]), hi: num(m[3]), loOpen: m[1] === "(", hiOpen: m[4] === ")"};
  }

  function Spec(index, text) {
    this.index = index;
    this.color = COLORS[index];
    var p = parseSpecText(text);
    this.name = p.name;
    this.keys = p.keys;
    this.q = null;
    this.result = null;
    this.residuals = [];
    this.jump = 0;
    this.maxJump = 0;
    this.steps = 0;
    this.view = null;
    this.error = null;
    this.frames = null;     // the drawn configuration's body poses, limits and clearances
    this.atLimit = null;
    this.collision = null;
  }
  Spec.prototype.text = function (override) {
    var keys = Object.assign({}, this.keys, override || {});
    return specText(this.name, keys);
  };

  function buildSpecPanel(spec) {
    var card = el("div", {"class": "spec", id: "spec-" + spec.index});
    card.style.borderLeftColor = CSS_COLORS[spec.index];
    var head = el("div", {"class": "spec-head"});
    var sel = el("select", {id: "spec-" + spec.index + "-backend", title: "backend or preset"});
    Object.keys(P.backends).concat(Object.keys(P.presets)).sort().forEach(function (n) {
      var o = el("option", {value: n}, n + (P.presets[n] ? " (preset)" : ""));
      if (n === spec.name) o.selected = true;
      sel.appendChild(o);
    });
    sel.addEventListener("change", function () {
      spec.name = sel.value;
      spec.keys = {};
      P.specsChosen = true;
      rebuildSpecs();
    });
    var remove = el("button", {"class": "small", title: "remove this spec"}, "\u00d7");
    remove.addEventListener("click", function () {
      P.specsChosen = true;
      P.specs.splice(spec.index, 1);
      rebuildSpecs();
    });
    head.appendChild(sel);
    head.appendChild(el("code", {"class": "spec-text", id: "spec-" + spec.index + "-text"}, spec.text()));
    if (P.specs.length > 1) head.appendChild(remove);
    card.appendChild(head);
    var desc = (P.backends[spec.name] || P.presets[spec.name] || {}).description || "";
    card.appendChild(el("div", {"class": "spec-desc"}, desc));
    var budget = /(?:^|:)time_budget_us=(\d+(?:\.\d+)?)/.exec(P.presets[spec.name] ? P.presets[spec.name].spec : "");
    if (budget && Number(budget[1]) > 0 && spec.keys.time_budget_us === undefined) {
      card.appendChild(el("div", {"class": "spec-desc note", id: "spec-" + spec.index + "-budget"},
        "Its " + Number(budget[1]) / 1000 + " ms time budget is wall-clock: this page's WebAssembly (portable " +
        "kernel, in a browser) does fewer restarts in it than ikbench run does natively, so it can fail here " +
        "where a report shows success. With time_budget_us=0 its restarts alone bound it, as natively."));
    }
    card.appendChild(el("div", {"class": "spec-stats", id: "spec-" + spec.index + "-stats"}, "\u2014"));
    var curve = el("canvas", {"class": "curve", id: "spec-" + spec.index + "-curve", width: 300, height: 70});
    card.appendChild(curve);
    var details = el("details", {"class": "params"});
    details.appendChild(el("summary", {}, "parameters"));
    var lastGroup = null;
    paramsOf(spec.name).forEach(function (p) {
      if (p.group !== lastGroup) {
        details.appendChild(el("div", {"class": "param-group"}, p.group));
        lastGroup = p.group;
      }
      details.appendChild(paramInput(spec, p));
    });
    if (spec.name === "dls" || spec.name === "dls-adaptive") details.open = true;
    card.appendChild(details);
    return card;
  }

  // One parameter's input, from its type and range; a change rebuilds the
  // spec text and is solved on the next frame.
  function paramInput(spec, p) {
    var row = el("label", {"class": "param", title: p.help + (p.unit ? " [" + p.unit + "]" : "")});
    var id = "spec-" + spec.index + "-param-" + p.name;
    row.appendChild(el("span", {"class": "param-name"}, p.name));
    var r = parseRange(p.range), input;
    var value = spec.keys[p.name] !== undefined ? spec.keys[p.name] : p.default;
    if (p.type === "bool") {
      input = el("input", {type: "checkbox", id: id});
      input.checked = value === "true" || value === "1";
    } else if (p.type === "choice" || r.choices) {
      input = el("select", {id: id});
      input.appendChild(el("option", {value: ""}, p.default === "" ? "(default)" : "(default: " + p.default + ")"));
      (r.choices || []).forEach(function (c) {
        var o = el("option", {value: c}, c);
        if (spec.keys[p.name] === c) o.selected = true;
        input.appendChild(o);
      });
    } else {
      input = el("input", {type: "number", id: id, step: p.type === "integer" ? "1" : "any",
                           placeholder: p.default === "" ? "(run's)" : p.default});
      if (isFinite(r.lo)) input.min = r.lo;
      if (isFinite(r.hi)) input.max = r.hi;
      if (spec.keys[p.name] !== undefined) input.value = spec.keys[p.name];
    }
    input.setAttribute("data-param", p.name);
    var apply = function () {
      var v = p.type === "bool" ? (input.checked ? "true" : "false") : String(input.value).trim();
      if (v === "" || (p.type === "bool" && v === p.default)) delete spec.keys[p.name];
      else spec.keys[p.name] = v;
      spec.error = null;
      P.specsChosen = true;
      $("spec-" + spec.index + "-text").textContent = spec.text();
      paneLabels();
      P.dirty = true;
    };
    input.addEventListener("change", apply);
    input.addEventListener("input", apply);
    row.appendChild(input);
    row.appendChild(el("span", {"class": "param-range"}, p.range + (p.unit && p.unit !== "1" ? " " + p.unit : "")));
    return row;
  }

  function rebuildSpecs() {
    var box = $("specs");
    box.innerHTML = "";
    P.specs.forEach(function (s, i) {
      s.index = i;
      s.color = COLORS[i];
      box.appendChild(buildSpecPanel(s));
    });
    $("add-spec").disabled = P.specs.length >= MAX_SPECS;
    rebuildViews();
    P.dirty = true;
  }

  // ---------------------------------------------------------------- models
  function modelOptions() {
    var sel = $("model");
    DATA.models.forEach(function (m) { sel.appendChild(el("option", {value: m.key}, m.label)); });
    sel.appendChild(el("option", {value: "random-chain"}, "random chain (DOF, seed)"));
    sel.appendChild(el("option", {value: "planar-chain"}, "planar chain (DOF, seed)"));
    sel.addEventListener("change", function () { loadModel(sel.value); });
    ["chain-dof", "chain-seed"].forEach(function (id) {
      $(id).addEventListener("change", function () { loadModel(P.modelKey); });
    });
    $("chain-dof").addEventListener("input", function () { $("chain-dof-value").textContent = $("chain-dof").value; });
    $("goal-kind").addEventListener("change", function () { setKind($("goal-kind").value); });
  }

  // The model's entry (models.json format) and its goals' bodies and kind.
  function modelEntry(key) {
    if (key === "random-chain" || key === "planar-chain") {
      var dof = Number($("chain-dof").value), seed = Number($("chain-seed").value);
      var planar = key === "planar-chain";
      var model = call("randomChain", {id: key + "-" + dof + "-" + seed, dof: dof, seed: seed,
                                       axes: planar ? "planar" : "random"});
      if (model.error) throw new Error(model.error);
      var added = call("addModel", model);
      if (added.error) throw new Error(added.error);
      // The first targets: a reachable problem of the chain (FK of a random q).
      var first = call("problems", {model: model.id, count: 1, seed: seed, kind: "pose", effectors: ["tip"]});
      if (first.error) throw new Error(first.error);
      return {key: key, label: model.id, model: model, kind: planar ? "position" : "pose", goals: first[0].goals};
    }
    for (var i = 0; i < DATA.models.length; ++i) if (DATA.models[i].key === key) return DATA.models[i];
    throw new Error("no model '" + key + "'");
  }

  function loadModel(key) {
    var entry = modelEntry(key);
    var info = call("addModel", entry.model);
    if (info.error) throw new Error(info.error);
    P.modelKey = key;
    P.model = entry.model;
    P.info = info;
    P.entry = entry;
    $("chain-controls").style.display = key === "random-chain" || key === "planar-chain" ? "" : "none";
    $("model").value = key;
    P.scale = IkbScene.modelScale(entry.model);
    P.path.radius = 0.15 * P.scale;
    $("path-radius").value = P.path.radius.toFixed(3);
    // A new model in the module has no scene: the chosen one is built on it
    // again. A run's model comes with the scene it was checked in, offered
    // (and chosen) as the first scene.
    P.scene = null;
    var recorded = $("scene").querySelector("option[value='" + RECORDED + "']");
    if (recorded) recorded.parentNode.removeChild(recorded);
    if (info.recorded_scene) {
      $("scene").insertBefore(el("option", {value: RECORDED}, "the run's: " + info.recorded_scene), $("scene").options[1] || null);
      P.sceneKey = RECORDED;
    } else if (P.sceneKey === RECORDED) {
      P.sceneKey = "";
    }
    setKind(entry.kind);
    setScene(P.sceneKey);
  }
  var RECORDED = "@recorded";

  // ---------------------------------------------------------------- scenes
  function sceneOptions() {
    var sel = $("scene");
    DATA.scenes.forEach(function (sc) {
      sel.appendChild(el("option", {value: sc.name, title: sc.description},
                         sc.name + " (" + sc.obstacles + " obstacle" + (sc.obstacles === 1 ? "" : "s") + ")"));
    });
    sel.addEventListener("change", function () { setScene(sel.value); });
    $("scene-seed").addEventListener("change", function () { setScene(P.sceneKey); });
    $("scene-shapes").addEventListener("change", function () { setShowShapes($("scene-shapes").checked); });
    $("scene-margin").addEventListener("input", function () {
      var m = Number($("scene-margin").value);
      if ($("scene-margin").value !== "" && isFinite(m) && m >= 0) setMargin(m, true);
    });
  }
  function sceneFile(name) {
    for (var i = 0; i < DATA.scenes.length; ++i) if (DATA.scenes[i].name === name) return DATA.scenes[i];
    throw new Error("no scene '" + name + "'");
  }

  // Poses the current model in scene `name` ("": none): the module builds the
  // collision world from the scene file (the project's scene reader, with the
  // box seed of the page) and every later solve of the model runs in it.
  function setScene(name, seed) {
    var file = name && name !== RECORDED ? sceneFile(name) : null, text = name === RECORDED ? "recorded" : null;
    var note = $("scene-note");
    if (file) {
      text = JSON.parse(JSON.stringify(file.scene));
      if (text.random_boxes) {
        if (seed !== undefined) $("scene-seed").value = seed;
        if ($("scene-seed").value === "") $("scene-seed").value = text.random_boxes.seed || 0;
        text.random_boxes.seed = Number($("scene-seed").value);
      }
    }
    P.sceneSeed = text && text.random_boxes ? text.random_boxes.seed : null;
    var r = call("setScene", {model: P.model.id, scene: text, source: file ? file.file : ""});
    note.className = "note";
    if (r.error) {
      name = "";
      P.scene = P.sceneInfo = null;
      note.textContent = r.error;
      note.className = "note bad";
    } else {
      P.scene = r.scene;
      P.sceneInfo = r;
      var meshes = r.scene ? r.scene.links.filter(function (l) { return l.type === "mesh"; }).length : 0;
      note.textContent = r.scene ? r.description + " " + r.scene.pairs.length + " pairs checked. Clearances: the " +
        "inner-loop capsule and box distances of the project's collision library (collision=avoid's), compiled to " +
        "WebAssembly; FCL, the exact check of ikbench run, is not in the page." +
        (meshes ? " " + meshes + " link shape" + (meshes === 1 ? " is a mesh" : "s are meshes") + " (drawn as " +
          "triangles; their clearances are those of the capsule or box that encloses each)." : "") : "";
    }
    P.sceneKey = name;
    $("scene").value = name;
    $("scene-seed-row").style.display = file && file.scene.random_boxes ? "" : "none";
    $("scene-controls").style.display = P.scene || r.error ? "" : "none";
    P.specs.forEach(function (s) { s.collision = null; s.result = null; });
    if (P.specs.length && $("specs").childNodes.length) rebuildSpecs();  // the collision key comes or goes
    else rebuildViews();
    P.dirty = true;
  }

  // The margin [m]; typed: the field already says it (rewriting it would move the caret).
  function setMargin(m, typed) {
    P.margin = m;
    if (!typed) $("scene-margin").value = m;
    redrawSpecs();
  }
  // Whether clear collision shapes are drawn too.
  function setShowShapes(on) {
    P.showShapes = on;
    $("scene-shapes").checked = on;
    redrawSpecs();
  }
  // Every spec drawn again at its configuration (the margin or what is drawn changed).
  function redrawSpecs() {
    P.specs.forEach(function (s) { if (s.frames) s.view.update(s.frames, s.atLimit, s.collision, P.margin, P.showShapes); });
    P.redraw = true;
  }

  function bodyIndex(name) {
    for (var i = 0; i < P.model.joints.length; ++i) if (P.model.joints[i].body === name) return i;
    throw new Error("no body '" + name + "' in " + P.model.id);
  }

  // The goals at the model's first targets (a reachable problem: FK of a
  // random configuration within the limits), every spec starting from the
  // middle of the limits; the first frame solves towards them.
  function setKind(kind) {
    P.kind = kind;
    $("goal-kind").value = kind;
    var start = P.info.middle;
    P.goals = P.entry.goals.map(function (g) {
      var t = g.target_quat_xyzw;
      return {body: g.body, body_index: bodyIndex(g.body), point: g.point,
              pos: new THREE.Vector3().fromArray(g.target_position), quat: new THREE.Quaternion(t[0], t[1], t[2], t[3])};
    });
    if (!P.specsChosen) {
      P.specs = defaultSpecs().map(function (t, i) { return new Spec(i, t); });
      if ($("specs").childNodes.length) rebuildSpecs();
    }
    P.specs.forEach(function (s) {
      s.q = start.slice();
      s.residuals = [];
      s.steps = 0;
      s.maxJump = 0;
      s.result = s.frames = s.atLimit = s.collision = null;
    });
    P.activeGoal = 0;
    rebuildViews();
    P.dirty = true;
  }

  // "overlay" (every spec in one view) or "side" (a pane per spec).
  function setLayout(layout) {
    P.layout = layout;
    $("layout").value = layout;
    rebuildViews();
    P.dirty = true;
  }

  // DEFAULT_CHOICES' first three that apply to the model and goal kind (one
  // iteration from the middle of the limits towards the first targets is not
  // `unsupported`), then auto.
  function defaultSpecs() {
    var line = problemLine(P.info.middle), out = [];
    for (var i = 0; i < DEFAULT_CHOICES.length && out.length < 3; ++i) {
      var r = call("solve", {problem: line, spec: DEFAULT_CHOICES[i] + ":max_iterations=1", trace: false});
      if (!r.error && r.status !== "unsupported") out.push(DEFAULT_CHOICES[i]);
    }
    return out.concat(["auto"]);
  }

  // New targets: the effectors' poses at a random configuration within the
  // limits (Session.problems, seeded; collision-free in a scene: REACH's
  // targets), the specs staying where they are.
  function newTarget(seed) {
    P.targetSeed = seed !== undefined ? seed : (P.targetSeed || 0) + 1;
    var ps = call("problems", {model: P.model.id, count: 1, seed: P.targetSeed, kind: P.kind,
                               effectors: P.goals.map(function (g) { return g.body; })});
    if (ps.error) throw new Error(ps.error);
    ps[0].goals.forEach(function (g, k) {
      var t = g.target_quat_xyzw;
      P.goals[k].pos.fromArray(g.target_position);
      P.goals[k].quat.set(t[0], t[1], t[2], t[3]);
    });
    P.dirty = true;
  }

  // The problem the specs solve this frame (a problems.jsonl line).
  function problemLine(q0) {
    return {family: "playground", problem: 0, name: "playground", model: P.model.id, sequential: false, q0: q0,
            goals: P.goals.map(function (g) {
              return {body: g.body, body_index: g.body_index, point: g.point, kind: P.kind,
                      target_position: [g.pos.x, g.pos.y, g.pos.z],
                      target_quat_xyzw: [g.quat.x, g.quat.y, g.quat.z, g.quat.w], weight: 1, orientation_scale: 1};
            })};
  }

  // ---------------------------------------------------------------- 3D views
  var renderer, scene, camera, controls, gizmo, raycaster = new THREE.Raycaster(), targets = [], pathLine = null;

  // The WebGL implementation's name, and whether it rasterises in software
  // (headless Chromium's SwiftShader, Mesa's llvmpipe).
  function glRenderer() {
    try {
      var gl = document.createElement("canvas").getContext("webgl");
      var ext = gl && gl.getExtension("WEBGL_debug_renderer_info");
      var name = gl ? String(gl.getParameter(ext ? ext.UNMASKED_RENDERER_WEBGL : gl.RENDERER)) : "none";
      var lose = gl && gl.getExtension("WEBGL_lose_context");
      if (lose) lose.loseContext();
      return {name: name, software: /swiftshader|llvmpipe|softpipe|software/i.test(name)};
    } catch (e) {
      return {name: "unknown", software: false};
    }
  }

  function initThree() {
    var canvas = $("view"), gl = glRenderer();
    // Multisampling costs a software rasteriser several times the frame; a GPU does it for free.
    P.renderer = gl.name;
    P.antialias = !gl.software;
    renderer = new THREE.WebGLRenderer({canvas: canvas, antialias: P.antialias});
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    scene = new THREE.Scene();
    camera = new THREE.PerspectiveCamera(45, 1, 0.01, 100);
    camera.up.set(0, 0, 1);
    controls = new THREE.OrbitControls(camera, canvas);
    gizmo = new THREE.TransformControls(camera, canvas);
    gizmo.setMode("rotate");
    gizmo.setSize(0.7);
    gizmo.addEventListener("dragging-changed", function (e) { controls.enabled = !e.value; });
    gizmo.addEventListener("change", function () { P.redraw = true; });
    controls.addEventListener("change", function () { P.redraw = true; });
    gizmo.addEventListener("objectChange", function () {
      var g = P.goals[P.activeGoal];
      if (g) { g.quat.copy(targets[P.activeGoal].group.quaternion); P.dirty = true; }
    });
    // Our drag of a target comes first: a press on a target's sphere never
    // reaches the orbit controls or the gizmo.
    canvas.addEventListener("mousedown", onDown, true);
    document.addEventListener("mousemove", onMove);
    document.addEventListener("mouseup", onUp);
    window.addEventListener("resize", resize);
  }

  function viewports() {
    var w = renderer.domElement.clientWidth, h = renderer.domElement.clientHeight;
    var n = P.layout === "side" ? Math.max(1, P.specs.length) : 1;
    var cols = n <= 2 ? n : 2, rows = Math.ceil(n / cols), out = [];
    for (var i = 0; i < n; ++i)
      out.push({x: (i % cols) * w / cols, y: Math.floor(i / cols) * h / rows, w: w / cols, h: h / rows});
    return out;
  }

  function resize() {
    var c = renderer.domElement;
    renderer.setSize(c.clientWidth, c.clientHeight, false);
    paneLabels();
    P.redraw = true;
  }

  // Which spec each pane shows (side by side: one label per pane; overlaid:
  // one line per spec in the corner), in the spec's colour.
  function paneLabels() {
    var box = $("pane-labels"), c = renderer.domElement;
    box.innerHTML = "";
    box.style.left = c.offsetLeft + "px";
    box.style.top = c.offsetTop + "px";
    var side = P.layout === "side", vps = viewports();
    P.specs.forEach(function (s, i) {
      var v = side ? vps[i] : vps[0];
      if (!v) return;
      var label = el("div", {"class": "pane-label", id: "pane-label-" + i}, s.text() + (s.unsupported ? " (unsupported here)" : ""));
      label.style.borderLeftColor = CSS_COLORS[i];
      label.style.left = v.x + 4 + "px";
      label.style.top = v.y + 4 + (side ? 0 : 20 * i) + "px";
      label.style.maxWidth = v.w - 8 + "px";
      box.appendChild(label);
    });
  }

  function rebuildViews() {
    if (!scene || !P.model) return;
    while (scene.children.length) scene.remove(scene.children[0]);
    IkbScene.world(scene, P.scale);
    if (P.obstacles) P.obstacles.dispose();
    P.obstacles = P.scene ? new IkbScene.Obstacles(P.scene) : null;
    if (P.obstacles) scene.add(P.obstacles.mesh);
    paneLabels();
    var overlay = P.layout === "overlay" && P.specs.length > 1;
    P.specs.forEach(function (s) {
      s.view = new IkbScene.ModelView(P.model, s.color, overlay ? 0.55 : 1, P.goals, P.scene);
      if (s.frames) s.view.update(s.frames, s.atLimit, s.collision, P.margin, P.showShapes);
      scene.add(s.view.group);
    });
    targets = P.goals.map(function (g) {
      var t = new IkbScene.Target(P.scale, P.kind !== "position");
      t.group.position.copy(g.pos);
      t.group.quaternion.copy(g.quat);
      scene.add(t.group);
      return t;
    });
    scene.add(gizmo);
    attachGizmo();
    pathLine = null;
    if (P.mode === "path") drawPath();
    frameCamera();
    P.redraw = true;
  }

  // The camera on the model in its start configuration, the targets and the
  // scene's obstacles (their centres), from the front left and above.
  function frameCamera() {
    var box = new THREE.Box3().expandByPoint(new THREE.Vector3());  // the base
    call("frames", {model: P.model.id, q: P.info.middle}).frames.forEach(function (f) {
      box.expandByPoint(new THREE.Vector3(f[0], f[1], f[2]));
    });
    P.goals.forEach(function (g) { box.expandByPoint(g.pos); });
    var obstacles = P.scene ? P.scene.obstacles : [];
    obstacles.forEach(function (o) { box.expandByPoint(new THREE.Vector3().fromArray(o.xyz)); });
    var c = box.getCenter(new THREE.Vector3()), r = Math.max(0.2, box.getSize(new THREE.Vector3()).length() / 2);
    controls.target.copy(c);
    // Around obstacles: higher and closer (their centres widen the box more than the model's extent).
    var around = obstacles.length > 0;
    camera.position.copy(c).add(new THREE.Vector3(1.3, -1.9, around ? 1.4 : 0.9).normalize().multiplyScalar((around ? 2.3 : 3.4) * r));
    controls.update();
  }

  function attachGizmo() {
    gizmo.detach();
    if (P.kind !== "position" && targets[P.activeGoal] && P.mode !== "path") gizmo.attach(targets[P.activeGoal].group);
  }

  // Mouse position -> (viewport, normalised device coordinates).
  function pick(ev) {
    var r = renderer.domElement.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
    var vps = viewports();
    for (var i = 0; i < vps.length; ++i) {
      var v = vps[i];
      if (x >= v.x && x < v.x + v.w && y >= v.y && y < v.y + v.h)
        return {index: i, vp: v, ndc: new THREE.Vector2((x - v.x) / v.w * 2 - 1, -((y - v.y) / v.h) * 2 + 1)};
    }
    return null;
  }
  var drag = null;
  function onDown(ev) {
    if (ev.button !== 0 || !P.model) return;
    var p = pick(ev);
    if (!p) return;
    camera.aspect = p.vp.w / p.vp.h;
    camera.updateProjectionMatrix();
    raycaster.setFromCamera(p.ndc, camera);
    var hits = raycaster.intersectObjects(targets.map(function (t) { return t.sphere; }));
    if (!hits.length) return;
    var k = targets.findIndex(function (t) { return t.sphere === hits[0].object; });
    var normal = camera.getWorldDirection(new THREE.Vector3());
    drag = {goal: k, plane: new THREE.Plane().setFromNormalAndCoplanarPoint(normal, P.goals[k].pos.clone()),
            vp: p.vp, offset: new THREE.Vector3().subVectors(P.goals[k].pos, hits[0].point)};
    P.activeGoal = k;
    attachGizmo();
    controls.enabled = false;
    ev.stopImmediatePropagation();
    ev.preventDefault();
  }
  function onMove(ev) {
    if (!drag) return;
    var r = renderer.domElement.getBoundingClientRect(), v = drag.vp;
    var ndc = new THREE.Vector2((ev.clientX - r.left - v.x) / v.w * 2 - 1, -((ev.clientY - r.top - v.y) / v.h) * 2 + 1);
    camera.aspect = v.w / v.h;
    camera.updateProjectionMatrix();
    raycaster.setFromCamera(ndc, camera);
    var hit = new THREE.Vector3();
    if (raycaster.ray.intersectPlane(drag.plane, hit)) {
      P.goals[drag.goal].pos.copy(hit.add(drag.offset));
      P.dirty = true;
    }
  }
  function onUp() {
    if (drag) { drag = null; controls.enabled = true; }
  }

  // Where goal k's target is drawn, in the page's client coordinates (viewport i).
  function screenOf(k, i) {
    var vps = viewports(), v = vps[Math.min(i || 0, vps.length - 1)], r = renderer.domElement.getBoundingClientRect();
    camera.aspect = v.w / v.h;
    camera.updateProjectionMatrix();
    var p = P.goals[k].pos.clone().project(camera);
    return {x: r.left + v.x + (p.x + 1) / 2 * v.w, y: r.top + v.y + (1 - p.y) / 2 * v.h};
  }

  function render() {
    var vps = viewports(), H = renderer.domElement.clientHeight, side = P.layout === "side";
    targets.forEach(function (t, k) {
      t.group.position.copy(P.goals[k].pos);
      t.group.quaternion.copy(P.goals[k].quat);
    });
    renderer.setScissorTest(true);
    vps.forEach(function (v, i) {
      P.specs.forEach(function (s, j) { if (s.view) s.view.group.visible = (!side || i === j) && !s.unsupported; });
      renderer.setViewport(v.x, H - v.y - v.h, v.w, v.h);
      renderer.setScissor(v.x, H - v.y - v.h, v.w, v.h);
      camera.aspect = v.w / v.h;
      camera.updateProjectionMatrix();
      renderer.render(scene, camera);
    });
    renderer.setScissorTest(false);
  }

  // ---------------------------------------------------------------- solving
  function maxJump(a, b) {
    var m = 0;
    for (var i = 0; i < a.length; ++i) m = Math.max(m, Math.abs(a[i] - b[i]));
    return m;
  }

  // One solve of spec s from its current q: the whole solve, or one
  // iteration (step mode: max_iterations=1, no restarts, the demos' loop).
  function solveSpec(s, oneStep) {
    var text = oneStep ? s.text({max_iterations: "1", restarts: "0", time_budget_us: "0"}) : s.text();
    var t0 = performance.now();
    var r = call("solve", {problem: problemLine(s.q), spec: text, trace: true});
    var wall = performance.now() - t0;
    if (r.error) {
      s.error = r.error;
      s.result = null;
      return;
    }
    s.error = null;
    r.wall_ms = wall;
    // A backend that does not apply answers no configuration: nothing is drawn for it.
    var was = s.unsupported;
    s.unsupported = r.status === "unsupported";
    if (s.unsupported !== was) paneLabels();
    if (s.unsupported) {
      s.result = r;
      s.residuals = [];
      return;
    }
    s.jump = maxJump(r.q, s.q);
    // The loop's largest jump, from the second path frame on (the first one
    // jumps from wherever the spec was onto the curve).
    if (P.mode === "path" && P.path.frames > 0) s.maxJump = Math.max(s.maxJump, s.jump);
    s.q = r.q;
    s.result = r;
    if (oneStep) {
      s.steps += 1;
      // (A backend that does not apply, unsupported, iterates not at all: no point.)
      if (s.residuals.length === 0 && r.trace.length) s.residuals.push(r.trace[0]);
      if (r.trace.length) s.residuals.push(r.trace[r.trace.length - 1]);
      if (s.residuals.length > MAX_RESIDUALS) s.residuals.shift();
    } else {
      s.residuals = r.trace;
    }
    showConfiguration(s, r);
  }

  // Draws spec s at a configuration's frames (a solve's or Session.frames' answer).
  function showConfiguration(s, r) {
    s.frames = r.frames;
    s.atLimit = r.at_limit;
    s.collision = r.collision;
    s.view.update(r.frames, r.at_limit, r.collision, P.margin, P.showShapes);
  }

  function showSpec(s) {
    var stats = $("spec-" + s.index + "-stats");
    if (!stats) return;
    if (s.error) {
      stats.textContent = "error: " + s.error;
      stats.className = "spec-stats bad";
      return;
    }
    var r = s.result;
    if (!r) return;
    if (s.unsupported) {
      stats.className = "spec-stats unsupported";
      stats.textContent = "unsupported here: " + (r.message || "the backend does not apply to this model and goal kind");
      drawCurve(s);
      return;
    }
    // Success in a scene is also collision-free (docs/collision.md).
    var ok = r.status === "converged" && !(s.collision && !s.collision.collision_free);
    stats.className = "spec-stats " + (ok ? "good" : "bad");
    stats.textContent = r.status + " \u00b7 " + r.iterations + " it" + (r.restarts ? " (" + r.restarts + " restarts)" : "") +
      " \u00b7 pos " + fmtNum(r.position_error) + " m" + (P.kind !== "position" ? " \u00b7 rot " + fmtNum(r.orientation_error) + " rad" : "") +
      // The page's clock ticks in 0.1 ms steps where the browser coarsens performance.now().
      " \u00b7 " + (r.time_us > 0 ? fmtNum(r.time_us) + " \u00b5s" : "< 0.1 ms") + " \u00b7 max|\u0394q| " + fmtNum(s.jump) +
      (P.mode === "path" ? " (loop max " + fmtNum(s.maxJump) + ")" : "") +
      (r.at_limit.length ? " \u00b7 " + r.at_limit.length + " DOF at limit" : "") +
      (P.mode === "step" ? " \u00b7 step " + s.steps : "") + collisionText(s.collision) +
      (r.message ? " \u00b7 " + r.message : "");
    drawCurve(s);
  }

  function collisionText(c) {
    if (!c) return "";
    if (!c.collision_free) return " \u00b7 COLLIDES: " + c.pair + " (" + fmtNum(-c.min_clearance * 1000) + " mm deep)";
    return " \u00b7 clearance " + (c.min_clearance === null ? "\u2014" : fmtNum(c.min_clearance * 1000) + " mm (" + c.pair + ")");
  }

  // The residual curve: position error (and rotation error for pose goals)
  // per iteration, log scale.
  function drawCurve(s) {
    var c = $("spec-" + s.index + "-curve");
    if (!c) return;
    var g = c.getContext("2d"), w = c.width, h = c.height, pts = s.residuals;
    g.clearRect(0, 0, w, h);
    g.fillStyle = "#fafafa";
    g.fillRect(0, 0, w, h);
    if (!pts.length) return;
    var lo = -12, hi = 1, n = Math.max(2, pts.length);
    var y = function (e) { var l = Math.log10(Math.max(e, 1e-12)); return h - 4 - (l - lo) / (hi - lo) * (h - 8); };
    g.strokeStyle = "#ccc";
    g.beginPath(); g.moveTo(0, y(1e-5)); g.lineTo(w, y(1e-5)); g.stroke();  // the default tolerance
    [[1, CSS_COLORS[s.index]], [2, "#888"]].forEach(function (col) {
      if (col[0] === 2 && P.kind === "position") return;
      g.strokeStyle = col[1];
      g.beginPath();
      pts.forEach(function (p, i) {
        var x = 2 + i / (n - 1) * (w - 4);
        if (i) g.lineTo(x, y(p[col[0]])); else g.moveTo(x, y(p[col[0]]));
      });
      g.stroke();
    });
    g.fillStyle = "#555";
    g.font = "10px sans-serif";
    g.fillText(P.mode === "step" ? "residual per step (log)" : "error per iteration of the last solve (log)", 4, 10);
  }

  // ---------------------------------------------------------------- modes
  function setMode(m) {
    P.mode = m;
    $("mode").value = m;
    $("step").disabled = m !== "step";
    $("path-controls").style.display = m === "path" ? "" : "none";
    P.specs.forEach(function (s) { s.residuals = []; s.steps = 0; s.maxJump = 0; });
    if (m === "path") {
      var g = P.goals[P.activeGoal || 0];
      P.path.center = g.pos.clone();
      var e = camera.matrixWorld.elements;
      P.path.u = new THREE.Vector3(e[0], e[1], e[2]).normalize();
      P.path.v = new THREE.Vector3(e[4], e[5], e[6]).normalize();
      P.path.t = 0;
      P.path.frames = 0;
      P.path.last = performance.now();
      drawPath();
    } else if (pathLine) {
      scene.remove(pathLine);
      pathLine = null;
    }
    attachGizmo();
    P.dirty = true;
  }
  function pathPoint(t) {
    var a = 2 * Math.PI * t, r = P.path.radius, c = P.path.center;
    var x = Math.sin(a), y = P.path.shape === "circle" ? Math.cos(a) : Math.sin(2 * a) / 2;
    return c.clone().addScaledVector(P.path.u, r * x).addScaledVector(P.path.v, r * y);
  }
  function drawPath() {
    if (!P.path.center) return;
    if (pathLine) scene.remove(pathLine);
    var pts = [];
    for (var i = 0; i <= 128; ++i) pts.push(pathPoint(i / 128));
    pathLine = IkbScene.Path(pts, 0x888888);
    scene.add(pathLine);
  }

  function step() {
    P.specs.forEach(function (s) { solveSpec(s, true); showSpec(s); });
    P.redraw = true;
  }

  // ---------------------------------------------------------------- frame loop
  function frame(now) {
    try {
      if (P.mode === "path") {
        var dt = (now - P.path.last) / 1000;
        P.path.last = now;
        P.path.t = (P.path.t + dt / P.path.period) % 1;
        P.goals[P.activeGoal || 0].pos.copy(pathPoint(P.path.t));
        P.dirty = true;
      }
      var t0 = performance.now();
      T.module = 0;
      if (P.dirty && P.mode !== "step") {
        P.specs.forEach(function (s) { solveSpec(s, false); });
        if (P.mode === "path") P.path.frames += 1;
        P.panelsStale = true;
      }
      if (P.dirty && P.mode === "step") P.specs.forEach(function (s) {
        // Redraw the current q against the moved target (no iteration).
        showConfiguration(s, call("frames", {model: P.model.id, q: s.q}));
      });
      P.redraw = P.redraw || P.dirty;
      P.dirty = false;
      // The panels' text and curves at most every PANEL_MS: faster than one reads.
      if (P.panelsStale && now - P.panelsShown >= PANEL_MS) {
        P.specs.forEach(showSpec);
        P.panelsStale = false;
        P.panelsShown = now;
      }
      var t1 = performance.now();
      if (P.redraw) render();
      P.redraw = false;
      var t2 = performance.now();
      P.frames += 1;
      recordPerf(now, t2 - t0, T.module, t2 - t1);
    } catch (e) {
      P.errors.push(String(e && e.stack || e));
      console.error(e);
    }
    requestAnimationFrame(frame);
  }

  function pushCapped(a, x) {
    if (a.length >= PERF_FRAMES) a.shift();
    a.push(x);
  }
  function quantile(a, p) {
    if (!a.length) return null;
    var b = a.slice().sort(function (x, y) { return x - y; });
    return b[Math.min(b.length - 1, Math.floor(p * b.length))];
  }
  function mean(a) { return a.length ? a.reduce(function (x, y) { return x + y; }, 0) / a.length : null; }
  // One frame's times [ms]: its whole work (what requestAnimationFrame's
  // callback did), the module's part and three.js' render call; the rest is
  // the page's JavaScript. Frames per second from the callbacks' timestamps
  // over the last second.
  function recordPerf(now, work, module, draw) {
    pushCapped(perf.work, work);
    pushCapped(perf.module, module);
    pushCapped(perf.render, draw);
    pushCapped(perf.glue, work - module - draw);
    pushCapped(perf.stamps, now);
    if (now - (perf.shown || 0) < 1000) return;
    perf.shown = now;
    var s = summary();
    $("fps").textContent = s.fps.toFixed(0) + " frames/s; work per frame " + s.work_ms.mean.toFixed(1) + " ms (p95 " +
      s.work_ms.p95.toFixed(1) + "): solve " + s.module_ms.mean.toFixed(1) + ", page " + s.glue_ms.mean.toFixed(1) +
      ", draw " + s.render_ms.mean.toFixed(1);
  }
  function summary() {
    var st = perf.stamps, last = st[st.length - 1], n = 0;
    for (var i = st.length - 1; i >= 0 && last - st[i] <= 1000; --i) n = st.length - 1 - i;
    var span = n ? last - st[st.length - 1 - n] : 0;
    var of = function (a) { return {mean: mean(a), p50: quantile(a, 0.5), p95: quantile(a, 0.95)}; };
    return {fps: span > 0 ? n * 1000 / span : 0, frames: perf.work.length, budget_ms: BUDGET_MS,
            over_budget: perf.work.filter(function (w) { return w > BUDGET_MS; }).length / Math.max(1, perf.work.length),
            work_ms: of(perf.work), module_ms: of(perf.module), glue_ms: of(perf.glue), render_ms: of(perf.render)};
  }

  // window.ikbenchPlayground.state: what the page shows, for the tests;
  // computed when read.
  function stateGetters() {
    var getters = {
      model: function () { return P.model && {key: P.modelKey, id: P.model.id, nq: P.model.nq, nv: P.model.nv}; },
      kind: function () { return P.kind; },
      mode: function () { return P.mode; },
      layout: function () { return P.layout; },
      frame: function () { return P.frames; },
      target_seed: function () { return P.targetSeed || null; },
      perf: summary,
      fps: function () { return summary().fps; },
      renderer: function () { return {name: P.renderer, antialias: P.antialias}; },
      targets: function () {
        return P.goals.map(function (g) {
          return {body: g.body, point: g.point, position: [g.pos.x, g.pos.y, g.pos.z],
                  quat_xyzw: [g.quat.x, g.quat.y, g.quat.z, g.quat.w]};
        });
      },
      scene: function () {
        if (!P.scene) return null;
        return {name: P.sceneKey, seed: P.sceneSeed, margin: P.margin, obstacles: P.scene.obstacles.length, pairs: P.scene.pairs.length,
                links: P.scene.links.map(function (l) { return l.name; })};
      },
      specs_chosen: function () { return !!P.specsChosen; },
      labels: function () {
        return Array.prototype.map.call($("pane-labels").childNodes, function (n) {
          var r = n.getBoundingClientRect();
          return {text: n.textContent, left: r.left, top: r.top, right: r.right, bottom: r.bottom};
        });
      },
      specs: function () {
        return P.specs.map(function (s) {
          var r = s.result || {};
          return {spec: s.text(), error: s.error, status: r.status, unsupported: !!s.unsupported,
                  stats: ($("spec-" + s.index + "-stats") || {}).textContent, drawn: !!(s.view && s.view.group.visible), iterations: r.iterations, restarts: r.restarts,
                  position_error: r.position_error, orientation_error: r.orientation_error, time_us: r.time_us,
                  q: s.q, at_limit: r.at_limit, jump: s.jump, max_jump: s.maxJump, steps: s.steps,
                  residuals: s.residuals.map(function (p) { return p[1]; }),
                  collision: s.collision && Object.assign({}, s.collision, {drawn: s.view.drawnShapes()})};
        });
      }
    };
    Object.keys(getters).forEach(function (k) { Object.defineProperty(state, k, {enumerable: true, get: getters[k]}); });
  }

  // ---------------------------------------------------------------- start
  function start(Module) {
    P.session = new Module.Session();
    P.catalog = call("catalog");
    P.catalog.solvers.forEach(function (b) { P.backends[b.name] = b; });
    P.catalog.presets.forEach(function (p) { P.presets[p.name] = p; });
    state.absent = DATA.native_solvers.filter(function (n) { return !P.backends[n] && !P.presets[n]; });
    $("absent").textContent = state.absent.length ?
      "Not in the page: " + state.absent.join(", ") + " (they need Ceres or Orocos KDL, which are not compiled to " +
      "WebAssembly; run them with ikbench run)." : "";
    stateGetters();
    initThree();
    modelOptions();
    sceneOptions();
    // The UR5 first where the page has it (the arm most readers know), else the first model.
    var first = DATA.models.some(function (m) { return m.key === "ur5"; }) ? "ur5" :
      DATA.models.length ? DATA.models[0].key : "random-chain";
    loadModel(first);
    rebuildSpecs();
    $("add-spec").addEventListener("click", function () {
      P.specsChosen = true;
      if (P.specs.length < MAX_SPECS) { P.specs.push(new Spec(P.specs.length, "dls")); P.specs[P.specs.length - 1].q = P.info.middle.slice(); rebuildSpecs(); }
    });
    $("mode").addEventListener("change", function () { setMode($("mode").value); });
    $("layout").addEventListener("change", function () { setLayout($("layout").value); });
    $("step").addEventListener("click", step);
    $("reset").addEventListener("click", function () { setKind(P.kind); });  // targets and q as loaded
    $("new-target").addEventListener("click", function () { newTarget(); });
    $("path-shape").addEventListener("change", function () { P.path.shape = $("path-shape").value; drawPath(); });
    $("path-radius").addEventListener("change", function () { P.path.radius = Number($("path-radius").value); drawPath(); });
    $("path-period").addEventListener("change", function () { P.path.period = Math.max(0.5, Number($("path-period").value)); });
    document.addEventListener("keydown", function (e) {
      if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
      if (e.key === "s" && P.mode === "step") step();
    });
    resize();
    setMode("live");
    Object.assign(window.ikbenchPlayground, {
      step: step,
      setMode: setMode,
      loadModel: function (key, dof, seed) {
        if (dof) $("chain-dof").value = dof;
        if (seed !== undefined) $("chain-seed").value = seed;
        loadModel(key);
      },
      setKind: setKind,
      setLayout: setLayout,
      setSpecs: function (texts) {
        P.specsChosen = true;
        P.specs = texts.slice(0, MAX_SPECS).map(function (t, i) { var s = new Spec(i, t); s.q = P.info.middle.slice(); return s; });
        rebuildSpecs();
      },
      setScene: setScene,
      setMargin: setMargin,
      setShowShapes: setShowShapes,
      newTarget: newTarget,
      // Goal k's target at a position (and a rotation, quaternion x, y, z, w).
      setTarget: function (k, position, quat) {
        P.goals[k].pos.fromArray(position);
        if (quat) P.goals[k].quat.fromArray(quat);
        P.dirty = true;
      },
      screenOf: screenOf,
      modelJson: function () { return P.model; },
      sceneJson: function () { return P.scene; },
      bench: function (spec, count, repeats, kind) {
        var ps = call("problems", {model: P.model.id, count: count, seed: 7, kind: kind || "pose",
                                   effectors: P.entry.goals.map(function (g) { return g.body; })});
        var t0 = performance.now();
        var r = call("bench", {problems: ps, spec: spec, repeats: repeats});
        r.page_ms = performance.now() - t0;
        return r;
      }
    });
    state.ready = true;
    document.body.setAttribute("data-playground-ready", "1");
    requestAnimationFrame(frame);
  }

  createIkbenchPlayground().then(start, function (e) {
    $("absent").textContent = "The WebAssembly module failed to start: " + e;
    console.error(e);
  });
})();
