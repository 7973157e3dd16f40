// Shared helpers for the unit tests.
#pragma once

#include <unistd.h>

#include <Eigen/Core>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/goal.h"
#include "ikbench/kinematics/model.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/core/solver_options.h"
#include "ikbench/solvers/registry.h"
#include "ikbench/solvers/solver.h"

namespace ikbench::test {

// A directory of this test process's own under the system's temporary
// directory: `name` inside ikbench_tests_<pid>, made empty. Tests that run at
// the same time (ctest -j, or two builds' test suites beside each other)
// never share a file; the process's directory is removed when it exits.
inline std::filesystem::path processTempDir(const std::string& name) {
  struct Root {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("ikbench_tests_" + std::to_string(::getpid()));
    ~Root() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static Root root;
  const std::filesystem::path dir = root.path / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Writes `text` to a file `name` in this process's temporary directory `dir`
// (processTempDir, not emptied again); returns its path.
inline std::string writeTempFile(const std::string& dir, const std::string& name, const std::string& text) {
  static std::map<std::string, std::filesystem::path> made;
  auto it = made.find(dir);
  if (it == made.end()) it = made.emplace(dir, processTempDir(dir)).first;
  const std::filesystem::path p = it->second / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

// The external corpus of public robot URDFs and mocap BVH files (robots/,
// skeletons/): $IKBENCH_CORPUS_DIR if set, else ../shared/data beside the
// source tree. Tests that read it skip, naming what is missing, when it is
// absent (a fresh clone); CI, which has it, runs them.
inline std::string corpusDir() {
  const char* env = std::getenv("IKBENCH_CORPUS_DIR");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(IKBENCH_SHARED_DATA_DIR);
}
inline std::string corpusFile(const std::string& relative) { return corpusDir() + "/" + relative; }

// Skips the current test when the corpus directory `sub` (e.g. "robots") is absent.
#define IKBENCH_REQUIRE_CORPUS(sub)                                                                        \
  do {                                                                                                     \
    const std::string ikbench_corpus_dir_ = ::ikbench::test::corpusFile(sub);                             \
    if (!std::filesystem::is_directory(ikbench_corpus_dir_))                                               \
      GTEST_SKIP() << "the external corpus directory " << ikbench_corpus_dir_                              \
                   << " is absent (set IKBENCH_CORPUS_DIR to the directory holding robots/ and skeletons/)"; \
  } while (0)

inline JointSpec revolute(const std::string& name, int parent, const Eigen::Vector3d& offset,
                          const Eigen::Vector3d& axis) {
  JointSpec j;
  j.name = name;
  j.parent = parent;
  j.type = JointType::kRevolute;
  j.parent_T_joint.p = offset;
  j.axis = axis;
  return j;
}

inline JointSpec fixed(const std::string& name, int parent, const Eigen::Vector3d& offset) {
  JointSpec j;
  j.name = name;
  j.parent = parent;
  j.type = JointType::kFixed;
  j.parent_T_joint.p = offset;
  return j;
}

// The same model with every revolute DOF weighted `weight`: the compiled
// kernel takes only unit DOF weights, so the closed-form backends offer their
// candidates unchecked and Solver::solve checks each by the model's FK (the
// generic path) on it.
inline std::shared_ptr<const Model> withRevoluteWeights(const Model& m, double weight) {
  std::vector<JointSpec> js;
  for (int i = 0; i < m.numJoints(); ++i) {
    JointSpec j = m.joint(i);
    if (j.type == JointType::kRevolute) j.weight = Eigen::VectorXd::Constant(1, weight);
    js.push_back(j);
  }
  return std::make_shared<const Model>(std::move(js), m.name());
}

// Planar chain in the x-y plane (axes +z), links along +x, with a fixed tip.
inline std::shared_ptr<const Model> planarChain(const std::vector<double>& lengths) {
  std::vector<JointSpec> joints;
  double prev = 0.0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    joints.push_back(revolute("j" + std::to_string(i), static_cast<int>(i) - 1, {prev, 0, 0}, {0, 0, 1}));
    prev = lengths[i];
  }
  joints.push_back(fixed("tip", static_cast<int>(lengths.size()) - 1, {prev, 0, 0}));
  return std::make_shared<const Model>(std::move(joints), "planar");
}

// Positions of all goal rows' "current" values (position and rotation
// vector of the body relative to a reference), used by finite differences.
struct GoalPoses {
  std::vector<Eigen::Vector3d> p;
  std::vector<Eigen::Matrix3d> R;
};

inline GoalPoses goalPoses(const Model& model, const std::vector<Goal>& goals, const Eigen::VectorXd& q) {
  Data d(model);
  forwardKinematics(model, q, d);
  GoalPoses out;
  for (const Goal& g : goals) {
    out.p.push_back(d.world_T_body[g.body].act(g.point));
    out.R.push_back(d.world_T_body[g.body].R);
  }
  return out;
}

// Central finite differences of the geometric Jacobian taken on the tangent
// space: column k = (pose(integrate(q, h e_k)) - pose(integrate(q, -h e_k))) / 2h,
// where the rotation part is log(R+ R-^T) / 2h (world-frame angular velocity).
inline Eigen::MatrixXd numericGeometricJacobian(const Model& model, const std::vector<Goal>& goals,
                                                const Eigen::VectorXd& q, double h = 1e-6) {
  const int m = totalRows(goals);
  Eigen::MatrixXd J(m, model.nv());
  for (int k = 0; k < model.nv(); ++k) {
    Eigen::VectorXd dq = Eigen::VectorXd::Zero(model.nv());
    dq[k] = h;
    const GoalPoses plus = goalPoses(model, goals, integrate(model, q, dq));
    const GoalPoses minus = goalPoses(model, goals, integrate(model, q, -dq));
    int row = 0;
    for (size_t i = 0; i < goals.size(); ++i) {
      const Goal& g = goals[i];
      if (hasPosition(g.kind)) {
        J.col(k).segment<3>(row) = g.weight * (plus.p[i] - minus.p[i]) / (2 * h);
        row += 3;
      }
      if (hasOrientation(g.kind)) {
        J.col(k).segment<3>(row) =
            g.weight * g.orientation_scale * so3::log(plus.R[i] * minus.R[i].transpose()) / (2 * h);
        row += 3;
      }
    }
  }
  return J;
}

// Central finite differences of the residual: -(r(q + h e_k) - r(q - h e_k)) / 2h,
// the exact derivative that JacobianMode::kExactResidual claims to be.
inline Eigen::MatrixXd numericResidualJacobian(const Model& model, const std::vector<Goal>& goals,
                                               const Eigen::VectorXd& q, double h = 1e-6) {
  Data d(model);
  Eigen::MatrixXd J(totalRows(goals), model.nv());
  for (int k = 0; k < model.nv(); ++k) {
    Eigen::VectorXd dq = Eigen::VectorXd::Zero(model.nv());
    dq[k] = h;
    forwardKinematics(model, integrate(model, q, dq), d);
    evaluateGoals(model, goals, d);
    const Eigen::VectorXd rp = d.residual;
    forwardKinematics(model, integrate(model, q, -dq), d);
    evaluateGoals(model, goals, d);
    J.col(k) = -(rp - d.residual) / (2 * h);
  }
  return J;
}

// Independent check of a result: FK of q against every goal, and limits.
inline void expectReached(const Problem& p, const Eigen::VectorXd& q, const SolverOptions& o,
                          const std::string& who = "") {
  Data d(*p.model);
  forwardKinematics(*p.model, q, d);
  for (const Goal& g : p.goals) {
    if (hasPosition(g.kind))
      EXPECT_LE((d.world_T_body[g.body].act(g.point) - g.target_position).norm(), o.position_tolerance)
          << who << " " << p.name;
    if (hasOrientation(g.kind))
      EXPECT_LE(so3::angle(g.target_orientation * d.world_T_body[g.body].R.transpose()), o.orientation_tolerance)
          << who << " " << p.name;
  }
  EXPECT_TRUE(withinLimits(*p.model, q)) << who << " " << p.name;
}

// The goal errors of q by the model's own forward kinematics.
inline GoalErrors goalErrorsAt(const Problem& p, const Eigen::VectorXd& q) {
  Data d(*p.model);
  forwardKinematics(*p.model, q, d);
  return evaluateGoals(*p.model, p.goals, d);
}

// One solver of `spec` over the problems in order, each from its q0: the
// summaries and the answers, for comparing two specs or two code paths.
struct Solved {
  std::vector<Summary> summaries;
  std::vector<Eigen::VectorXd> q;
};
inline Solved solveEach(const std::vector<Problem>& problems, const std::string& spec, const SolverOptions& o) {
  auto solver = Registry::global().create(spec);
  Solved out;
  for (const Problem& p : problems) {
    Eigen::VectorXd q = p.q0;
    out.summaries.push_back(solver->solve(p, q, o));
    out.q.push_back(q);
  }
  return out;
}

// Reachable goals on random chains with +-2.5 rad limits, started at the
// middle of the limits (the TRAC-IK protocol): `chains` models (seeds 100..)
// with `per_chain` problems each (goal seeds 500..).
inline std::vector<Problem> poseProblems(int joints, int chains, int per_chain, GoalKind kind = GoalKind::kPose) {
  std::vector<Problem> out;
  for (int c = 0; c < chains; ++c) {
    ChainSpec cs;
    cs.joints = joints;
    cs.limit = 2.5;
    const auto model = randomChain(cs, 100 + c);
    GoalSetSpec gs;
    gs.count = per_chain;
    gs.kind = kind;
    for (Problem& p : reachableGoals(model, gs, 500 + c, "p")) out.push_back(std::move(p));
  }
  return out;
}

// Solves every problem from its q0 and checks each result honestly: q finite,
// a converged result reached by FK and within limits (expectReached).
// `on_converged` / `on_failed` add the caller's own checks on the summary.
// Returns the number of converged solves.
inline void noCheck(const Summary&) {}
template <typename OnConverged = decltype(&noCheck), typename OnFailed = decltype(&noCheck)>
int solveAllChecked(Solver& solver, const std::vector<Problem>& problems, const SolverOptions& o,
                    const std::string& who, OnConverged&& on_converged = &noCheck, OnFailed&& on_failed = &noCheck) {
  int converged = 0;
  for (const Problem& p : problems) {
    Eigen::VectorXd q = p.q0;
    const Summary s = solver.solve(p, q, o);
    EXPECT_TRUE(q.allFinite()) << who << " " << p.name;
    if (s.converged()) {
      ++converged;
      expectReached(p, q, o, who);
      on_converged(s);
    } else {
      on_failed(s);
    }
  }
  return converged;
}

// A failed solve of a backend that always says why.
inline void expectMessage(const Summary& s) { EXPECT_FALSE(s.message.empty()) << toString(s.status); }

// Reachable pose (or position) targets on random chains with +-2.5 rad
// limits, nominal start (the throughput problems); chain seeds from
// Rng::mix(seed, c).
inline std::vector<Problem> chainProblems(int chains, int per_chain, GoalKind kind = GoalKind::kPose, int dof = 7,
                                   std::uint64_t seed = 1) {
  std::vector<Problem> out;
  for (int c = 0; c < chains; ++c) {
    ChainSpec cs;
    cs.joints = dof;
    cs.limit = 2.5;
    const std::uint64_t s = Rng::mix(seed, static_cast<std::uint64_t>(c));
    GoalSetSpec gs;
    gs.count = per_chain;
    gs.kind = kind;
    for (Problem& p : reachableGoals(randomChain(cs, s), gs, s, "bt" + std::to_string(c))) out.push_back(std::move(p));
  }
  return out;
}

// Reachable pose goals on a random chain (limits +-2.5) with 30 % sliders.
inline std::vector<Problem> prismaticProblems(int joints, AxisStyle axes, std::uint64_t seed, int count) {
  ChainSpec cs;
  cs.joints = joints;
  cs.prismatic = 0.3;
  cs.axes = axes;
  cs.limit = 2.5;
  GoalSetSpec gs;
  gs.count = count;
  gs.kind = GoalKind::kPose;
  return reachableGoals(randomChain(cs, seed), gs, seed + 1, "pr");
}

}  // namespace ikbench::test
