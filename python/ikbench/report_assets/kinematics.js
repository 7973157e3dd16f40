/* ikbench's forward kinematics in the browser: the report's solve viewer draws and labels each
   configuration with it. It follows the model of a results directory (docs/results-format.md, "Model"):
   world_T_body[i] = world_T_body[parent] * parent_T_joint[i] * motion_i(q), the joint's motion a rotation
   about its axis (revolute), a translation along it (prismatic), a unit quaternion (ball) or a
   translation and a quaternion (free). The same model and configurations give the errors that the C++
   harness wrote into solves.csv (tests/report/test_viewer_truth.py runs this file in node against them).
   Loaded before report.js in the page; a CommonJS module in node. */
var IKB_KIN = (function () {
  "use strict";
  function quatMat(x, y, z, w) {
    var n = Math.sqrt(x * x + y * y + z * z + w * w) || 1;
    x /= n; y /= n; z /= n; w /= n;
    return [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
      2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
      2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)];
  }
  function axisAngle(a, t) {
    var n = Math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]) || 1;
    var x = a[0] / n, y = a[1] / n, z = a[2] / n, s = Math.sin(t), c = Math.cos(t), C = 1 - c;
    return [c + x * x * C, x * y * C - z * s, x * z * C + y * s,
      y * x * C + z * s, c + y * y * C, y * z * C - x * s,
      z * x * C - y * s, z * y * C + x * s, c + z * z * C];
  }
  function mm(a, b) {
    var r = new Array(9);
    for (var i = 0; i < 3; i++) for (var j = 0; j < 3; j++)
      r[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    return r;
  }
  function mv(a, v) { return [a[0] * v[0] + a[1] * v[1] + a[2] * v[2], a[3] * v[0] + a[4] * v[1] + a[5] * v[2], a[6] * v[0] + a[7] * v[1] + a[8] * v[2]]; }
  function add(a, b) { return [a[0] + b[0], a[1] + b[1], a[2] + b[2]]; }
  var I3 = [1, 0, 0, 0, 1, 0, 0, 0, 1];

  // world_T_body[i] = world_T_body[parent] * parent_T_joint[i] * motion_i(q); returns rotations, body origins
  // and joint-frame origins (before the joint's motion: differs from the body origin for prismatic/free joints).
  function fk(model, q) {
    var R = [], p = [], o = [];
    model.joints.forEach(function (j, i) {
      var Rp = j.parent < 0 ? I3 : R[j.parent], pp = j.parent < 0 ? [0, 0, 0] : p[j.parent];
      if (!j._R0) j._R0 = quatMat(j.quat[0], j.quat[1], j.quat[2], j.quat[3]);
      var Rj = mm(Rp, j._R0), pj = add(pp, mv(Rp, j.xyz)), k = j.iq;
      o[i] = pj;
      if (j.type === "revolute") { R[i] = mm(Rj, axisAngle(j.axis, q[k])); p[i] = pj; }
      else if (j.type === "prismatic") {
        var n = Math.sqrt(j.axis[0] * j.axis[0] + j.axis[1] * j.axis[1] + j.axis[2] * j.axis[2]) || 1;
        R[i] = Rj; p[i] = add(pj, mv(Rj, [j.axis[0] / n * q[k], j.axis[1] / n * q[k], j.axis[2] / n * q[k]]));
      } else if (j.type === "ball") { R[i] = mm(Rj, quatMat(q[k], q[k + 1], q[k + 2], q[k + 3])); p[i] = pj; }
      else if (j.type === "free") { p[i] = add(pj, mv(Rj, [q[k], q[k + 1], q[k + 2]])); R[i] = mm(Rj, quatMat(q[k + 3], q[k + 4], q[k + 5], q[k + 6])); }
      else { R[i] = Rj; p[i] = pj; }
    });
    return { R: R, p: p, o: o };
  }
  function rotAngle(M) {  // angle of a rotation matrix, accurate near 0 and pi
    var vx = M[7] - M[5], vy = M[2] - M[6], vz = M[3] - M[1];
    return Math.atan2(Math.sqrt(vx * vx + vy * vy + vz * vz) / 2, (M[0] + M[4] + M[8] - 1) / 2);
  }
  function transpose(M) { return [M[0], M[3], M[6], M[1], M[4], M[7], M[2], M[5], M[8]]; }
  function rotvec(x, y, z, w) {
    var n = Math.sqrt(x * x + y * y + z * z + w * w) || 1; x /= n; y /= n; z /= n; w /= n;
    if (w < 0) { x = -x; y = -y; z = -z; w = -w; }
    var s = Math.sqrt(x * x + y * y + z * z), a = 2 * Math.atan2(s, w), f = s > 1e-12 ? a / s : 2;
    return [x * f, y * f, z * f];
  }
  var LIMIT_EPS = 1e-6;
  function onLimit(v, lo, hi) { return (lo != null && v <= lo + LIMIT_EPS) || (hi != null && v >= hi - LIMIT_EPS); }
  function jointsOnLimit(model, q) {
    return model.joints.map(function (j) {
      var k = j.iq, i;
      if (j.type === "revolute" || j.type === "prismatic") return onLimit(q[k], j.lower[0], j.upper[0]);
      if (j.type === "ball") { var r = rotvec(q[k], q[k + 1], q[k + 2], q[k + 3]); for (i = 0; i < 3; i++) if (onLimit(r[i], j.lower[i], j.upper[i])) return true; return false; }
      if (j.type === "free") {
        var rv = rotvec(q[k + 3], q[k + 4], q[k + 5], q[k + 6]), v = [q[k], q[k + 1], q[k + 2], rv[0], rv[1], rv[2]];
        for (i = 0; i < 6; i++) if (onLimit(v[i], j.lower[i], j.upper[i])) return true; return false;
      }
      return false;
    });
  }
  function goalState(goals, F) {  // drawn effectors and their errors against the targets
    var eff = [], pe = 0, oe = 0, hasP = false, hasO = false;
    goals.forEach(function (g) {
      var b = g.body_index, e = add(mv(F.R[b], g.point), F.p[b]);
      eff.push(e);
      if (g.kind !== "orientation") {
        var d = [g.target_position[0] - e[0], g.target_position[1] - e[1], g.target_position[2] - e[2]];
        pe = Math.max(pe, Math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])); hasP = true;
      }
      if (g.kind !== "position") {
        var t = g.target_quat_xyzw, Rt = quatMat(t[0], t[1], t[2], t[3]);
        oe = Math.max(oe, rotAngle(mm(Rt, transpose(F.R[b])))); hasO = true;
      }
    });
    return { eff: eff, pe: hasP ? pe : null, oe: hasO ? oe : null };
  }

  return { quatMat: quatMat, axisAngle: axisAngle, mm: mm, mv: mv, add: add, fk: fk, rotAngle: rotAngle,
    transpose: transpose, rotvec: rotvec, jointsOnLimit: jointsOnLimit, goalState: goalState };
})();
if (typeof module !== "undefined" && module.exports) module.exports = IKB_KIN;
