// The playground's drawing: everything that turns a model (a models.json
// entry) and the frames the WebAssembly module computed into three.js
// objects lives here, so that other things to draw (targets, paths, a scene's
// obstacles) are added in one place. No kinematics here: every pose comes
// from the project's C++ forward kinematics (Session.frames / Session.solve).
/* global THREE */
"use strict";

var IkbScene = (function () {
  var LINK_RADIUS = 0.018;   // m, capsules of the links (scaled by the model's size)
  var JOINT_RADIUS = 0.03;
  var LIMIT_COLOR = 0xd62728;  // a joint with a DOF at its limit

  function material(color, opacity) {
    return new THREE.MeshStandardMaterial({color: color, roughness: 0.55, metalness: 0.1,
      transparent: opacity < 1, opacity: opacity, depthWrite: opacity >= 1});
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

  // A capsule of unit length along +y (a cylinder and two spheres), scaled
  // per frame to the link's length.
  function Capsule(radius, mat) {
    this.group = new THREE.Group();
    this.cyl = new THREE.Mesh(new THREE.CylinderBufferGeometry(radius, radius, 1, 16, 1, true), mat);
    this.a = new THREE.Mesh(new THREE.SphereBufferGeometry(radius, 16, 12), mat);
    this.b = new THREE.Mesh(new THREE.SphereBufferGeometry(radius, 16, 12), mat);
    this.group.add(this.cyl, this.a, this.b);
  }
  var UP = new THREE.Vector3(0, 1, 0);
  Capsule.prototype.set = function (p, q) {
    var d = new THREE.Vector3().subVectors(q, p), len = d.length();
    this.group.visible = len > 1e-9;
    if (!this.group.visible) return;
    this.cyl.scale.set(1, len, 1);
    this.cyl.position.copy(p).addScaledVector(d, 0.5);
    this.cyl.quaternion.setFromUnitVectors(UP, d.clone().divideScalar(len));
    this.a.position.copy(p);
    this.b.position.copy(q);
  };

  // One drawn copy of a model (one per solver spec): links as capsules from a
  // body's parent to the body, joints with a DOF as spheres (red at a limit),
  // effectors as small cubes.
  function ModelView(model, color, opacity, effectors) {
    this.model = model;
    this.group = new THREE.Group();
    var k = modelScale(model);
    this.linkMat = material(color, opacity);
    this.jointMat = material(0xdddddd, opacity);
    this.limitMat = material(LIMIT_COLOR, opacity);
    this.links = [];
    this.joints = [];
    this.dofJoint = [];
    var self = this;
    model.joints.forEach(function (j, i) {
      var parentFree = j.parent < 0 && j.type === "free";
      var link = null;
      if (!parentFree) {
        link = new Capsule(LINK_RADIUS * k, self.linkMat);
        self.group.add(link.group);
      }
      self.links.push(link);
      var nv = j.lower.length, marker = null;
      if (nv > 0) {
        marker = new THREE.Mesh(new THREE.SphereBufferGeometry(JOINT_RADIUS * k, 16, 12), self.jointMat);
        self.group.add(marker);
      }
      self.joints.push(marker);
      for (var d = 0; d < nv; ++d) self.dofJoint[j.idx_v + d] = i;
    });
    this.effectors = (effectors || []).map(function (e) {
      var m = new THREE.Mesh(new THREE.BoxBufferGeometry(0.04 * k, 0.04 * k, 0.04 * k), self.linkMat);
      self.group.add(m);
      return {body: e.body_index, point: new THREE.Vector3().fromArray(e.point), mesh: m};
    });
  }
  // frames: [x, y, z, qx, qy, qz, qw] per body (Session.frames); atLimit:
  // tangent DOF indices at a limit.
  ModelView.prototype.update = function (frames, atLimit) {
    var self = this, origin = new THREE.Vector3();
    var pos = frames.map(function (f) { return new THREE.Vector3(f[0], f[1], f[2]); });
    var limited = {};
    (atLimit || []).forEach(function (d) { limited[self.dofJoint[d]] = true; });
    this.model.joints.forEach(function (j, i) {
      if (self.links[i]) self.links[i].set(j.parent < 0 ? origin : pos[j.parent], pos[i]);
      if (self.joints[i]) {
        self.joints[i].position.copy(pos[i]);
        self.joints[i].material = limited[i] ? self.limitMat : self.jointMat;
      }
    });
    this.effectors.forEach(function (e) {
      var f = frames[e.body];
      var q = new THREE.Quaternion(f[3], f[4], f[5], f[6]);
      e.mesh.position.copy(e.point).applyQuaternion(q).add(pos[e.body]);
      e.mesh.quaternion.copy(q);
    });
  };
  ModelView.prototype.dispose = function () {
    this.group.traverse(function (o) { if (o.geometry) o.geometry.dispose(); });
    [this.linkMat, this.jointMat, this.limitMat].forEach(function (m) { m.dispose(); });
  };

  // A goal's target: a sphere to drag, with an orientation triad for pose
  // goals.
  function Target(scale, pose) {
    this.group = new THREE.Group();
    this.sphere = new THREE.Mesh(new THREE.SphereBufferGeometry(0.045 * scale, 20, 16),
      new THREE.MeshStandardMaterial({color: 0xffbf00, emissive: 0x553300, roughness: 0.4}));
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

  return {ModelView: ModelView, Target: Target, Path: Path, world: world, modelScale: modelScale};
})();
