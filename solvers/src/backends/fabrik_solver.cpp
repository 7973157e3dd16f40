// FABRIK, Forward And Backward Reaching Inverse Kinematics (Aristidou &
// Lasenby 2011, "FABRIK: A fast, iterative solver for the Inverse Kinematics
// problem", Graphical Models 73(5)), on the shared Model, returning q.
//
// The position skeleton. Nodes are the pivots of the revolute/ball/free
// joints that move some goal, plus one node per goal effector point. Moving
// joints on one pivot (a joint whose nearest moving ancestor sits at the same
// point, e.g. the zero-length hip, collar and hand joints of CMU skeletons)
// share one node: together they act as one joint with their combined
// freedom. Each node's parent node is the node of its nearest moving
// ancestor; the distance to it is constant (the paper's "bone length" d_i),
// whatever the joints between them do.
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
//    Joint limits act here too (paper Sec. 4: the constraint of joint c is
//    applied when its parent bone is placed, in the forward stage as in the
//    backward one). Frames are carried along as in Aristidou, Chrysanthou &
//    Lasenby 2016 ("Extending FABRIK with model constraints", CAVW 27(1)):
//    joint c's body is turned by the rotation that takes its child bones to
//    their new directions (or, in a chain, keeps the frame its child's step
//    left for it), the parent's body by the minimal rotation taking the old
//    parent bone to the proposed one; if the joint rotation between the two
//    (R_dof^T R_body) leaves the limits, it is projected into them (hinge:
//    the nearest rotation about the axis within its range; ball: swing and
//    twist, geometric_util.h) and the parent bone is turned instead, keeping
//    the child's frame: p' = c' - R_parent' * offset. So the forward stage
//    only proposes parent positions that the joint can realise. A ball whose
//    only child is an effector point first spends the free turn of its body
//    about that bone on its twist limit (the point does not move).
// 2. Backward reaching ("stage 2"), done in joint space so that it yields q
//    and respects each joint's type: joints are visited root to tip with their
//    frames computed by FK of the already updated ancestors, and each joint is
//    rotated to aim its child node(s) at their forward-stage positions: a ball
//    joint by the minimal rotation taking the current child direction to the
//    desired one (several children: the best rotation of all child directions,
//    Wahba), a hinge by the angle about its axis within its range that best
//    aims the children, i.e. the desired points projected onto the hinge plane
//    (paper Sec. 4.1). A ball whose child is a hinge (a hip above a knee, a
//    shoulder above an elbow) also turns about the new bone so that the
//    hinge's child comes to the azimuth of its stage-1 position: that twist
//    sets the plane the hinge can bend in, which aiming the hinge's pivot
//    alone leaves wherever it was.
//    Every joint rotation is then projected into its limits (the same swing,
//    twist and hinge rules as in stage 1, for one child or several), and the
//    model's box clamp has the last word. For an unconstrained ball joint this
//    is exactly the paper's backward step c'' = p'' + d (c' - p'') / |c' - p''|.
// 3. FK(q) gives the errors the stopping rules see (never FABRIK's points).
//
// Free-floating root (a free joint without moving ancestors, e.g. the Hips
// of a BVH skeleton). Its pivot is a sub-base like any other (paper Sec. 5):
// it takes the centroid of what its sub-chains propose in stage 1, stage 2
// translates the root there and then rotates it like a ball joint to aim its
// sub-chains (`root=centroid`). With `root=free` (default) each iteration
// first translates the root rigidly by the weighted mean of the effectors'
// position errors (the free joint's closest point, as in CCD): in a tracking
// sequence the centroid alone lets the root lag behind the targets' common
// motion while the limbs stretch to make up, frame after frame, until they
// are straight and FABRIK slows to a crawl (measured in
// docs/geometric-solvers.md). With `root=pinned` the translation stays where
// the start configuration has it (the usual choice when an animation drives
// the root) and only the rotation aims the sub-chains.
// Unreachable target on a single chain with a fixed (or pinned) base: the
// paper's test |t - base| > sum d_i puts every node on the ray from the base
// to the target; for an unconstrained chain that is the best stretch and the
// solve ends there (status stalled, with a message).
//
// Not supported, by design (unsupported with the reason): prismatic joints
// (they change a bone length), a free joint below a moving joint, and a
// hinge whose child joint or effector is offset along the hinge axis (the
// child then moves on a circle not centred on the pivot, e.g. shoulder
// offsets of industrial arms, or a twist joint along its own link; the
// orientation points are exempt, see the check).
// Stage-1 limits apply at joints alone on their pivot; joints sharing a
// pivot are limited in stage 2 only.
// Cost per iteration: O(nodes) for stage 1 and O(n) for stage 2, no heap.
// The plan (nodes, bones, limits) is built once per model and goal layout and
// reused by later solves with the same layout (a tracking sequence).
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "geometric_util.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/solver.h"

namespace ikbench::geometric {
namespace {

constexpr double kColocated = 1e-9;  // [m] a joint this close to its moving ancestor shares its pivot

struct FabrikPlan {
  // Cache key: the model and the goals' layout (not their targets).
  std::shared_ptr<const Model> model;
  std::vector<int> key_body;
  std::vector<GoalKind> key_kind;
  std::vector<Eigen::Vector3d> key_point;
  std::vector<double> key_scale;
  bool ok = false;
  std::string why;

  // Nodes: pivot groups in joint order, then goal nodes in goal order (a
  // goal's effector point, then for an orientation or pose goal its two axis
  // points), so a reverse walk visits children before parents.
  std::vector<int> node_joint;  // first joint of the pivot group, -1 for goal nodes
  std::vector<int> node_goal, node_parent;
  std::vector<int> node_axis;   // goal nodes: -1 effector point, 0 / 1 axis point
  std::vector<double> node_len;  // distance to the parent node
  // Stage-1 limit of a joint node: its joint when alone on its pivot, with
  // limits (ball) or a hinge, and a moving parent; else -1.
  std::vector<int> node_limit_joint;
  std::vector<int> child_begin, child_list;  // CSR children of each node
  // Per joint: its pivot node (-1 if it moves no goal), the child nodes it
  // aims in stage 2 (CSR) with their rest directions in the joint frame.
  std::vector<int> joint_node;
  std::vector<int> aim_begin, aim_node;
  std::vector<RotationLimits> joint_limits;  // ball / free rotation
  // Per ball joint whose single aimed node is a hinge alone on its pivot: a
  // child node of that hinge (its twist about the bone sets the hinge's
  // plane, see stage 2); else -1.
  std::vector<int> joint_twist_node;
  std::vector<int> dof_anc;                  // nearest moving ancestor
  std::vector<Pose3d> anc_T_joint;           // its body frame -> joint frame
  // Per goal: the node of its nearest moving joint (-1: none), and whether
  // the goal proposes that joint's stage-1 position itself (pose goals, and
  // effectors on the joint's pivot) instead of through its goal nodes; then
  // goal_pivot is the joint's pivot in the goal body's frame.
  std::vector<int> goal_joint_node;
  std::vector<char> goal_direct;
  std::vector<Eigen::Vector3d> goal_pivot;
  int free_root = -1;         // the free root joint, if any goal moves it
  bool single_chain = false;  // one goal, no branching, base not free to move
  bool unconstrained = false; // only ball (or free) joints without limits
  int chain_root = -1, chain_goal = -1;  // nodes
  double reach = 0.0;
};

// A goal node's point in the goal body's frame: the effector point (axis
// -1) or the axis point point + L e_axis (L = orientation_scale).
Eigen::Vector3d goalNodePoint(const Goal& g, int axis) {
  return axis < 0 ? g.point : Eigen::Vector3d(g.point + g.orientation_scale * Eigen::Vector3d::Unit(axis));
}

bool sameLayout(const FabrikPlan& P, const Problem& problem) {
  if (P.model != problem.model || P.key_body.size() != problem.goals.size()) return false;
  for (size_t k = 0; k < problem.goals.size(); ++k) {
    const Goal& g = problem.goals[k];
    if (P.key_body[k] != g.body || P.key_kind[k] != g.kind || P.key_point[k] != g.point ||
        P.key_scale[k] != g.orientation_scale)
      return false;
  }
  return true;
}

bool buildPlan(const Problem& problem, bool pin_root, FabrikPlan* plan) {
  const Model& model = *problem.model;
  const int n = model.numJoints();
  const int G = static_cast<int>(problem.goals.size());
  FabrikPlan& P = *plan;
  P = FabrikPlan();
  P.model = problem.model;
  for (const Goal& g : problem.goals) {
    P.key_body.push_back(g.body);
    P.key_kind.push_back(g.kind);
    P.key_point.push_back(g.point);
    P.key_scale.push_back(g.orientation_scale);
  }
  auto fail = [&](std::string msg) {
    P.why = std::move(msg);
    P.ok = false;
    return false;
  };
  // Nearest moving ancestor of each joint frame and the constant transform
  // from that ancestor's body frame to the joint frame.
  P.dof_anc.assign(n, -1);
  P.anc_T_joint.assign(n, Pose3d());
  for (int i = 0; i < n; ++i) {
    const int p = model.parent(i);
    if (p < 0) {
      P.anc_T_joint[i] = model.parentTJoint(i);
    } else if (model.jointNv(p) > 0) {
      P.dof_anc[i] = p;
      P.anc_T_joint[i] = model.parentTJoint(i);
    } else {
      P.dof_anc[i] = P.dof_anc[p];
      P.anc_T_joint[i] = P.anc_T_joint[p] * model.parentTJoint(i);
    }
  }
  std::vector<char> moving(n, 0);
  for (const Goal& g : problem.goals)
    for (int j = g.body; j >= 0; j = model.parent(j))
      if (model.jointNv(j) > 0) moving[j] = 1;
  // Pivot groups: one node per pivot.
  P.joint_node.assign(n, -1);
  P.unconstrained = true;
  for (int i = 0; i < n; ++i) {
    if (!moving[i]) continue;
    const JointType t = model.type(i);
    const int a = P.dof_anc[i];
    if (t == JointType::kPrismatic)
      return fail(fmt::format("prismatic joint '{}' changes a bone length; FABRIK keeps every inter-joint distance "
                              "fixed (use ccd or dls)",
                              model.joint(i).name));
    if (t == JointType::kFree) {
      if (a >= 0)
        return fail(fmt::format("free joint '{}' below the moving joint '{}': FABRIK takes a free joint as the "
                                "skeleton's root only (use ccd or dls)",
                                model.joint(i).name, model.joint(a).name));
      P.free_root = i;
    }
    if (a >= 0 && P.anc_T_joint[i].p.norm() < kColocated) {
      P.joint_node[i] = P.joint_node[a];  // shares its ancestor's pivot
    } else {
      P.joint_node[i] = static_cast<int>(P.node_joint.size());
      P.node_joint.push_back(i);
      P.node_goal.push_back(-1);
      P.node_axis.push_back(-1);
      P.node_parent.push_back(a >= 0 ? P.joint_node[a] : -1);
    }
    if (t == JointType::kRevolute) P.unconstrained = false;
    for (int k = (t == JointType::kFree ? 3 : 0); k < model.jointNv(i) && t != JointType::kRevolute; ++k)
      if (model.hasFiniteLimits(model.idxV(i) + k)) P.unconstrained = false;
  }
  if (P.free_root >= 0 && !pin_root) P.unconstrained = false;  // the base moves: no stretch shortcut
  // Goal nodes.
  std::vector<int> node_attach(P.node_joint.size(), -1);  // joint whose body frame carries the node
  std::vector<Eigen::Vector3d> node_point(P.node_joint.size(), Eigen::Vector3d::Zero());  // in that frame
  for (size_t c = 0; c < P.node_joint.size(); ++c) {
    const int oc = P.node_joint[c];
    node_attach[c] = P.dof_anc[oc];
    node_point[c] = P.anc_T_joint[oc].p;
  }
  for (int k = 0; k < G; ++k) {
    const Goal& g = problem.goals[k];
    const bool body_moves = model.jointNv(g.body) > 0;
    const int j = body_moves ? g.body : P.dof_anc[g.body];
    // A point of the goal's body in the frame of its nearest moving joint.
    auto inJointFrame = [&](const Eigen::Vector3d& x) {
      return body_moves ? x : Eigen::Vector3d(P.anc_T_joint[g.body].act(x));
    };
    auto addNode = [&](int axis, const Eigen::Vector3d& off) {
      P.node_joint.push_back(-1);
      P.node_goal.push_back(k);
      P.node_axis.push_back(axis);
      P.node_parent.push_back(j >= 0 ? P.joint_node[j] : -1);
      node_attach.push_back(j);
      node_point.push_back(off);
    };
    P.goal_joint_node.push_back(j >= 0 ? P.joint_node[j] : -1);
    // The pivot of joint j in the goal body's frame (its origin if the body
    // is joint j's own).
    P.goal_pivot.push_back(body_moves ? Eigen::Vector3d::Zero()
                                      : Eigen::Vector3d(P.anc_T_joint[g.body].inverse().p));
    bool direct = g.kind == GoalKind::kPose;
    if (hasPosition(g.kind)) {
      const Eigen::Vector3d off = inJointFrame(g.point);
      // An effector on the pivot of joint j (a wrist target on the wrist
      // joint) has no bone to aim: its target is the pivot's.
      if (j >= 0 && off.norm() < kColocated) {
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
      for (int a = 0; a < 2; ++a) addNode(a, inJointFrame(goalNodePoint(g, a)));
    }
  }
  const int N = static_cast<int>(P.node_joint.size());
  P.node_len.assign(N, 0.0);
  P.node_limit_joint.assign(N, -1);
  std::vector<int> count(N, 0);
  // Aims: a child node c of node p is aimed by every joint of p's pivot
  // group on the path from c up to p (its attachment joint and the
  // co-located joints above it). Rest direction of c in joint j's frame: the
  // rest transforms from j's body down to c's attachment, motions identity.
  std::vector<std::vector<int>> aims(n);
  std::vector<Eigen::Vector3d> bone_sum(n, Eigen::Vector3d::Zero());  // sum of unit rest directions
  for (int c = 0; c < N; ++c) {
    const int p = P.node_parent[c];
    if (p < 0) continue;
    ++count[p];
    P.node_len[c] = node_point[c].norm();
    const std::string child =
        P.node_goal[c] < 0   ? fmt::format("joint '{}'", model.joint(P.node_joint[c]).name)
        : P.node_axis[c] < 0 ? fmt::format("the effector of goal {}", P.node_goal[c])
                             : fmt::format("orientation point {} of goal {}", P.node_axis[c], P.node_goal[c]);
    Pose3d j_T_point;  // attachment body frame in j's body frame, motions identity
    j_T_point.p = node_point[c];
    bool direct_child = true;  // no other moving joint between j and c
    for (int j = node_attach[c]; j >= 0 && P.joint_node[j] == p; j = P.dof_anc[j]) {
      aims[j].push_back(c);
      const Eigen::Vector3d rest = j_T_point.p;
      if (rest.norm() > 0.0) bone_sum[j] += rest.normalized();
      // Orientation points are exempt: they are aimed by the hinge's best
      // angle in stage 2 like any child, and an axial offset only makes their
      // stage-1 placement approximate (their targets fix the body's rotation,
      // which a hinge may not reach anyway).
      if (model.type(j) == JointType::kRevolute && P.node_axis[c] < 0 && direct_child) {
        const double along = model.axis(j).dot(rest);
        if (std::abs(along) > 1e-6 * P.node_len[c])
          return fail(fmt::format(
              "revolute joint '{}': {} is offset {:.4g} m along the hinge axis (the link is not perpendicular to "
              "the axis), so it moves on a circle not centred on the pivot and position-based FABRIK is "
              "ill-defined (use ccd or dls)",
              model.joint(j).name, child, along));
      }
      direct_child = false;
      j_T_point = P.anc_T_joint[j] * j_T_point;  // up one joint (its motion at identity)
    }
  }
  P.aim_begin.assign(n + 1, 0);
  for (int j = 0; j < n; ++j) P.aim_begin[j + 1] = P.aim_begin[j] + static_cast<int>(aims[j].size());
  P.aim_node.clear();
  for (int j = 0; j < n; ++j) P.aim_node.insert(P.aim_node.end(), aims[j].begin(), aims[j].end());
  P.joint_limits.assign(n, RotationLimits());
  for (int j = 0; j < n; ++j)
    if (moving[j] && (model.type(j) == JointType::kBall || model.type(j) == JointType::kFree))
      P.joint_limits[j] = rotationLimits(model, j, bone_sum[j]);
  P.joint_twist_node.assign(n, -1);
  for (int j = 0; j < n; ++j) {
    if (!moving[j] || model.type(j) == JointType::kRevolute || aims[j].size() != 1) continue;
    const int c = aims[j][0], h = P.node_joint[c];
    if (h < 0 || model.type(h) != JointType::kRevolute || aims[h].empty()) continue;
    bool alone = true;
    for (int i = h + 1; i < n && alone; ++i) alone = P.joint_node[i] != c;
    if (alone) P.joint_twist_node[j] = aims[h][0];
  }
  // Stage-1 limits: joints alone on their pivot, with a moving parent, that
  // aim at least one child: hinges always (their plane), balls if bounded.
  for (int c = 0; c < N; ++c) {
    const int j = P.node_joint[c];
    if (j < 0 || P.dof_anc[j] < 0 || aims[j].empty()) continue;
    bool alone = true;
    for (int i = j + 1; i < n && alone; ++i) alone = P.joint_node[i] != c;
    const bool limited = model.type(j) == JointType::kRevolute ||
                         (model.type(j) == JointType::kBall && P.joint_limits[j].bounded);
    if (alone && limited) P.node_limit_joint[c] = j;
  }
  P.child_begin.assign(N + 1, 0);
  for (int i = 0; i < N; ++i) P.child_begin[i + 1] = P.child_begin[i] + count[i];
  P.child_list.resize(P.child_begin[N]);
  std::vector<int> fill(P.child_begin.begin(), P.child_begin.end() - 1);
  for (int c = 0; c < N; ++c)
    if (P.node_parent[c] >= 0) P.child_list[fill[P.node_parent[c]]++] = c;
  // A single chain: one goal, every joint node has exactly one child node,
  // and a base that stays where it is.
  P.single_chain = G == 1 && N > 0 && P.node_parent[N - 1] >= 0 && (P.free_root < 0 || pin_root);
  for (int i = 0; i < N && P.single_chain; ++i)
    if (P.node_joint[i] >= 0 && count[i] != 1) P.single_chain = false;
  if (P.single_chain) {
    P.chain_goal = N - 1;
    for (int c = N - 1; c >= 0; c = P.node_parent[c]) {
      P.chain_root = c;
      P.reach += P.node_parent[c] >= 0 ? P.node_len[c] : 0.0;
    }
  }
  P.ok = true;
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

// The nearest joint rotation within joint j's limits to the local rotation
// L (= R_dof^T R_body): a hinge's nearest rotation about its axis, clamped;
// a ball's swing-twist projection (geometric_util.h).
Eigen::Matrix3d limitLocal(const Model& model, int j, const RotationLimits& lim, const Eigen::Matrix3d& L) {
  if (model.type(j) == JointType::kRevolute) {
    const int iv = model.idxV(j);
    // tr(R(a, theta)^T L) = tr(R(a, theta) L^T): bestHingeAngle(a, L^T).
    const double theta =
        bestHingeAngleWithin(model.axis(j), L.transpose(), model.lowerLimits()[iv], model.upperLimits()[iv]);
    return axisRotation<double>(model.axis(j), theta);
  }
  return projectRotation(Eigen::Quaterniond(L), lim).toRotationMatrix();
}

// Sets the rotation of ball joint j (or of a free root, quat_offset 3) to the
// local rotation L projected into its limits, then clamps it into the box.
// *step2 accumulates the squared tangent step actually taken.
void setLocalRotation(const Model& model, int j, const RotationLimits& lim, const Eigen::Quaterniond& L,
                      Eigen::VectorXd& q, double* step2) {
  const int iq = model.idxQ(j) + (model.type(j) == JointType::kFree ? 3 : 0);
  const Eigen::Quaterniond old_local = quatAt(q, iq).normalized();
  setQuat(q, iq, projectRotation(L, lim).normalized());
  clampJoint(model, j, q);
  *step2 += so3::logQuat(quatAt(q, iq) * old_local.conjugate()).squaredNorm();
}

class FabrikSolver final : public Solver {
 public:
  explicit FabrikSolver(const FabrikOptions& o)
      : stretch_(o.stretch),
        root_(o.root == FabrikRoot::kFree       ? RootMode::kFree
              : o.root == FabrikRoot::kCentroid ? RootMode::kCentroid
                                                : RootMode::kPinned),
        forward_limits_(o.limits == FabrikLimits::kBoth) {}

  bool supports(const Problem& problem, std::string* why) const override {
    if (!pointTargetsOnly(problem, "fabrik", why)) return false;
    const FabrikPlan& P = plan(problem);
    if (!P.ok && why) *why = P.why;
    return P.ok;
  }

 protected:
  void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) override {
    const Model& model = *problem.model;
    const FabrikPlan& P = plan(problem);
    if (!P.ok) {
      ctx.stop(Status::kUnsupported, "fabrik: " + P.why);
      return;
    }
    const int N = static_cast<int>(P.node_joint.size());
    const int n = model.numJoints();
    pos_.resize(N);
    fwd_.resize(N);
    sum_.resize(N);
    cnt_.resize(N);
    cur_.resize(n);
    frame_.resize(N);
    has_frame_.resize(N);
    std::vector<Eigen::Vector3d>&pos = pos_, &fwd = fwd_, &sum = sum_;
    std::vector<double>& cnt = cnt_;
    std::vector<Pose3d>& cur = cur_;

    GoalErrors e = ctx.evaluate(q);
    if (ctx.begin(q, e)) return;
    for (;;) {
      double step2 = 0.0;
      // root=free: first the rigid translation that best moves every
      // effector onto its target (the weighted mean position error: the free
      // joint's closest point), so that the root follows the targets' common
      // motion instead of lagging while the limbs stretch.
      if (root_ == RootMode::kFree && P.free_root >= 0 && rigidRootStep(problem, ctx.data(), P.free_root, q, &step2))
        e = ctx.evaluate(q);
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
        has_frame_[c] = 0;
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
          Eigen::Vector3d proposal = len > 1e-12 ? Eigen::Vector3d(fwd[c] + (P.node_len[c] / len) * dir) : fwd[c];
          if (forward_limits_ && P.node_limit_joint[c] >= 0) proposal = limitedProposal(P, d, c, proposal);
          sum[p] += proposal;
          cnt[p] += 1.0;
        }
      }
      // Stage 2: backward reaching in joint space, root to tip, with FK.
      for (int i = 0; i < n; ++i) {
        const int parent = model.parent(i);
        const Pose3d Tj = parent < 0 ? model.parentTJoint(i) : cur[parent] * model.parentTJoint(i);
        const int node = P.joint_node[i];
        if (node >= 0) {
          const JointType type = model.type(i);
          const int iq = model.idxQ(i);
          Eigen::Vector3d pivot = Tj.p;
          if (type == JointType::kFree) {
            // The root's translation follows its stage-1 centroid.
            if (root_ != RootMode::kPinned && cnt[node] > 0.0 && !stretched) {
              const Eigen::Vector3d old = q.segment<3>(iq);
              q.segment<3>(iq) = Tj.R.transpose() * (fwd[node] - Tj.p);
              clampJoint(model, i, q);
              step2 += (q.segment<3>(iq) - old).squaredNorm();
            }
            pivot = Tj.act(q.segment<3>(iq));
          }
          const int qr = type == JointType::kFree ? iq + 3 : iq;
          const Eigen::Matrix3d R_body =
              type == JointType::kRevolute ? Eigen::Matrix3d(Tj.R * axisRotation<double>(model.axis(i), q[iq]))
                                           : Eigen::Matrix3d(Tj.R * quaternionToRotation<double>(q.data() + qr));
          // Child vectors now: the start-of-iteration vectors carried by the
          // change of this joint's body frame (its descendants have not moved
          // yet in this sweep).
          const Eigen::Matrix3d M = R_body * d.world_T_body[i].R.transpose();
          const Eigen::Vector3d& pivot0 = d.world_T_body[i].p;
          const int b = P.aim_begin[i], end = P.aim_begin[i + 1];
          if (type == JointType::kRevolute) {
            Eigen::Matrix3d H = Eigen::Matrix3d::Zero();
            for (int a = b; a < end; ++a) {
              const int c = P.aim_node[a];
              H.noalias() += (M * (pos[c] - pivot0)) * (fwd[c] - pivot).transpose();
            }
            // The best angle about the world axis, relative to the current
            // one, within the limits.
            const double theta = q[iq], lo = model.lowerLimits()[model.idxV(i)], hi = model.upperLimits()[model.idxV(i)];
            addScalar(model, i, bestHingeAngleWithin(Tj.R * model.axis(i), H, lo - theta, hi - theta), q, &step2);
          } else {
            Eigen::Matrix3d dR = Eigen::Matrix3d::Identity();
            if (end - b == 1) {
              const int c = P.aim_node[b];
              const Eigen::Vector3d v = fwd[c] - pivot;
              dR = minimalRotation(M * (pos[c] - pivot0), v);
              const int g = P.joint_twist_node[i];
              if (g >= 0 && v.norm() > 1e-12) {
                // The child is a hinge, which can only bend in its plane: the
                // twist about the new bone that brings the hinge's child to
                // the azimuth of its stage-1 position sets that plane.
                const Eigen::Vector3d t = v.normalized();
                Eigen::Vector3d x = dR * (M * (pos[g] - pivot0)), y = fwd[g] - pivot;
                x -= x.dot(t) * t;
                y -= y.dot(t) * t;
                if (x.norm() > 1e-9 * P.node_len[c] && y.norm() > 1e-9 * P.node_len[c])
                  dR = Eigen::AngleAxisd(std::atan2(t.dot(x.cross(y)), x.dot(y)), t).toRotationMatrix() * dR;
              }
            } else if (end > b) {
              Eigen::Matrix3d H = Eigen::Matrix3d::Zero();
              for (int a = b; a < end; ++a) {
                const int c = P.aim_node[a];
                const Eigen::Vector3d v = fwd[c] - pivot;
                const double vn = v.norm();
                if (vn > 1e-12) H.noalias() += (M * (pos[c] - pivot0)) * (v * (P.node_len[c] / vn)).transpose();
              }
              dR = bestRotation(H);
            }
            // Local rotation after the world rotation dR at this joint:
            // R_dof^T dR R_body, then into the limits.
            const Eigen::Quaterniond L(Eigen::Matrix3d(Tj.R.transpose() * dR * R_body));
            setLocalRotation(model, i, P.joint_limits[i], L, q, &step2);
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
  // The plan of this problem's model and goal layout, rebuilt only when they
  // change (a tracking sequence reuses it frame after frame).
  const FabrikPlan& plan(const Problem& problem) const {
    if (!sameLayout(plan_, problem)) buildPlan(problem, root_ == RootMode::kPinned, &plan_);
    return plan_;
  }

  // Stage-1 proposal for the parent of joint node c (joint j alone on its
  // pivot) with j's limits applied: j's body turned to aim its children at
  // their new positions, the parent's body carried by the minimal rotation
  // of the parent bone; if the joint rotation between them leaves the limits,
  // the parent bone is turned so that the projected rotation holds.
  Eigen::Vector3d limitedProposal(const FabrikPlan& P, const Data& d, int c, const Eigen::Vector3d& proposal) {
    const Model& model = *P.model;
    const int j = P.node_limit_joint[c], a = P.dof_anc[j], p = P.node_parent[c];
    const int b = P.aim_begin[j], end = P.aim_begin[j + 1];
    const Eigen::Vector3d pc = d.world_T_body[j].p;
    Eigen::Matrix3d dRc;
    if (end - b == 1) {
      const int ch = P.aim_node[b];
      dRc = minimalRotation(pos_[ch] - pc, fwd_[ch] - fwd_[c]);
    } else {
      Eigen::Matrix3d H = Eigen::Matrix3d::Zero();
      for (int k = b; k < end; ++k) {
        const int ch = P.aim_node[k];
        const Eigen::Vector3d v = fwd_[ch] - fwd_[c];
        const double vn = v.norm();
        if (vn > 1e-12) H.noalias() += (pos_[ch] - pc) * (v * (P.node_len[ch] / vn)).transpose();
      }
      dRc = bestRotation(H);
    }
    // j's body: the frame its child's step left for it (a chain), else
    // carried by the rotation aiming its children.
    const Eigen::Matrix3d Rb = has_frame_[c] ? frame_[c] : Eigen::Matrix3d(dRc * d.world_T_body[j].R);
    const Eigen::Matrix3d Ra = minimalRotation(pc - pos_[p], fwd_[c] - proposal) * d.world_T_body[a].R;
    const Pose3d& aTj = P.anc_T_joint[j];
    Eigen::Matrix3d L = (Ra * aTj.R).transpose() * Rb;
    if (!has_frame_[c] && end - b == 1 && P.node_goal[P.aim_node[b]] >= 0 && model.type(j) == JointType::kBall) {
      // The body's turn about its bone to an effector point leaves the point
      // in place: spend it on the twist limit (a turn by phi about the bone r
      // changes the twist about e_k by about phi r_k).
      const RotationLimits& lim = P.joint_limits[j];
      const int k = lim.twist_axis;
      const Eigen::Vector3d r = (Rb.transpose() * (pos_[P.aim_node[b]] - pc)).normalized();
      for (int it = 0; it < 2; ++it) {
        Eigen::Quaterniond Lq(L);
        if (Lq.w() < 0) Lq.coeffs() = -Lq.coeffs();
        const double tw = 2.0 * std::atan2(Lq.vec()[k], Lq.w());
        const double dt = std::clamp(tw, lim.lo[k], lim.hi[k]) - tw;
        if (dt == 0.0 || std::abs(r[k]) < 0.3) break;
        L = L * Eigen::AngleAxisd(dt / r[k], r).toRotationMatrix();
      }
    }
    const Eigen::Matrix3d Lc = limitLocal(model, j, P.joint_limits[j], L);
    if (so3::angle(Lc * L.transpose()) < 1e-12) return proposal;
    const Eigen::Matrix3d Ra_limited = (Ra * aTj.R) * L * Lc.transpose() * aTj.R.transpose();
    // A parent in a chain keeps this frame for its own step (its body, when
    // it is the node's joint; a co-located group or sub-base recomputes).
    if (P.child_begin[p + 1] - P.child_begin[p] == 1 && P.node_joint[p] == a) {
      frame_[p] = Ra_limited;
      has_frame_[p] = 1;
    }
    return fwd_[c] - Ra_limited * aTj.p;
  }

  // Translates the free root j by the weighted mean of the goals' position
  // errors, sum w^2 (t - x) / sum w^2, at the FK of q in `d`. Returns whether
  // it moved; *step2 accumulates the squared translation.
  static bool rigidRootStep(const Problem& problem, const Data& d, int j, Eigen::VectorXd& q, double* step2) {
    const Model& model = *problem.model;
    Eigen::Vector3d num = Eigen::Vector3d::Zero();
    double den = 0.0;
    for (const Goal& g : problem.goals) {
      if (!hasPosition(g.kind)) continue;
      const double w2 = g.weight * g.weight;
      num += w2 * (g.target_position - d.world_T_body[g.body].act(g.point));
      den += w2;
    }
    if (!(den > 0.0)) return false;
    const int iq = model.idxQ(j);
    const Eigen::Vector3d old = q.segment<3>(iq);
    q.segment<3>(iq) += d.world_R_dof[j].transpose() * (num / den);
    clampJoint(model, j, q);
    const double moved2 = (q.segment<3>(iq) - old).squaredNorm();
    *step2 += moved2;
    return moved2 > 0.0;
  }

  // root=free: rigid translation, then the stage-1 centroid; centroid: the
  // centroid alone (Aristidou & Lasenby 2011, Sec. 5); pinned: neither.
  enum class RootMode { kFree, kCentroid, kPinned };
  bool stretch_ = true;
  RootMode root_ = RootMode::kFree;
  bool forward_limits_ = true;
  mutable FabrikPlan plan_;  // cached per model and goal layout
  // Per-iteration buffers, sized once per solve.
  std::vector<Eigen::Vector3d> pos_, fwd_, sum_;
  std::vector<double> cnt_;
  std::vector<Pose3d> cur_;
  std::vector<Eigen::Matrix3d> frame_;  // stage-1 body frames left by a child's limited step
  std::vector<char> has_frame_;
};

}  // namespace

SolverInfo fabrikInfo() {
  OptionsBinding<FabrikOptions> b;
  b.flag("stretch", &FabrikOptions::stretch,
         "single chain: when |target - base| > reach, put every node on the ray to the target at once (paper "
         "Alg. 1) and, if unconstrained, stop there");
  b.choice("root", &FabrikOptions::root, kFabrikRootNames,
           "free-floating root: free (each iteration the rigid translation that best moves all effectors onto their "
           "targets, then the centroid its sub-chains propose; its rotation aims them), centroid (the centroid "
           "alone, paper Sec. 5) or pinned (translation kept from the start configuration; rotation aims the "
           "sub-chains)");
  b.choice("limits", &FabrikOptions::limits, kFabrikLimitsNames,
           "where joint limits act: both (forward and backward stages, paper Sec. 4) or backward (stage 2 only)");
  return solverInfo("fabrik",
                    "forward and backward reaching IK on joint positions, converted to q by aiming each joint; "
                    "chains, trees with sub-bases, a free-floating root as a sub-base, hinge planes, ball swing and "
                    "twist limits in both stages; orientation and pose goals through two points attached to the "
                    "effector's body (Aristidou & Lasenby 2011; Aristidou, Chrysanthou & Lasenby 2016)",
                    b, [](const FabrikOptions& o) { return std::make_unique<FabrikSolver>(o); });
}

}  // namespace ikbench::geometric
