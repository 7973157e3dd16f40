// Cyclic coordinate descent (Wang & Chen 1991, "A combined optimization
// method for solving the inverse kinematics problem of mechanical
// manipulators", IEEE T-RA 7(4); Welman 1993, "Inverse kinematics and
// geometric constraints for articulated figure manipulation", MSc thesis,
// Simon Fraser University, ch. 4).
//
// One iteration is one sweep over every joint that moves a goal, by default
// from the tips toward the root (reverse topological order; "order" selects
// root-to-tip). Each joint in turn is set to the exact minimiser of the
// per-joint objective, with the other joints frozen:
//
//   f_j = sum_k w_k^2 ( |t_k - x_k|^2  +  s_k^2 * 2 (1 - cos phi_k) )
//
// over the goals k that joint j moves (effectors in its subtree): x_k the
// effector point, t_k its target, phi_k the angle of the orientation error
// R_target R_k^T, w_k the goal weight and s_k its orientation_scale [m/rad]
// (2 (1 - cos phi) ~ phi^2, so the orientation term is the squared residual
// row of goal.h for small errors). Several effectors are therefore handled as
// a weighted sum, not chain by chain. For a rotation dR about the pivot p,
// with u_k = x_k - p and v_k = t_k - p, f_j = const - tr(dR H) with
//   H = sum_k w_k^2 ( 2 u_k v_k^T + s_k^2 R_k R_target,k^T ),
// so: hinge (axis a): theta = atan2(a.vee(H), tr H - a^T H a) (the classic
// projection onto the plane normal to the axis, geometric_util.h); ball: the
// best rotation (Wahba's problem), or for a single position goal the minimal
// rotation taking u to v; prismatic (axis a): the closest point,
// d = sum w^2 a.(t - x) / sum w^2; free root: translation to the weighted mean
// then rotation as a ball. Each update is clamped into the joint limits
// before the next joint is visited.
//
// Cost: frames of the sweep come from the FK done at the end of the previous
// iteration; effector points are moved incrementally with each joint update
// and, for root-to-tip order, a per-body accumulated rigid motion keeps
// downstream frames current. So a sweep is O(n * goals), with no allocation
// (all buffers are sized before the loop); a full FK re-synchronises at the
// end of every sweep and gives the errors the stopping rules see.
#include <fmt/format.h>

#include <cmath>

#include "geometric_util.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/solver.h"

namespace ikbench::geometric {
namespace {

class CcdSolver final : public Solver {
 public:
  explicit CcdSolver(const CcdOptions& o)
      : max_angle_(o.max_angle), tip_to_root_(o.order == CcdOrder::kTipToRoot) {}

  bool supports(const Problem& problem, std::string* why) const override {
    return pointTargetsOnly(problem, "ccd", why);
  }

 protected:
  void solveImpl(const Problem& problem, Eigen::VectorXd& q, SolveContext& ctx) override {
    const Model& model = *problem.model;
    const int n = model.numJoints();
    const int G = static_cast<int>(problem.goals.size());
    // moves[j * G + k]: joint j is an ancestor-or-self of goal k's body.
    std::vector<char> moves(static_cast<size_t>(n) * G, 0);
    std::vector<char> active(n, 0);
    for (int k = 0; k < G; ++k)
      for (int j = problem.goals[k].body; j >= 0; j = model.parent(j))
        if (model.jointNv(j) > 0) moves[static_cast<size_t>(j) * G + k] = active[j] = 1;
    std::vector<Eigen::Vector3d> x(G);
    std::vector<Eigen::Matrix3d> Rk(G);
    std::vector<Pose3d> motion(n);  // current world = motion[b] * world at sweep start

    GoalErrors e = ctx.evaluate(q);
    if (ctx.begin(q, e)) return;
    for (;;) {
      const Data& d = ctx.data();
      for (int k = 0; k < G; ++k) {
        const Goal& g = problem.goals[k];
        x[k] = d.world_T_body[g.body].act(g.point);
        Rk[k] = d.world_T_body[g.body].R;
      }
      double step2 = 0.0;
      for (int s = 0; s < n; ++s) {
        const int j = tip_to_root_ ? n - 1 - s : s;
        const int parent = model.parent(j);
        // In tip-to-root order the parent has not moved yet this sweep.
        const Pose3d Mp = (parent >= 0 && !tip_to_root_) ? motion[parent] : Pose3d::Identity();
        motion[j] = Mp;
        if (!active[j]) continue;
        const Eigen::Matrix3d R_dof = Mp.R * d.world_R_dof[j];
        Eigen::Vector3d pivot = Mp.act(d.world_T_body[j].p);
        const char* mv = &moves[static_cast<size_t>(j) * G];
        Pose3d delta;  // world rigid motion applied by this joint update
        const JointType type = model.type(j);
        if (type == JointType::kPrismatic || type == JointType::kFree) {
          // Closest point: weighted mean of the position errors along the
          // slider axis (prismatic) or in 3D (free root).
          Eigen::Vector3d num = Eigen::Vector3d::Zero();
          double den = 0.0;
          for (int k = 0; k < G; ++k) {
            const Goal& g = problem.goals[k];
            if (!mv[k] || !hasPosition(g.kind)) continue;
            num += g.weight * g.weight * (g.target_position - x[k]);
            den += g.weight * g.weight;
          }
          if (den > 0.0) {
            if (type == JointType::kPrismatic) {
              const Eigen::Vector3d a = R_dof * model.axis(j);
              delta.p = a * addScalar(model, j, a.dot(num) / den, q, &step2);
            } else {
              const int iq = model.idxQ(j);
              const Eigen::Vector3d old = q.segment<3>(iq);
              q.segment<3>(iq) += R_dof.transpose() * (num / den);
              clampJoint(model, j, q);
              const Eigen::Vector3d applied = q.segment<3>(iq) - old;
              step2 += applied.squaredNorm();
              delta.p = R_dof * applied;
            }
            for (int k = 0; k < G; ++k)
              if (mv[k]) x[k] += delta.p;
            pivot += delta.p;
          }
        }
        if (type == JointType::kRevolute || type == JointType::kBall || type == JointType::kFree) {
          // H of the header comment, plus the count of goals for the
          // single-position-goal ball case.
          Eigen::Matrix3d H = Eigen::Matrix3d::Zero();
          int num_goals = 0, single = -1;
          bool any_orientation = false;
          for (int k = 0; k < G; ++k) {
            if (!mv[k]) continue;
            const Goal& g = problem.goals[k];
            const double w2 = g.weight * g.weight;
            if (hasPosition(g.kind)) H.noalias() += (2.0 * w2) * (x[k] - pivot) * (g.target_position - pivot).transpose();
            if (hasOrientation(g.kind)) {
              const double s2 = g.orientation_scale * g.orientation_scale;
              H.noalias() += (w2 * s2) * Rk[k] * g.target_orientation.transpose();
              any_orientation = true;
            }
            ++num_goals;
            single = k;
          }
          Eigen::Matrix3d dR;
          if (type == JointType::kRevolute) {
            const Eigen::Vector3d a = R_dof * model.axis(j);
            // The joint's exact optimum within its limits (relative angle).
            const int iv = model.idxV(j);
            const double now = q[model.idxQ(j)];
            double theta = bestHingeAngleWithin(a, H, model.lowerLimits()[iv] - now, model.upperLimits()[iv] - now);
            if (max_angle_ > 0.0) theta = std::clamp(theta, -max_angle_, max_angle_);
            theta = addScalar(model, j, theta, q, &step2);
            dR = axisRotation<double>(a, theta);
          } else {
            // Ball, or the rotation of a free root (same frame R_dof).
            if (num_goals == 1 && !any_orientation) {
              const Goal& g = problem.goals[single];
              dR = minimalRotation(x[single] - pivot, g.target_position - pivot);
            } else {
              dR = bestRotation(H);
            }
            dR = limitAngle(dR, max_angle_);
            dR = rotateBall(model, j, R_dof, dR, q, &step2, type == JointType::kFree ? 3 : 0);
          }
          for (int k = 0; k < G; ++k) {
            if (!mv[k]) continue;
            x[k] = pivot + dR * (x[k] - pivot);
            Rk[k] = dR * Rk[k];
          }
          // Compose: translation (if any) then rotation about the pivot.
          Pose3d rot;
          rot.R = dR;
          rot.p = pivot - dR * pivot;
          delta = rot * delta;
        }
        motion[j] = delta * Mp;
      }
      const double step = std::sqrt(step2);
      e = ctx.evaluate(q);
      if (ctx.endIteration(q, e, step)) return;
    }
  }

 private:
  double max_angle_ = 0.0;
  bool tip_to_root_ = true;
};

}  // namespace

SolverInfo ccdInfo() {
  OptionsBinding<CcdOptions> b;
  b.choice("order", &CcdOptions::order, kCcdOrderNames,
           "joint visiting order of a sweep: tip-to-root (reverse topological, classic) or root-to-tip");
  b.real("max_angle", &CcdOptions::max_angle, Range::atLeast(0), "rad",
         "largest rotation of one joint update (hinge angle or ball rotation angle); 0 = none");
  return solverInfo("ccd",
                    "cyclic coordinate descent, one joint at a time to its exact optimum, position and orientation "
                    "goals, trees by weighted sum (Wang & Chen 1991; Welman 1993)",
                    b, [](const CcdOptions& o) { return std::make_unique<CcdSolver>(o); });
}

}  // namespace ikbench::geometric
