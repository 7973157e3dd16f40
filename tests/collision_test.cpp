// Scenes and collision queries: the scene file reader's errors, the inner-loop
// distances against FCL's, and the solvers' collision modes on the UR5 in the
// shipped workcell (every collision-free claim re-checked exactly).
#include <gtest/gtest.h>

#include <cmath>

#include "ikbench/collision/world.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/scene.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/scenarios/urdf.h"
#include "ikbench/solvers/registry.h"

namespace ikbench {
namespace {

std::string sceneError(const std::string& text) {
  try {
    parseScene(text, "s.json");
  } catch (const SuiteError& e) {
    return e.what();
  }
  return "";
}

TEST(SceneFile, ErrorsNameFileLineAndField) {
  EXPECT_EQ(sceneError("{\n \"obstacles\": [\n  {\"name\": \"a\", \"type\": \"box\", \"size\": [1, 0, 1]}]}"),
            "s.json:3: obstacles[0].size[1]: expected a number in [1e-06, 1000], got number 0");
  EXPECT_NE(sceneError("{\"obstacles\": [{\"name\": \"a\", \"type\": \"cone\"}]}").find("obstacles[0].type: unknown obstacle type 'cone'"),
            std::string::npos);
  EXPECT_NE(sceneError("{\"obstacles\": [{\"name\": \"a\", \"type\": \"sphere\", \"radius\": 1},\n"
                       "{\"name\": \"a\", \"type\": \"sphere\", \"radius\": 1}]}")
                .find("s.json:2: obstacles[1].name: a second obstacle named 'a'"),
            std::string::npos);
  EXPECT_NE(sceneError("{\"random_boxes\": {\"count\": 20000, \"min\": [0,0,0], \"max\": [1,1,1], \"min_size\": "
                       "[1,1,1], \"max_size\": [1,1,1]}}")
                .find("random_boxes.count: expected an integer in [0, 10000]"),
            std::string::npos);
  EXPECT_NE(sceneError("{\"units\": \"feet\"}").find("units: expected 'm' or 'reach'"), std::string::npos);
  EXPECT_NE(sceneError("{\"obstacles\": [{\"name\": \"m\", \"type\": \"mesh\", \"file\": \"/nonexistent.stl\"}]}")
                .find("obstacles[0].file"),
            std::string::npos);
  EXPECT_NE(sceneError("{\"obstacles\": [}").find("invalid JSON"), std::string::npos);
}

// One link (a capsule on a 2-joint chain's second body) and one obstacle per
// world: the world's exact clearance is FCL's distance of that pair.
TEST(InnerLoopDistance, AgreesWithFclAndNeverExceedsIt) {
  ChainSpec spec;
  spec.joints = 2;
  const auto model = randomChain(spec, 3);
  Rng rng(11);
  Data data(*model);
  int boxes = 0, capsules = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const Eigen::Vector3d a(rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2));
    const Eigen::Vector3d b(rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2));
    std::vector<LinkShape> link = {{model->numJoints() - 1, Shape::capsuleBetween("l", a, b, rng.uniform(0.01, 0.05)), true}};
    Pose3d pose;
    pose.p = Eigen::Vector3d(rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5));
    pose.R = Eigen::Quaterniond(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1))
                 .normalized()
                 .toRotationMatrix();
    const int kind = trial % 4;
    Shape o = kind == 0   ? Shape::box("o", Eigen::Vector3d(rng.uniform(0.02, 0.4), rng.uniform(0.02, 0.4), rng.uniform(0.02, 0.4)), pose)
              : kind == 1 ? Shape::sphere("o", rng.uniform(0.02, 0.2), pose)
              : kind == 2 ? Shape::capsule("o", rng.uniform(0.02, 0.1), rng.uniform(0.0, 0.4), pose)
                          : Shape::cylinder("o", rng.uniform(0.02, 0.1), rng.uniform(0.05, 0.4), pose);
    const CollisionWorld world(model, link, {o}, {}, "t");
    ASSERT_EQ(world.pairs().size(), 1u);
    forwardKinematics(*model, randomConfiguration(*model, rng), data);
    const CollisionReport exact = world.check(data);
    const double fast = world.approximateDistance(data, 0).distance;
    // Enclosing approximations: never farther apart than the exact shapes
    // (penetration depths are measured differently: overlapping is all that
    // must agree).
    EXPECT_LE(fast, (exact.collision_free ? exact.min_clearance : 0.0) + 1e-6) << "kind " << kind;
    if (exact.collision_free) {
      EXPECT_FALSE(world.collides(data));
    } else {
      EXPECT_TRUE(world.collides(data));
    }
    // Exact shapes (box, sphere, capsule) agree with FCL where they are apart.
    if (kind != 3 && exact.min_clearance > 1e-4) {
      EXPECT_NEAR(fast, exact.min_clearance, 1e-5) << "kind " << kind;
      (kind == 0 ? boxes : capsules)++;
    }
  }
  EXPECT_GT(boxes, 30);
  EXPECT_GT(capsules, 60);
}

std::string ur5Path() { return dataDirectory() + "/robots/ur5.urdf"; }

// UR5 in the workcell, targets within 2 cm of a collision.
Family nearFamily(int count) {
  const std::string suite = R"({"name": "t", "seed": 5, "families": [{"name": "ur5-near", "type": "urdf",
    "file": "robots/ur5.urdf", "base": "base_link", "tip": "tool0", "count": )" +
                            std::to_string(count) + R"(, "scene": "scenes/workcell.json",
    "goals": {"set": "reachable", "kind": "pose", "start": "nominal", "near_obstacle": 0.02}}]})";
  return parseSuite(suite, dataDirectory() + "/suites/t.json").families.front();
}

TEST(SceneFamily, TargetsComeFromCollisionFreeConfigurationsNearObstacles) {
  const Family fam = nearFamily(20);
  ASSERT_EQ(fam.problems.size(), 20u);
  const CollisionWorld& w = *fam.problems.front().collision;
  EXPECT_EQ(w.sceneName(), "workcell");
  EXPECT_EQ(w.obstacles().size(), 8u);
  // The base (static) has no obstacle pair; adjacent links no self pair.
  for (const CollisionPair& p : w.pairs()) {
    EXPECT_NE(w.links()[static_cast<size_t>(p.a)].body, 0);
    if (!p.obstacle)
      EXPECT_NE(w.model().parent(w.links()[static_cast<size_t>(p.b)].body), w.links()[static_cast<size_t>(p.a)].body);
  }
}

struct Counts {
  int converged = 0, colliding_converged = 0, success = 0;
};

Counts solveAll(const Family& fam, const std::string& spec) {
  auto solver = Registry::global().create(Registry::global().parse(spec));
  SolverOptions o;
  o.max_iterations = 500;
  o.time_budget_us = 0;
  Counts c;
  Data data(*fam.problems.front().model);
  for (size_t i = 0; i < fam.problems.size(); ++i) {
    const Problem& p = fam.problems[i];
    o.seed = i;
    Eigen::VectorXd q;
    const Summary s = solver->solve(p, o, &q);
    EXPECT_GE(s.collision_free, 0) << spec;
    // The summary's claim is the exact check of q.
    forwardKinematics(*p.model, q, data);
    EXPECT_EQ(s.collision_free, p.collision->check(data).collision_free ? 1 : 0) << spec;
    if (s.converged()) {
      ++c.converged;
      if (s.collision_free == 0) ++c.colliding_converged;
      if (s.collision_free == 1 && s.within_limits) ++c.success;
    }
  }
  return c;
}

TEST(CollisionModes, RejectAndAvoidReturnCollisionFreeAnswers) {
  const Family fam = nearFamily(60);
  // Without the scene's say, KDL's answers collide on some of these targets
  // (the test can fail: the reject mode must make a difference).
  const Counts off = solveAll(fam, "kdl-lma:restarts=20");
  EXPECT_GT(off.colliding_converged, 0);
  for (const char* spec : {"kdl-lma:restarts=20:collision=reject", "auto:time_budget_us=0",
                           "auto:collision=avoid:time_budget_us=0"}) {
    const Counts c = solveAll(fam, spec);
    EXPECT_EQ(c.colliding_converged, 0) << spec;
    EXPECT_GE(c.success, 54) << spec;  // 90 %
  }
}

// The velocity damper keeps the iterates themselves out of the obstacles:
// along the traces of dls from the same starts, fewer than half as many
// iterates collide with collision=avoid as without.
TEST(CollisionModes, AvoidKeepsTheIteratesClear) {
  const Family fam = nearFamily(30);
  auto colliding = [&](const std::string& spec) {
    auto solver = Registry::global().create(Registry::global().parse(spec));
    SolverOptions o;
    o.max_iterations = 100;
    o.time_budget_us = 0;
    o.record_trace = true;
    Data data(*fam.problems.front().model);
    long hits = 0, iterates = 0;
    for (const Problem& p : fam.problems) {
      const Summary s = solver->solve(p, o);
      for (const IterationRecord& r : s.trace) {
        forwardKinematics(*p.model, r.q, data);
        hits += !p.collision->check(data).collision_free;
        ++iterates;
      }
    }
    return std::pair<long, long>(hits, iterates);
  };
  const auto off = colliding("dls"), avoid = colliding("dls:collision=avoid");
  EXPECT_GT(off.first, 20);
  EXPECT_LT(avoid.first * 2, off.first) << avoid.first << " of " << avoid.second << " iterates collide with avoid, "
                                        << off.first << " of " << off.second << " without";
}

TEST(CollisionModes, AvoidIsForTheJacobianFamily) {
  EXPECT_THROW(Registry::global().create(Registry::global().parse("kdl-lma:collision=avoid")), SpecError);
  EXPECT_NO_THROW(Registry::global().create(Registry::global().parse("dls:collision=avoid")));
}

// A scene-free problem solves exactly as before whatever the mode.
TEST(CollisionModes, NoSceneNoChange) {
  GoalSetSpec g;
  g.count = 20;
  g.kind = GoalKind::kPose;
  const auto problems = makeGoals(loadUrdf(ur5Path()).model, g, 9, "");
  auto a = Registry::global().create(Registry::global().parse("auto"));
  auto b = Registry::global().create(Registry::global().parse("auto:collision=off"));
  SolverOptions o;
  for (size_t i = 0; i < problems.size(); ++i) {
    o.seed = i;
    Eigen::VectorXd qa, qb;
    const Summary sa = a->solve(problems[i], o, &qa), sb = b->solve(problems[i], o, &qb);
    EXPECT_EQ(sa.iterations, sb.iterations);
    EXPECT_EQ(qa, qb);
    EXPECT_EQ(sa.collision_free, -1);
  }
}

}  // namespace
}  // namespace ikbench
