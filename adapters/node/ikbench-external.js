// Your own IK solver in JavaScript as an ikbench external solver (docs/external-solvers.md).
//
// A function solve(model, problem) -> q (or an answer object, or a promise of either) becomes a
// process that speaks the ikbench-external protocol, JSON lines on stdin and stdout:
//
//   const ext = require('./ikbench-external.js');       // CommonJS
//   import ext from './ikbench-external.js';            // or an ES module
//   ext.solver((model, problem) => {
//     const q = problem.q0.slice();
//     ...                                              // model.fk(q), model.goalErrors(q, problem.goals)
//     return { q, status: 'converged', iterations: 12 };
//   }, { name: 'my-solver' }).serve();
//
// No dependencies: Node's standard library only. `Model` is a small forward kinematics of the
// model JSON the harness sends (models.json's format, docs/results-format.md); a solver with its
// own kinematics reads model.json (the JSON as sent).
'use strict';

const readline = require('readline');

const PROTOCOL = 'ikbench-external';
const VERSION = 1;
const STATUSES = ['converged', 'max-iterations', 'time-limit', 'stalled', 'numerical-failure', 'unsupported'];

// ---- 3x3 rotations as row-major arrays of 9 ----

function quatToMatrix([x, y, z, w]) {
  const n = Math.hypot(x, y, z, w);
  x /= n; y /= n; z /= n; w /= n;
  return [
    1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
    2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
    2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y),
  ];
}

function axisAngleMatrix([ax, ay, az], angle) {
  // Rodrigues' formula for a unit axis.
  const c = Math.cos(angle), s = Math.sin(angle), t = 1 - c;
  return [
    t * ax * ax + c, t * ax * ay - s * az, t * ax * az + s * ay,
    t * ax * ay + s * az, t * ay * ay + c, t * ay * az - s * ax,
    t * ax * az - s * ay, t * ay * az + s * ax, t * az * az + c,
  ];
}

function mul(a, b) {
  const out = new Array(9);
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++)
      out[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
  return out;
}

function apply(r, v) {
  return [r[0] * v[0] + r[1] * v[1] + r[2] * v[2], r[3] * v[0] + r[4] * v[1] + r[5] * v[2],
    r[6] * v[0] + r[7] * v[1] + r[8] * v[2]];
}

function transpose(r) {
  return [r[0], r[3], r[6], r[1], r[4], r[7], r[2], r[5], r[8]];
}

// The rotation angle of r [rad].
function rotationAngle(r) {
  return Math.acos(Math.min(1, Math.max(-1, (r[0] + r[4] + r[8] - 1) / 2)));
}

// ---- the model ----

class Model {
  // A model of models.json's format: joints in topological order (parent < index), each moving its
  // body: world_T_body[i] = world_T_body[parent] * parent_T_joint[i] * motion_i(q).
  constructor(json, urdf = null) {
    this.json = json;
    this.name = json.name || '';
    // The URDF file's text and path when the model was loaded from one (the model message's
    // `urdf`, the model's `source`), else null.
    this.urdf = typeof urdf === 'string' ? urdf : null;
    this.source = typeof json.source === 'string' ? json.source : null;
    this.nq = json.nq;
    this.nv = json.nv;
    this.joints = json.joints;
    this.restR = this.joints.map((j) => quatToMatrix(j.parent_T_joint.quat_xyzw));
    this.lower = [];
    this.upper = [];
    for (const j of this.joints) {
      for (const v of j.lower) this.lower.push(v === null ? -Infinity : v);
      for (const v of j.upper) this.upper.push(v === null ? Infinity : v);
    }
  }

  // World rotation (row-major 3x3) and position of every body.
  fk(q) {
    const rot = [], pos = [];
    this.joints.forEach((j, i) => {
      const p = j.parent;
      let r = p < 0 ? this.restR[i] : mul(rot[p], this.restR[i]);
      let x = p < 0 ? j.parent_T_joint.xyz.slice() : apply(rot[p], j.parent_T_joint.xyz).map((v, k) => v + pos[p][k]);
      const k = j.idx_q;
      if (j.type === 'revolute') r = mul(r, axisAngleMatrix(j.axis, q[k]));
      else if (j.type === 'prismatic') x = apply(r, j.axis.map((a) => a * q[k])).map((v, m) => v + x[m]);
      else if (j.type === 'ball') r = mul(r, quatToMatrix(q.slice(k, k + 4)));
      else if (j.type === 'free') {
        x = apply(r, q.slice(k, k + 3)).map((v, m) => v + x[m]);
        r = mul(r, quatToMatrix(q.slice(k + 3, k + 7)));
      }
      rot.push(r);
      pos.push(x);
    });
    return { rot, pos };
  }

  // [largest position error (m), largest orientation error (rad)] of q over the goals.
  goalErrors(q, goals) {
    const { rot, pos } = this.fk(q);
    let ep = 0, eo = 0;
    for (const g of goals) {
      const b = g.body_index;
      if (g.kind !== 'orientation') {
        const x = apply(rot[b], g.point).map((v, k) => v + pos[b][k]);
        ep = Math.max(ep, Math.hypot(...g.target_position.map((t, k) => t - x[k])));
      }
      if (g.kind !== 'position') eo = Math.max(eo, rotationAngle(mul(quatToMatrix(g.target_quat_xyzw), transpose(rot[b]))));
    }
    return [ep, eo];
  }
}

// ---- the protocol loop ----

function answerJson(id, result, timeUs) {
  const a = Array.isArray(result) || ArrayBuffer.isView(result) ? { q: result } : result;
  // JSON has no NaN or infinity: a non-finite entry goes as null, which the harness refuses.
  const out = { id, q: Array.from(a.q, (v) => (Number.isFinite(v) ? v : null)), time_us: timeUs };
  if (a.status !== undefined) out.status = a.status;
  if (a.iterations !== undefined) out.iterations = a.iterations;
  if (a.message) out.message = String(a.message);
  return out;
}

// Answers the harness's messages on stdin with solve(model, problem) until stdin ends or a "bye"
// arrives. An exception in solve answers that problem with its start configuration and status
// numerical-failure, and the process goes on.
async function serve(solve, name) {
  const models = new Map();
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  const send = (obj) => new Promise((resolve) => process.stdout.write(JSON.stringify(obj) + '\n', resolve));
  for await (const line of rl) {
    if (!line.trim()) continue;
    const msg = JSON.parse(line);
    if (msg.type === 'hello') {
      await send({ type: 'hello', protocol: PROTOCOL, version: VERSION, name: name || solve.name || 'node-solver' });
    } else if (msg.type === 'model') {
      models.set(msg.model_id, new Model(msg.model, msg.urdf));
    } else if (msg.type === 'solve') {
      const answers = [];
      for (const problem of msg.problems) {
        const t0 = process.hrtime.bigint();
        let result;
        try {
          result = await solve(models.get(problem.model_id), problem);
        } catch (e) {
          result = { q: problem.q0, status: 'numerical-failure', message: `${e.name}: ${e.message}` };
        }
        answers.push(answerJson(problem.id, result, Number(process.hrtime.bigint() - t0) / 1000));
      }
      await send({ type: 'answers', answers });
    } else if (msg.type === 'bye') {
      break;
    } else {
      process.stderr.write(`ikbench-external: unknown message type ${msg.type}\n`);
    }
  }
  rl.close();
}

// solver(solve, {name}) -> { solve, serve() }.
function solver(solve, options = {}) {
  return { solve, name: options.name, serve: () => serve(solve, options.name) };
}

module.exports = { PROTOCOL, VERSION, STATUSES, Model, serve, solver, quatToMatrix, axisAngleMatrix };
