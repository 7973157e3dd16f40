// FABRIK, Forward And Backward Reaching Inverse Kinematics (Aristidou &
// Lasenby 2011, "FABRIK: A fast, iterative solver for the Inverse Kinematics
// problem", Graphical Models 73(5)), on the shared Model, returning q.
//
// The position skeleton. Nodes are the pivots of the revolute/ball joints
// that move some goal, plus one node per goal effector point. Each node's
// parent node is its nearest moving ancestor joint; the offset from the
// parent's body frame to the node (through fixed joints) is constant, so the
// inter-node distances d_i are the paper's fixed "bone lengths".
// Orientation as points: an orientation or pose goal adds two nodes rigidly
// attached to its body, at L e_x and L e_y from the effector point (L = the
// goal's orientation_scale, so that a rotation error theta moves them about
// L theta, the size of the goal's orientation residual rows in goal.h), with
// targets at L R_t e_x and L R_t e_y from the effector's target (or, for an
// orientation-only goal, from the effector's current position). The paper
// moves points only; an orientation target is commonly added as an extra
// "virtual" bone from the effector along the target's direction, which fixes
// two of three rotation angles: two such points fix all three. Stage 2 aims
// them like any other children.
//
// One iteration (every position is re-read from FK(q) first, so FABRIK's
// internal points never drift from the configuration):
// 1. Forward reaching (paper Alg. 1, "stage 1"; Sec. 5 for several end
//    effectors): effector nodes are put on their targets; walking toward the
//    root, a parent is placed on the line from its child's new position to its
//    own old position, at distance d: p' = c' + d (p - c') / |p - c'|. A node
//    with several children (a sub-base) takes the centroid of the positions
//    its branches propose (paper Sec. 5). A pose goal proposes its joint's
//    pivot directly: the target pose fixes the body frame and so the pivot,
//    where its effector and axis points would each propose a point on a
//    sphere around their own target (these only meet at the solution). So
//    does a position goal whose effector sits on the pivot (a wrist target
//    on the wrist joint).
// 2. Backward reaching ("stage 2"), done in joint space so that it yields q
//    and respects each joint's type: joints are visited root to tip with their
//    frames computed by FK of the already updated ancestors (the base stays
//    fixed), and each joint is rotated to aim its child node(s) at their
//    forward-stage positions: a ball joint by the minimal rotation taking the
//    current child direction to the desired one, after projecting the desired
//    direction into its cone limit (paper Sec. 4.1 constraints; cone around
//    the child link's rest direction); a hinge by the angle about its axis
//    that best aims the child, i.e. the desired point projected onto the
//    hinge plane (paper Sec. 4.1, "project onto the plane"); several children
//    by the best rotation of all child directions (Wahba). Each joint is then
//    clamped into its limits. For an unconstrained ball joint this is exactly
//    the paper's backward step c'' = p'' + d (c' - p'') / |c' - p''|.
// 3. FK(q) gives the errors the stopping rules see (never FABRIK's points).
// Unreachable target on a single chain: the paper's test |t - base| > sum d_i
// puts every node on the ray from the base to the target; for an
// unconstrained chain that is the best stretch and the solve ends there
// (status stalled, with a message).
//
// Not supported, by design (unsupported with the reason): prismatic joints
// (they change a bone length), a free-floating root (FABRIK needs a fixed
// base), a hinge whose child joint or effector is offset along the hinge axis
// (the child then moves on a circle not centred on the pivot, e.g. shoulder
// offsets of industrial arms, or a twist joint along its own link; the
// orientation points are exempt, see the check), and zero-length bones
// (two moving joints on one pivot).
// Constraints are enforced in the backward stage only (where each joint's
// frame is known); the forward stage is the unconstrained one.
// Cost per iteration: O(nodes) for stage 1 and O(n) for stage 2, no heap.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "geometric_util.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/solver.h"

namespace ikbench::geometric {
namespace {

struct FabrikPlan {
  // Nodes: moving joints in joint order, then goal nodes in goal order (a
  // goal's effector point, then for an orientation or pose goal its two axis
  // points), so a reverse walk visits children before parents.
  std::vector<int> node_joint, node_goal, node_parent;
  // Goal nodes: -1 for the effector point, a = 0 / 1 for the axis point
  // point + L e_a (body frame, L = the goal's orientation_scale).
  std::vector<int> node_axis;
  // Per goal: the node of its nearest moving joint (-1: none), and whether
  // the goal proposes that joint's stage-1 position itself (pose goals, and
  // effectors on the joint's pivot) instead of through its goal nodes; then
  // goal_pivot is the joint's pivot in the goal body's frame.
  std::vector<int> goal_joint_node;
  std::vector<char> goal_direct;
  std::vector<Eigen::Vector3d> goal_pivot;
  std::vector<Eigen::Vector3d> node_offset;  // in the parent joint's body frame
  std::vector<double> node_len;
  std::vector<double> node_cone;  // cone half-angle of a ball node [rad], inf = none
  std::vector<int> joint_node;    // per joint, -1 if not a node
  std::vector<int> child_begin, child_list;  // CSR children of each node
  bool single_chain = false;  // one goal, no branching
  bool unconstrained = false; // only ball joints without limits
  int chain_root = -1, chain_goal = -1;  // nodes
  double reach = 0.0;
};

// A goal node's point in the goal body's frame: the effector point (axis
// -1) or the axis point point + L e_axis (L = orientation_scale).
Eigen::Vector3d goalNodePoint(const Goal& g, int axis) {
  return axis < 0 ? g.point : Eigen::Vector3d(g.point + g.orientation_scale * Eigen::Vector3d::Unit(axis));
}

bool buildPlan(const Problem& problem, FabrikPlan* plan, std::string* why) {
  const Model& model = *problem.model;
  const int n = model.numJoints();
  const int G = static_cast<int>(problem.goals.size());
  auto fail = [&](std::string msg) {
    if (why) *why = std::move(msg);
    return false;
  };
  // Nearest moving ancestor of each joint frame and the constant transform
  // from that ancestor's body frame to the joint frame.
  std::vector<int> dof_anc(n, -1);
  std::vector<Pose3d> anc_T_joint(n);
  for (int i = 0; i < n; ++i) {
    const int p = model.parent(i);
    if (p < 0) {
      dof_anc[i] = -1;
      anc_T_joint[i] = model.parentTJoint(i);
    } else if (model.jointNv(p) > 0) {
      dof_anc[i] = p;
      anc_T_joint[i] = model.parentTJoint(i);
    } else {
      dof_anc[i] = dof_anc[p];
      anc_T_joint[i] = anc_T_joint[p] * model.parentTJoint(i);
    }
  }
  std::vector<char> moving(n, 0);
  for (const Goal& g : problem.goals)
    for (int j = g.body; j >= 0; j = model.parent(j))
      if (model.jointNv(j) > 0) moving[j] = 1;
  FabrikPlan& P = *plan;
  P = FabrikPlan();
  P.joint_node.assign(n, -1);
  P.unconstrained = true;
  for (int i = 0; i < n; ++i) {
    if (!moving[i]) continue;
    const JointType t = model.type(i);
    if (t == JointType::kPrismatic)
      return fail(fmt::format("prismatic joint '{}' changes a bone length; FABRIK keeps every inter-joint distance "
                              "fixed (use ccd or dls)",
                              model.joint(i).name));
    if (t == JointType::kFree)
      return fail(fmt::format("free-floating root joint '{}': FABRIK needs a fixed base (use ccd or dls)",
                              model.joint(i).name));
    P.joint_node[i] = static_cast<int>(P.node_joint.size());
    P.node_joint.push_back(i);
    P.node_goal.push_back(-1);
    P.node_axis.push_back(-1);
    const int a = dof_anc[i];
    P.node_parent.push_back(a >= 0 ? P.joint_node[a] : -1);
    P.node_offset.push_back(anc_T_joint[i].p);
    double cone = std::numeric_limits<double>::infinity();
    if (t == JointType::kBall) {
      const int iv = model.idxV(i);
      for (int k = 0; k < 3; ++k) {
        const double lo = model.lowerLimits()[iv + k], hi = model.upperLimits()[iv + k];
        if (std::isfinite(lo)) cone = std::min(cone, std::max(0.0, -lo));
        if (std::isfinite(hi)) cone = std::min(cone, std::max(0.0, hi));
      }
    }
    if (t != JointType::kBall || std::isfinite(cone)) P.unconstrained = false;
    P.node_cone.push_back(cone);
  }
  for (int k = 0; k < G; ++k) {
    const Goal& g = problem.goals[k];
    const bool body_moves = model.jointNv(g.body) > 0;
    const int j = body_moves ? g.body : dof_anc[g.body];
    // A point of the goal's body in the frame of its nearest moving joint.
    auto inJointFrame = [&](const Eigen::Vector3d& x) {
      return body_moves ? x : Eigen::Vector3d(anc_T_joint[g.body].act(x));
    };
    auto addNode = [&](int axis, const Eigen::Vector3d& off) {
      P.node_joint.push_back(-1);
      P.node_goal.push_back(k);
      P.node_axis.push_back(axis);
      P.node_parent.push_back(j >= 0 ? P.joint_node[j] : -1);
      P.node_offset.push_back(off);
      P.node_cone.push_back(std::numeric_limits<double>::infinity());
    };
    P.goal_joint_node.push_back(j >= 0 ? P.joint_node[j] : -1);
    // The pivot of joint j in the goal body's frame (its origin if the body
    // is joint j's own).
    P.goal_pivot.push_back(body_moves ? Eigen::Vector3d::Zero()
                                      : Eigen::Vector3d(anc_T_joint[g.body].inverse().p));
    bool direct = g.kind == GoalKind::kPose;
    if (hasPosition(g.kind)) {
      const Eigen::Vector3d off = inJointFrame(g.point);
      // An effector on the pivot of joint j (a wrist target on the wrist
      // joint) has no bone to aim: its target is the pivot's.
      if (j >= 0 && off.norm() < 1e-9) {
        direct = true;
      } else {
        addNode(-1, off);
      }
    }
    P.goal_direct.push_back(direct);
    if (hasOrientation(g.kind)) {
      // Orientation as positions: two points rigidly attached to the body at
      // L e_x and L e_y from the effector point, with targets at L R_t e_x
      // and L R_t e_y from the effector's target. Both on target <=> the body
      // has the target orientation; a rotation error theta moves them by
      // about L theta, the size of the goal's orientation residual rows
      // (goal.h), so positions and orientations weigh as in the other
      // backends.
      for (int a = 0; a < 2; ++a)
        addNode(a, inJointFrame(goalNodePoint(g, a)));
    }
  }
  const int N = static_cast<int>(P.node_joint.size());
  P.node_len.resize(N);
  std::vector<int> count(N, 0);
  for (int c = 0; c < N; ++c) {
    P.node_len[c] = P.node_offset[c].norm();
    const int p = P.node_parent[c];
    if (p < 0) continue;
    ++count[p];
    const int pj = P.node_joint[p];
    const std::string child =
        P.node_goal[c] < 0     ? fmt::format("joint '{}'", model.joint(P.node_joint[c]).name)
        : P.node_axis[c] < 0 ? fmt::format("the effector of goal {}", P.node_goal[c])
                             : fmt::format("orientation point {} of goal {}", P.node_axis[c], P.node_goal[c]);
    if (P.node_len[c] < 1e-9)
      return fail(fmt::format("zero-length bone: {} sits on the pivot of joint '{}', so FABRIK cannot aim it",
                              child, model.joint(pj).name));
    // Orientation points are exempt: they are aimed by the hinge's best
    // angle in stage 2 like any child, and an axial offset only makes their
    // stage-1 placement approximate (their targets fix the body's rotation,
    // which a hinge may not reach anyway).
    if (model.type(pj) == JointType::kRevolute && P.node_axis[c] < 0) {
      const double along = model.axis(pj).dot(P.node_offset[c]);
      if (std::abs(along) > 1e-6 * P.node_len[c])
        return fail(fmt::format(
            "revolute joint '{}': {} is offset {:.4g} m along the hinge axis (the link is not perpendicular to "
            "the axis), so it moves on a circle not centred on the pivot and position-based FABRIK is "
            "ill-defined (use ccd or dls)",
            model.joint(pj).name, child, along));
    }
  }
  P.child_begin.assign(N + 1, 0);
  for (int i = 0; i < N; ++i) P.child_begin[i + 1] = P.child_begin[i] + count[i];
  P.child_list.resize(P.child_begin[N]);
  std::vector<int> fill(P.child_begin.begin(), P.child_begin.end() - 1);
  for (int c = 0; c < N; ++c)
    if (P.node_parent[c] >= 0) P.child_list[fill[P.node_parent[c]]++] = c;
  // A single chain: one goal, every moving joint has exactly one child node.
  P.single_chain = G == 1 && P.node_parent[N - 1] >= 0;
  for (int i = 0; i < N && P.single_chain; ++i)
    if (P.node_joint[i] >= 0 && count[i] != 1) P.single_chain = false;
  if (P.single_chain) {
    P.chain_goal = N - 1;
    for (int c = N - 1; c >= 0; c = P.node_parent[c]) {
      P.chain_root = c;
      P.reach += P.node_parent[c] >= 0 ? P.node_len[c] : 0.0;
    }
  }
  return true;
}

// Stage-1 target of a goal node: the goal's target position for the
// effector point; for an axis point (axis = 0 / 1) the effector's target plus
// L R_t e_axis, where an orientation-only goal, which has no position target,
// uses the effector's current position (from FK of this iteration's q).
Eigen::Vector3d goalNodeTarget(const Goal& g, int axis, const Data& d) {
  if (axis < 0) return g.target_position;
  const Eigen::Vector3d base = hasPosition(g.kind) ? g.target_position : d.world_T_body[g.body].act(g.point);
  return base + g.orientation_scale * g.target_orientation.col(axis);
}

class FabrikSolver final : public Solver {
 public:
  explicit FabrikSolver(const Params& p) : stretch_(p.getBool("stretch")) {}

  bool supports(const Problem& problem, std::string* why) const override {
    FabrikPlan plan;
    return buildPlan(problem, &plan, why);
  }

 protected:
  void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) override {
    const Model& model = *problem.model;
    std::string why;
    if (!buildPlan(problem, &plan_, &why)) {
      ctx.stop(Status::kUnsupported, "fabrik: " + why);
      return;
    }
    const FabrikPlan& P = plan_;
    const int N = static_cast<int>(P.node_joint.size());
    const int n = model.numJoints();
    std::vector<Eigen::Vector3d> pos(N), fwd(N), sum(N);
    std::vector<double> cnt(N);
    std::vector<Pose3d> cur(n);

    GoalErrors e = ctx.evaluate(q);
    if (ctx.begin(q, e)) return;
    for (;;) {
      const Data& d = ctx.data();
      for (int c = 0; c < N; ++c) {
        if (P.node_joint[c] >= 0) {
          pos[c] = d.world_T_body[P.node_joint[c]].p;
        } else {
          const Goal& g = problem.goals[P.node_goal[c]];
          pos[c] = d.world_T_body[g.body].act(goalNodePoint(g, P.node_axis[c]));
        }
        sum[c].setZero();
        cnt[c] = 0.0;
      }
      // Stage 1: forward reaching, effectors to root, centroids at sub-bases.
      bool stretched = false;
      if (stretch_ && P.single_chain) {
        const Eigen::Vector3d base = pos[P.chain_root];
        const Eigen::Vector3d to_target = problem.goals[0].target_position - base;
        const double dist = to_target.norm();
        if (dist > P.reach && dist > 0.0) {
          // Paper Alg. 1: target unreachable -> every node on the ray.
          const Eigen::Vector3d dir = to_target / dist;
          double along = P.reach;
          for (int c = P.chain_goal; c >= 0; c = P.node_parent[c]) {
            fwd[c] = base + along * dir;
            along -= P.node_parent[c] >= 0 ? P.node_len[c] : 0.0;
          }
          stretched = true;
        }
      }
      if (!stretched) {
        // Goals that place their joint's pivot directly: a pose target fixes
        // the whole body frame, T_t = (R_t, p_t - R_t point), and with it the
        // pivot at T_t * goal_pivot, which all of the goal's points agree on
        // (proposals from each point separately only meet there at the
        // solution, and their centroid converges slowly).
        for (int k = 0; k < static_cast<int>(problem.goals.size()); ++k) {
          const int jn = P.goal_joint_node[k];
          if (!P.goal_direct[k] || jn < 0) continue;
          const Goal& g = problem.goals[k];
          sum[jn] += g.kind == GoalKind::kPose
                         ? Eigen::Vector3d(g.target_position + g.target_orientation * (P.goal_pivot[k] - g.point))
                         : g.target_position;
          cnt[jn] += 1.0;
        }
        for (int c = N - 1; c >= 0; --c) {
          const int k = P.node_goal[c];
          if (k >= 0) {
            fwd[c] = goalNodeTarget(problem.goals[k], P.node_axis[c], d);
          } else {
            fwd[c] = cnt[c] > 0.0 ? Eigen::Vector3d(sum[c] / cnt[c]) : pos[c];
          }
          const int p = P.node_parent[c];
          if (p < 0 || (k >= 0 && P.goal_direct[k])) continue;
          Eigen::Vector3d dir = pos[p] - fwd[c];
          double len = dir.norm();
          if (len < 1e-12) {  // coincident: keep the bone's old direction
            dir = pos[p] - pos[c];
            len = dir.norm();
          }
          sum[p] += len > 1e-12 ? Eigen::Vector3d(fwd[c] + (P.node_len[c] / len) * dir) : fwd[c];
          cnt[p] += 1.0;
        }
      }
      // Stage 2: backward reaching in joint space, root to tip, with FK.
      double step2 = 0.0;
      for (int i = 0; i < n; ++i) {
        const int parent = model.parent(i);
        const Pose3d Tj = parent < 0 ? model.parentTJoint(i) : cur[parent] * model.parentTJoint(i);
        const int node = P.joint_node[i];
        if (node >= 0) {
          const Eigen::Vector3d& pivot = Tj.p;
          const Eigen::Matrix3d R_body = Tj.R * jointMotion(model, i, q).R;
          const int b = P.child_begin[node], cend = P.child_begin[node + 1];
          if (model.type(i) == JointType::kRevolute) {
            Eigen::Matrix3d H = Eigen::Matrix3d::Zero();
            for (int ci = b; ci < cend; ++ci) {
              const int c = P.child_list[ci];
              H.noalias() += (R_body * P.node_offset[c]) * (fwd[c] - pivot).transpose();
            }
            addScalar(model, i, bestHingeAngle(Tj.R * model.axis(i), H), q, &step2);
          } else if (cend - b == 1) {
            const int c = P.child_list[b];
            Eigen::Vector3d v = fwd[c] - pivot;
            const double vn = v.norm();
            if (vn > 1e-12 && std::isfinite(P.node_cone[node])) {
              // Cone limit: project the desired direction onto the cone of
              // half-angle node_cone about the bone's rest direction.
              const Eigen::Vector3d axis = Tj.R * P.node_offset[c] / P.node_len[c];
              v /= vn;
              const double cosang = std::clamp(v.dot(axis), -1.0, 1.0);
              if (std::acos(cosang) > P.node_cone[node]) {
                Eigen::Vector3d w = v - cosang * axis;
                if (w.norm() < 1e-12) w = axis.unitOrthogonal();
                v = std::cos(P.node_cone[node]) * axis + std::sin(P.node_cone[node]) * w.normalized();
              }
            }
            rotateBall(model, i, Tj.R, minimalRotation(R_body * P.node_offset[c], v), q, &step2);
          } else {
            Eigen::Matrix3d H = Eigen::Matrix3d::Zero();
            for (int ci = b; ci < cend; ++ci) {
              const int c = P.child_list[ci];
              const Eigen::Vector3d v = fwd[c] - pivot;
              const double vn = v.norm();
              if (vn > 1e-12) H.noalias() += (R_body * P.node_offset[c]) * (v * (P.node_len[c] / vn)).transpose();
            }
            rotateBall(model, i, Tj.R, bestRotation(H), q, &step2);
          }
        }
        cur[i] = Tj * jointMotion(model, i, q);
      }
      const double step = std::sqrt(step2);
      e = ctx.evaluate(q);
      if (ctx.endIteration(q, e, step)) return;
      if (stretched && P.unconstrained) {
        ctx.stop(Status::kStalled,
                 fmt::format("fabrik: target out of reach (distance {:.6g} m > reach {:.6g} m); chain stretched "
                             "toward it (Aristidou & Lasenby 2011, Alg. 1)",
                             (problem.goals[0].target_position - pos[P.chain_root]).norm(), P.reach));
        return;
      }
    }
  }

 private:
  bool stretch_ = true;
  FabrikPlan plan_;  // rebuilt per solve, kept to reuse its capacity
};

}  // namespace

SolverInfo fabrikInfo() {
  return {"fabrik",
          "forward and backward reaching IK on joint positions, converted to q by aiming each joint; chains, trees "
          "with sub-bases, hinge planes and ball cones; orientation and pose goals through two points attached "
          "to the effector's body (Aristidou & Lasenby 2011)",
          {{"stretch", ParamType::kBool, "1",
            "single chain: when |target - base| > reach, put every node on the ray to the target at once "
            "(paper Alg. 1) and, if unconstrained, stop there"}},
          [](const Params& p) { return std::make_unique<FabrikSolver>(p); }};
}

}  // namespace ikbench::geometric
