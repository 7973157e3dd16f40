// closed-chain-ik (npm, Apache-2.0; Garrett Johnson's damped-least-squares solver for three.js and
// closed chains, after Buss 2009's survey of IK methods) as an ikbench external solver, through the
// Node adapter. scripts/setup.sh installs it into third_party/node (gitignored):
//
//   ikbench run --urdf scenarios/data/robots/ur5.urdf \
//       --solvers "auto,ext:cmd='node examples/external/closed_chain_ik_solver.mjs'"
//
// The model JSON becomes closed-chain-ik's Link / Joint tree: each ikbench joint is a Joint frame at
// parent_T_joint, turned so that its axis is the frame's z axis (closed-chain-ik moves joints about
// or along their frame's axes only), with one degree of freedom (EZ for a revolute joint, Z for a
// prismatic one) and its limits; the body's Link turns back, so that body frames are ikbench's.
// Each goal is a Goal frame closed onto a Link at the goal point (position goals constrain X, Y, Z;
// pose goals all six). The library iterates in single precision (Float32Array); the harness
// verifies every answer in double precision by its own forward kinematics.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ext from '../../adapters/node/ikbench-external.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const core = join(root, 'third_party', 'node', 'node_modules', 'closed-chain-ik', 'src', 'core', 'index.js');
if (!existsSync(core)) {
  process.stderr.write(`closed_chain_ik_solver: ${core} is missing; install it with scripts/setup.sh main\n`);
  process.exit(3);
}
const { Link, Joint, Goal, Solver, DOF, SOLVE_STATUS } = await import(pathToFileURL(core).href);

// The quaternion (x, y, z, w) turning z onto the unit vector a.
function zTo([x, y, z]) {
  const n = Math.hypot(x, y, z);
  x /= n; y /= n; z /= n;
  if (z < -1 + 1e-12) return [1, 0, 0, 0];  // half a turn about x
  // q = (z_axis x a, 1 + z_axis . a), normalised.
  const q = [-y, x, 0, 1 + z];
  const m = Math.hypot(...q);
  return q.map((v) => v / m);
}
const conj = ([x, y, z, w]) => [-x, -y, -z, w];
function qmul([ax, ay, az, aw], [bx, by, bz, bw]) {
  return [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
    aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz];
}

// The tree of one model, built once and reused for its problems.
function buildTree(model) {
  const rootLink = new Link();
  const links = [];
  const joints = [];
  model.joints.forEach((j, i) => {
    const parent = j.parent < 0 ? rootLink : links[j.parent];
    const t = j.parent_T_joint;
    let align = [0, 0, 0, 1];
    const joint = new Joint();
    joint.setPosition(...t.xyz);
    if (j.type === 'revolute' || j.type === 'prismatic') {
      align = zTo(j.axis);
      joint.setDoF(j.type === 'revolute' ? DOF.EZ : DOF.Z);
      const lo = j.lower[0] === null ? -Infinity : j.lower[0];
      const hi = j.upper[0] === null ? Infinity : j.upper[0];
      joint.setMinLimits(lo);
      joint.setMaxLimits(hi);
    } else if (j.type !== 'fixed') {
      throw new Error(`joint '${j.name}' is ${j.type}: only revolute, prismatic and fixed joints are mapped`);
    }
    joint.setQuaternion(...qmul(t.quat_xyzw, align));
    const link = new Link();
    link.setQuaternion(...conj(align));
    parent.addChild(joint);
    joint.addChild(link);
    links.push(link);
    joints.push(joint);
  });
  return { rootLink, links, joints };
}

let cached = null;  // { model, tree }

function solve(model, problem) {
  let tree;
  try {
    if (!cached || cached.model !== model) cached = { model, tree: buildTree(model) };
    tree = cached.tree;
  } catch (e) {
    return { q: problem.q0, status: 'unsupported', iterations: 0, message: e.message };
  }
  const { rootLink, links, joints } = tree;
  model.joints.forEach((j, i) => {
    if (j.type === 'revolute' || j.type === 'prismatic') {
      joints[i].setDoFValues(problem.q0[j.idx_q]);
    }
  });
  // Goals: a Link at the goal point in the goal's body, and a Goal frame closed onto it.
  const goalLinks = [], goals = [];
  for (const g of problem.goals) {
    // (A Link's children are Joints: a Joint without degrees of freedom holds the point.)
    const holder = new Joint();
    holder.setPosition(...g.point);
    const at = new Link();
    holder.addChild(at);
    links[g.body_index].addChild(holder);
    const goal = new Goal();
    goal.setPosition(...g.target_position);
    goal.setQuaternion(...g.target_quat_xyzw);
    if (g.kind === 'position') goal.setGoalDoF(DOF.X, DOF.Y, DOF.Z);
    else if (g.kind === 'orientation') goal.setGoalDoF(DOF.EX, DOF.EY, DOF.EZ);
    goal.makeClosure(at);
    goalLinks.push([holder, at]);
    goals.push(goal);
  }
  const solver = new Solver([rootLink, ...goals]);
  solver.maxIterations = 1;
  solver.restPoseFactor = 0;
  solver.translationConvergeThreshold = problem.position_tolerance;
  solver.rotationConvergeThreshold = problem.orientation_tolerance;
  solver.stallThreshold = 0;
  // One solver iteration per call, so that the run's iteration cap and time budget hold.
  const deadline = problem.time_budget_us > 0 ? performance.now() + problem.time_budget_us / 1000 : Infinity;
  let status = 'max-iterations', it = 0;
  const q = problem.q0.slice();
  const read = () => model.joints.forEach((j, i) => {
    if (j.type === 'revolute' || j.type === 'prismatic') q[j.idx_q] = joints[i].dofValues[joints[i].dof[0]];  // indexed by DOF (EZ: 5, Z: 2)
  });
  for (; it < problem.max_iterations; ++it) {
    const results = solver.solve();
    if (results.every((r) => r === SOLVE_STATUS.CONVERGED)) {
      read();
      // Its convergence test is in single precision: go on until ikbench's holds in double.
      const [ep, eo] = model.goalErrors(q, problem.goals);
      if (ep <= problem.position_tolerance && eo <= problem.orientation_tolerance) {
        status = 'converged';
        ++it;
        break;
      }
    }
    if (performance.now() > deadline) {
      status = 'time-limit';
      ++it;
      break;
    }
  }
  read();
  for (let k = 0; k < goals.length; ++k) {
    goals[k].removeChild(goalLinks[k][1]);  // the closure
    links[problem.goals[k].body_index].removeChild(goalLinks[k][0]);
  }
  return { q, status, iterations: it };
}

ext.solver(solve, { name: 'closed-chain-ik' }).serve();
