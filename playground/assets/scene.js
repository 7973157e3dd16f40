// The playground's drawing: everything that turns a model (a models.json
// entry), a scene (its "scene" entry: obstacles and the robot's collision
// geometry) and the frames the WebAssembly module computed into three.js
// objects lives here. No kinematics and no distances here: every pose comes
// from the project's C++ forward kinematics (Session.frames / Session.solve),
// every clearance from its collision library (Session's "collision").
//
// Drawing is built once per model, spec and scene and only moved per frame:
// the links, joints and collision shapes of one drawn model are a few
// instanced meshes (one draw call each, however many links), materials are
// shared, and nothing is allocated in update(). A software rasteriser
// (headless Chromium's SwiftShader) pays per draw call and per shaded pixel,
// hence instancing and Lambert (per-vertex) shading.
/* global THREE */
"use strict";

var IkbScene = (function () {
  var LINK_RADIUS = 0.018;   // m, capsules of the links (scaled by the model's size)
  var JOINT_RADIUS = 0.03;
  var LIMIT_COLOR = 0xd62728;  // a joint with a DOF at its limit
  var OBSTACLE_COLOR = 0x8c7b6b;
  // A collision shape's colour by its clearance: within the margin, colliding.
  var NEAR_COLOR = 0xff7f0e, COLLIDES_COLOR = 0xd62728;
  var SEGMENTS = 12;          // around a capsule or sphere

  // One unit geometry of each kind for the whole page.
  var GEOMETRY = null;
  function geometry() {
    if (!GEOMETRY) {
      GEOMETRY = {
        cylinder: new THREE.CylinderBufferGeometry(1, 1, 1, SEGMENTS, 1, true),  // radius 1, height 1, along y
        sphere: new THREE.SphereBufferGeometry(1, SEGMENTS, SEGMENTS * 2 / 3),
        box: new THREE.BoxBufferGeometry(1, 1, 1)
      };
    }
    return GEOMETRY;
  }

  // Materials by colour and opacity, shared by every object that draws in them.
  var MATERIALS = {};
  function material(color, opacity) {
    var key = color + "/" + opacity;
    if (!MATERIALS[key]) {
      MATERIALS[key] = new THREE.MeshLambertMaterial({color: color, transparent: opacity < 1, opacity: opacity,
                                                      depthWrite: opacity >= 1});
    }
    return MATERIALS[key];
  }

  // Sizes in metres follow the model: a 0.3 m planar chain and a 1 m arm both
  // get visible capsules.
  function modelScale(model) {
    var s = 0;
    model.joints.forEach(function (j) {
      var p = j.parent_T_joint.xyz;
      s += Math.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    });
    return Math.max(0.3, Math.min(3, s / 1.5));
  }

  // Scratch objects of the per-frame updates (never allocated there).
  var M = new THREE.Matrix4(), V = new THREE.Vector3(), W = new THREE.Vector3(), D = new THREE.Vector3();
  var Q = new THREE.Quaternion(), S = new THREE.Vector3(), UP = new THREE.Vector3(0, 1, 0);

  function instanced(geom, mat, count) {
    var m = new THREE.InstancedMesh(geom, mat, Math.max(1, count));
    m.count = 0;
    m.frustumCulled = false;  // the unit geometry's bounds are not the instances'
    return m;
  }

  // Capsules (segment a-b, radius r) in one material: an instanced open
  // cylinder and an instanced sphere for the ends; two draw calls for all.
  function CapsuleBatch(mat, max) {
    var g = geometry();
    this.material = mat;
    this.cyl = instanced(g.cylinder, mat, max);
    this.ends = instanced(g.sphere, mat, 2 * max);
  }
  CapsuleBatch.prototype.begin = function () { this.cyl.count = 0; this.ends.count = 0; };
  CapsuleBatch.prototype.sphere = function (c, r) {
    S.set(r, r, r);
    Q.set(0, 0, 0, 1);
    this.ends.setMatrixAt(this.ends.count++, M.compose(c, Q, S));
  };
  CapsuleBatch.prototype.capsule = function (a, b, r) {
    D.subVectors(b, a);
    var len = D.length();
    if (len > 1e-9) {
      Q.setFromUnitVectors(UP, D.divideScalar(len));
      W.addVectors(a, b).multiplyScalar(0.5);
      S.set(r, len, r);
      this.cyl.setMatrixAt(this.cyl.count++, M.compose(W, Q, S));
      this.sphere(a, r);
    }
    this.sphere(b, r);
  };
  CapsuleBatch.prototype.end = function () {
    commit(this.cyl);
    commit(this.ends);
  };
  // An instanced mesh's matrices to the GPU; an empty one is not drawn at all.
  function commit(mesh) {
    mesh.instanceMatrix.needsUpdate = true;
    mesh.visible = mesh.count > 0;
  }
  CapsuleBatch.prototype.addTo = function (group) { group.add(this.cyl, this.ends); };

  // Spheres of one radius in one material (joints): one draw call.
  function SphereBatch(mat, max, radius) {
    this.mesh = instanced(geometry().sphere, mat, max);
    this.radius = radius;
  }
  SphereBatch.prototype.put = function (c) {
    S.set(this.radius, this.radius, this.radius);
    Q.set(0, 0, 0, 1);
    this.mesh.setMatrixAt(this.mesh.count++, M.compose(c, Q, S));
  };

  function poseOf(frames, i, pos, quat) {
    var f = frames[i];
    pos.set(f[0], f[1], f[2]);
    quat.set(f[3], f[4], f[5], f[6]);
  }

  // A link shape of a scene as the capsule the solvers' inner loop sees
  // (collision/shapes.h): a capsule or a sphere as it is, a cylinder as the
  // capsule of its radius and length, a box as the capsule along its longest
  // side through its corners; the segment's ends in the body frame.
  function linkCapsule(l) {
    var p = new THREE.Vector3().fromArray(l.xyz), q = new THREE.Quaternion().fromArray(l.quat_xyzw);
    var axis = new THREE.Vector3(0, 0, 1), half = 0, r = l.radius || 0;
    if (l.type === "capsule" || l.type === "cylinder") {
      half = l.length / 2;
    } else if (l.type === "box") {
      var h = l.size.map(function (x) { return x / 2; }), k = h.indexOf(Math.max.apply(null, h));
      axis.set(k === 0 ? 1 : 0, k === 1 ? 1 : 0, k === 2 ? 1 : 0);
      half = h[k];
      r = Math.sqrt(h.reduce(function (s, x, i) { return s + (i === k ? 0 : x * x); }, 0));
    }
    axis.applyQuaternion(q).multiplyScalar(half);
    return {body: l.body_index, a: p.clone().sub(axis), b: p.clone().add(axis), r: r, name: l.name};
  }

  // One drawn copy of a model (one per solver spec): links as capsules from a
  // body's parent to the body, joints with a DOF as spheres (red at a limit),
  // effectors as small cubes; in a scene also its collision geometry: orange
  // within `margin` of a collision, red where it collides, and where clear
  // translucent in the spec's colour when `showClear` (else not drawn).
  function ModelView(model, color, opacity, effectors, sceneEntry) {
    this.model = model;
    this.group = new THREE.Group();
    var k = modelScale(model), n = model.joints.length, self = this;
    this.linkRadius = LINK_RADIUS * k;
    this.links = new CapsuleBatch(material(color, opacity), n);
    this.links.addTo(this.group);
    this.joints = new SphereBatch(material(0xdddddd, opacity), n, JOINT_RADIUS * k);
    this.limits = new SphereBatch(material(LIMIT_COLOR, opacity), n, JOINT_RADIUS * k);
    this.group.add(this.joints.mesh, this.limits.mesh);
    this.dofJoint = [];
    this.limited = new Uint8Array(n);
    model.joints.forEach(function (j, i) {
      for (var d = 0; d < j.lower.length; ++d) self.dofJoint[j.idx_v + d] = i;
    });
    this.effectorSize = 0.04 * k;
    this.effectors = (effectors || []).map(function (e) {
      return {body: e.body_index, point: new THREE.Vector3().fromArray(e.point)};
    });
    this.boxes = instanced(geometry().box, material(color, opacity), this.effectors.length);
    this.group.add(this.boxes);
    this.pos = model.joints.map(function () { return new THREE.Vector3(); });
    this.quat = model.joints.map(function () { return new THREE.Quaternion(); });
    // The scene's link shapes, in the order of its "links" (the clearances' order).
    // A mesh (a URDF's or MJCF's own collision geometry, or its hull) is
    // drawn as its triangles; the other shapes as the capsule the inner loop sees.
    this.shapes = sceneEntry ? sceneEntry.links.map(function (l) {
      var sh = linkCapsule(Object.assign({body_index: self.bodyIndex(l.body)}, l));
      if (l.type === "mesh") sh.mesh = linkMesh(l);
      return sh;
    }) : [];
    this.shapeState = this.shapes.map(function () { return "clear"; });
    if (this.shapes.length) {
      var m = this.shapes.length;
      this.collision = {clear: new CapsuleBatch(material(color, 0.22), m),
                        near: new CapsuleBatch(material(NEAR_COLOR, 0.7), m),
                        collides: new CapsuleBatch(material(COLLIDES_COLOR, 0.8), m)};
      Object.keys(this.collision).forEach(function (s) { self.collision[s].addTo(self.group); });
      // Meshes get materials of their own: three.js keeps a material's
      // program, and the batches' is built for instanced drawing.
      this.meshMaterials = {};
      Object.keys(this.collision).forEach(function (s) { self.meshMaterials[s] = self.collision[s].material.clone(); });
      this.shapes.forEach(function (sh) { if (sh.mesh) self.group.add(sh.mesh); });
    }
  }
  // A link's mesh shape as a three.js mesh placed per frame (body pose, then
  // the shape's pose in the body); its material follows its state.
  function linkMesh(l) {
    var g = new THREE.BufferGeometry(), v = [];
    l.triangles.forEach(function (t) {
      t.forEach(function (i) { v.push(l.vertices[i][0], l.vertices[i][1], l.vertices[i][2]); });
    });
    g.setAttribute("position", new THREE.Float32BufferAttribute(v, 3));
    g.computeVertexNormals();
    var m = new THREE.Mesh(g);
    m.matrixAutoUpdate = false;
    m.frustumCulled = false;
    m.visible = false;
    m.userData.local = new THREE.Matrix4().compose(new THREE.Vector3().fromArray(l.xyz),
                                                   new THREE.Quaternion().fromArray(l.quat_xyzw), new THREE.Vector3(1, 1, 1));
    return m;
  }
  ModelView.prototype.bodyIndex = function (name) {
    for (var i = 0; i < this.model.joints.length; ++i) if (this.model.joints[i].body === name) return i;
    throw new Error("scene: no body '" + name + "' in " + this.model.id);
  };
  // frames: [x, y, z, qx, qy, qz, qw] per body (Session.frames); atLimit:
  // tangent DOF indices at a limit; collision: Session's clearances of this
  // configuration (or null), margin [m].
  ModelView.prototype.update = function (frames, atLimit, collision, margin, showClear) {
    var self = this, joints = this.model.joints, i;
    for (i = 0; i < joints.length; ++i) poseOf(frames, i, this.pos[i], this.quat[i]);
    this.limited.fill(0);
    (atLimit || []).forEach(function (d) { self.limited[self.dofJoint[d]] = 1; });
    this.links.begin();
    this.joints.mesh.count = 0;
    this.limits.mesh.count = 0;
    V.set(0, 0, 0);
    for (i = 0; i < joints.length; ++i) {
      var j = joints[i];
      // A free root (a skeleton's hips) is drawn where it is, with no link from the world origin.
      if (!(j.parent < 0 && j.type === "free")) this.links.capsule(j.parent < 0 ? V : this.pos[j.parent], this.pos[i], this.linkRadius);
      if (j.lower.length) (this.limited[i] ? this.limits : this.joints).put(this.pos[i]);
    }
    this.links.end();
    commit(this.joints.mesh);
    commit(this.limits.mesh);
    S.set(this.effectorSize, this.effectorSize, this.effectorSize);
    this.effectors.forEach(function (e, k) {
      W.copy(e.point).applyQuaternion(self.quat[e.body]).add(self.pos[e.body]);
      self.boxes.setMatrixAt(k, M.compose(W, self.quat[e.body], S));
    });
    this.boxes.count = this.effectors.length;
    commit(this.boxes);
    if (this.collision) this.updateCollision(collision, margin, showClear);
  };
  ModelView.prototype.updateCollision = function (collision, margin, showClear) {
    var c = this.collision, self = this;
    Object.keys(c).forEach(function (s) { c[s].begin(); });
    this.shapes.forEach(function (sh, k) {
      var d = collision ? collision.links[k] : null;
      var state = d === null || d === undefined ? "clear" : d <= 0 ? "collides" : d < margin ? "near" : "clear";
      self.shapeState[k] = state;
      if (sh.mesh) {
        sh.mesh.visible = state !== "clear" || showClear;
        sh.mesh.material = self.meshMaterials[state];
        S.set(1, 1, 1);
        sh.mesh.matrix.compose(self.pos[sh.body], self.quat[sh.body], S).multiply(sh.mesh.userData.local);
        sh.mesh.matrixWorldNeedsUpdate = true;
        return;
      }
      if (state === "clear" && !showClear) return;
      V.copy(sh.a).applyQuaternion(self.quat[sh.body]).add(self.pos[sh.body]);
      W.copy(sh.b).applyQuaternion(self.quat[sh.body]).add(self.pos[sh.body]);
      c[state].capsule(V, W, sh.r);
    });
    Object.keys(c).forEach(function (s) { c[s].end(); });
  };
  // What each collision shape is drawn as: its name, state and the colour of
  // the material it was drawn in, null when not drawn (the tests read it).
  ModelView.prototype.drawnShapes = function () {
    var c = this.collision, self = this;
    return this.shapes.map(function (sh, k) {
      var s = self.shapeState[k];
      var drawn = sh.mesh ? sh.mesh.visible : s !== "clear" || c.clear.cyl.count + c.clear.ends.count > 0;
      return {name: sh.name, state: s, as: sh.mesh ? "mesh" : "capsule",
              triangles: sh.mesh ? sh.mesh.geometry.getAttribute("position").count / 3 : 0,
              color: drawn ? "#" + (sh.mesh ? self.meshMaterials[s] : c[s].material).color.getHexString() : null};
    });
  };

  // A scene's obstacles (its models.json "scene" entry, in the world frame)
  // merged into one mesh: one draw call for the whole scene.
  function obstacleGeometry(o) {
    var g;
    if (o.type === "box") {
      g = new THREE.BoxBufferGeometry(o.size[0], o.size[1], o.size[2]);
    } else if (o.type === "sphere") {
      g = new THREE.SphereBufferGeometry(o.radius, 2 * SEGMENTS, SEGMENTS);
    } else if (o.type === "cylinder" || o.type === "capsule") {
      // three.js' cylinder runs along y; the scene's along z. A capsule: its cylinder and caps' spheres.
      g = new THREE.CylinderBufferGeometry(o.radius, o.radius, o.length, 2 * SEGMENTS, 1, o.type === "capsule");
      g.rotateX(Math.PI / 2);
      if (o.type === "capsule") {
        var caps = [-1, 1].map(function (s) {
          return new THREE.SphereBufferGeometry(o.radius, 2 * SEGMENTS, SEGMENTS).translate(0, 0, s * o.length / 2);
        });
        return merge([g].concat(caps));
      }
    } else {  // mesh: its triangles
      g = new THREE.BufferGeometry();
      var v = [];
      o.triangles.forEach(function (t) { t.forEach(function (i) { v.push(o.vertices[i][0], o.vertices[i][1], o.vertices[i][2]); }); });
      g.setAttribute("position", new THREE.Float32BufferAttribute(v, 3));
      g.computeVertexNormals();
    }
    return g;
  }
  // Non-indexed positions and normals of several geometries in one.
  function merge(geoms) {
    var pos = [], nor = [];
    geoms.forEach(function (g) {
      var n = g.index ? g.toNonIndexed() : g;
      Array.prototype.push.apply(pos, n.getAttribute("position").array);
      Array.prototype.push.apply(nor, n.getAttribute("normal").array);
    });
    var out = new THREE.BufferGeometry();
    out.setAttribute("position", new THREE.Float32BufferAttribute(pos, 3));
    out.setAttribute("normal", new THREE.Float32BufferAttribute(nor, 3));
    return out;
  }
  function Obstacles(sceneEntry) {
    var geoms = sceneEntry.obstacles.map(function (o) {
      var g = obstacleGeometry(o);
      g.applyMatrix(new THREE.Matrix4().compose(new THREE.Vector3().fromArray(o.xyz),
                                                new THREE.Quaternion().fromArray(o.quat_xyzw), new THREE.Vector3(1, 1, 1)));
      return g;
    });
    this.mesh = new THREE.Mesh(geoms.length ? merge(geoms) : new THREE.BufferGeometry(), material(OBSTACLE_COLOR, 0.45));
    this.mesh.renderOrder = -1;  // before the translucent models
  }
  Obstacles.prototype.dispose = function () { this.mesh.geometry.dispose(); };

  // A goal's target: a sphere to drag, with an orientation triad for pose
  // goals.
  function Target(scale, pose) {
    this.group = new THREE.Group();
    this.sphere = new THREE.Mesh(new THREE.SphereBufferGeometry(0.045 * scale, 20, 16),
      new THREE.MeshLambertMaterial({color: 0xffbf00, emissive: 0x553300}));
    this.group.add(this.sphere);
    if (pose) this.group.add(new THREE.AxesHelper(0.15 * scale));
  }

  // A polyline (the path of path mode).
  function Path(points, color) {
    var g = new THREE.BufferGeometry().setFromPoints(points);
    return new THREE.Line(g, new THREE.LineBasicMaterial({color: color}));
  }

  // The world: lights, a floor grid, a frame at the origin.
  function world(scene, scale) {
    scene.background = new THREE.Color(0xf4f5f7);
    scene.add(new THREE.HemisphereLight(0xffffff, 0x666677, 0.9));
    var sun = new THREE.DirectionalLight(0xffffff, 0.6);
    sun.position.set(2, 3, 4);
    scene.add(sun);
    var grid = new THREE.GridHelper(4 * scale, 20, 0xb0b4bb, 0xd6d9de);
    grid.rotation.x = Math.PI / 2;  // the models' z is up
    scene.add(grid);
    scene.add(new THREE.AxesHelper(0.2 * scale));
  }

  return {ModelView: ModelView, Obstacles: Obstacles, Target: Target, Path: Path, world: world, modelScale: modelScale};
})();
