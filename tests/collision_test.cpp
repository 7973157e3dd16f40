// Scenes and collision queries: the scene file reader's errors, the inner-loop
// distances against FCL's, and the solvers' collision modes on the UR5 in the
// shipped workcell (every collision-free claim re-checked exactly).
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <limits>

#include "ikbench/collision/depth.h"
#include "ikbench/collision/world.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/mesh_file.h"
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

// ---- penetration depths ------------------------------------------------------------

Pose3d at(double x, double y, double z, const Eigen::Matrix3d& R = Eigen::Matrix3d::Identity()) {
  Pose3d p;
  p.R = R;
  p.p = Eigen::Vector3d(x, y, z);
  return p;
}

double depthOf(const Shape& a, const Shape& b) { return penetrationDepth(a, a.pose, b, b.pose).value(); }

TEST(PenetrationDepth, ClosedFormCases) {
  const Eigen::Matrix3d along_y = Eigen::AngleAxisd(M_PI / 2, Eigen::Vector3d::UnitX()).toRotationMatrix();
  const Eigen::Matrix3d along_x = Eigen::AngleAxisd(M_PI / 2, Eigen::Vector3d::UnitY()).toRotationMatrix();
  // A 4 cm wall (x in [-0.02, 0.02], 2 m wide and high) and a 4.5 cm link
  // lying along y, 3.5 cm into it: separated by 3.5 cm along x, not by
  // sliding it past the wall's edge a metre away.
  const Shape wall = Shape::box("wall", Eigen::Vector3d(0.04, 2.0, 2.0), at(0, 0, 0));
  EXPECT_NEAR(depthOf(Shape::capsule("link", 0.045, 0.6, at(0.03, 0.5, 0, along_y)), wall), 0.035, 1e-9);
  // Its axis on the wall's face: the radius.
  EXPECT_NEAR(depthOf(Shape::capsule("link", 0.045, 0.6, at(0.02, 0.5, 0, along_y)), wall), 0.045, 1e-12);
  // A capsule through a slab: out along its own axis (0.25 + 0.02 + 0.045),
  // not sideways past the slab's edge (1.045).
  const Shape slab = Shape::box("slab", Eigen::Vector3d(2.0, 2.0, 0.04), at(0, 0, 0));
  EXPECT_NEAR(depthOf(Shape::capsule("c", 0.045, 0.5, at(0.3, -0.2, 0)), slab), 0.315, 1e-12);
  // Tilted 45 degrees in the x-z plane through the slab's centre: the
  // segment's half reaches 0.25 sin 45 below the mid-plane.
  const Eigen::Matrix3d tilt = Eigen::AngleAxisd(M_PI / 4, Eigen::Vector3d::UnitY()).toRotationMatrix();
  EXPECT_NEAR(depthOf(Shape::capsule("c", 0.045, 0.5, at(0, 0, 0, tilt)), slab), 0.25 * std::sqrt(0.5) + 0.065, 1e-12);
  // Two crossing capsules 3 cm apart: r_a + r_b - 0.03 (the sum of the radii
  // where the axes meet).
  const Shape cx = Shape::capsule("x", 0.05, 1.0, at(0, 0, 0, along_x));
  EXPECT_NEAR(depthOf(cx, Shape::capsule("y", 0.04, 1.0, at(0, 0, 0.03, along_y))), 0.06, 1e-12);
  EXPECT_NEAR(depthOf(cx, Shape::capsule("y", 0.04, 1.0, at(0.2, 0, 0, along_y))), 0.09, 1e-12);
  EXPECT_EQ(depthOf(cx, Shape::capsule("y", 0.04, 1.0, at(0, 0, 0.2, along_y))), 0.0);  // apart
  // A sphere inside a box: out through the nearest face, 0.2 + r.
  const Shape cube = Shape::box("cube", Eigen::Vector3d(1, 1, 1), at(0, 0, 0));
  EXPECT_NEAR(depthOf(Shape::sphere("s", 0.1, at(0.3, 0.05, -0.1)), cube), 0.3, 1e-12);
  // ... and beside it, overlapping by 0.04.
  EXPECT_NEAR(depthOf(Shape::sphere("s", 0.1, at(0.56, 0, 0)), cube), 0.04, 1e-12);
  // Two boxes overlapping by 0.1 along x; one turned 45 degrees about z: its
  // corner reaches 0.5 sqrt(2) from its centre.
  EXPECT_NEAR(depthOf(cube, Shape::box("b", Eigen::Vector3d(1, 1, 1), at(0.9, 0.3, 0))), 0.1, 1e-12);
  const Eigen::Matrix3d yaw = Eigen::AngleAxisd(M_PI / 4, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  EXPECT_NEAR(depthOf(cube, Shape::box("b", Eigen::Vector3d(1, 1, 1), at(1.2, 0, 0, yaw))),
              0.5 + 0.5 * std::sqrt(2.0) - 1.2, 1e-12);
  // A cylinder (radius 0.1, length 0.4, along z) as its circumscribed prism:
  // along a facet normal (x) and along its axis, exact.
  const Shape cyl = Shape::cylinder("c", 0.1, 0.4, at(0, 0, 0));
  EXPECT_NEAR(depthOf(Shape::sphere("s", 0.05, at(0.12, 0, 0)), cyl), 0.03, 1e-12);          // beside, 3 cm in
  EXPECT_NEAR(depthOf(Shape::sphere("s", 0.05, at(0.06, 0, 0.1)), cyl), 0.09, 1e-12);        // inside: out sideways
  EXPECT_NEAR(depthOf(Shape::sphere("s", 0.05, at(0, 0, 0.18)), cyl), 0.07, 1e-12);          // inside: out the cap
  EXPECT_NEAR(depthOf(Shape::box("b", Eigen::Vector3d(0.2, 0.2, 0.2), at(0, 0, 0.29)), cyl), 0.01, 1e-12);
  // No closed form for meshes.
  Shape mesh;
  mesh.kind = ShapeKind::kMesh;
  EXPECT_FALSE(penetrationDepth(cube, cube.pose, mesh, Pose3d{}).has_value());
}

// A cylinder's depth, within the prism's bound above the exact one, on random
// placements where the exact depth has a closed form: a sphere whose centre
// is inside the cylinder leaves through the nearer of the side and a cap.
TEST(PenetrationDepth, ACylindersDepthIsWithinItsPrismsBound) {
  Rng rng(77);
  int compared = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const double r = rng.uniform(0.05, 0.3), half = rng.uniform(0.05, 0.5), rs = rng.uniform(0.01, 0.1);
    Pose3d pose;
    pose.p = Eigen::Vector3d(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1));
    pose.R = Eigen::Quaterniond(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1))
                 .normalized()
                 .toRotationMatrix();
    const double rho = r * std::sqrt(rng.uniform(0, 1)), phi = rng.uniform(0, 2 * M_PI), z = rng.uniform(-half, half);
    Pose3d at_s;
    at_s.p = pose.act(Eigen::Vector3d(rho * std::cos(phi), rho * std::sin(phi), z));
    const double exact = rs + std::min(r - rho, half - std::abs(z));
    const double got = depthOf(Shape::sphere("s", rs, at_s), Shape::cylinder("c", r, 2 * half, pose));
    EXPECT_GE(got, exact - 1e-12) << trial;
    EXPECT_LE(got, exact + r * (1 / std::cos(M_PI / 64) - 1) + 1e-12) << trial;
    ++compared;
  }
  EXPECT_EQ(compared, 500);
}

// An independent depth for a box against a box, a sphere or a capsule whose
// core (box, centre or segment) overlaps it: the Minkowski difference's
// vertices (a_i - b_j), their convex hull by qhull (scenarios' convexHull,
// outward triangles), the origin's distance to the nearest facet plane, plus
// the radius.
double hullDepth(const std::vector<Eigen::Vector3d>& a, const std::vector<Eigen::Vector3d>& b, double radius) {
  TriangleMesh points;
  for (const auto& x : a)
    for (const auto& y : b) points.vertices.push_back(x - y);
  const TriangleMesh hull = convexHull(points, "the Minkowski difference");
  double best = std::numeric_limits<double>::infinity();
  for (const Eigen::Vector3i& t : hull.triangles) {
    const Eigen::Vector3d& p0 = hull.vertices[static_cast<size_t>(t[0])];
    const Eigen::Vector3d n = (hull.vertices[static_cast<size_t>(t[1])] - p0)
                                  .cross(hull.vertices[static_cast<size_t>(t[2])] - p0);
    if (n.norm() < 1e-12) continue;
    // The facet's outward plane n.x = n.p0: the origin lies n.p0 below it.
    best = std::min(best, n.normalized().dot(p0));
  }
  return best < 0.0 ? -1.0 : best + radius;  // -1: the origin is outside the hull
}

std::vector<Eigen::Vector3d> boxCorners(const Shape& box) {
  std::vector<Eigen::Vector3d> out;
  for (int c = 0; c < 8; ++c)
    out.push_back(box.pose.act(0.5 * Eigen::Vector3d((c & 1 ? 1 : -1) * box.size.x(), (c & 2 ? 1 : -1) * box.size.y(),
                                                     (c & 4 ? 1 : -1) * box.size.z())));
  return out;
}

TEST(PenetrationDepth, AgreesWithTheConvexHullOfTheMinkowskiDifference) {
  Rng rng(2024);
  auto randomPose = [&](double spread) {
    Pose3d p;
    p.p = Eigen::Vector3d(rng.uniform(-spread, spread), rng.uniform(-spread, spread), rng.uniform(-spread, spread));
    p.R = Eigen::Quaterniond(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1))
              .normalized()
              .toRotationMatrix();
    return p;
  };
  int compared[3] = {0, 0, 0};
  for (int trial = 0; trial < 600; ++trial) {
    const Shape box = Shape::box("b", Eigen::Vector3d(rng.uniform(0.05, 0.5), rng.uniform(0.05, 0.5), rng.uniform(0.05, 0.5)),
                                 randomPose(0.0));
    const int kind = trial % 3;
    const Shape other = kind == 0   ? Shape::box("o", Eigen::Vector3d(rng.uniform(0.05, 0.5), rng.uniform(0.05, 0.5),
                                                                       rng.uniform(0.05, 0.5)), randomPose(0.3))
                        : kind == 1 ? Shape::sphere("o", rng.uniform(0.01, 0.1), randomPose(0.2))
                                    : Shape::capsule("o", rng.uniform(0.01, 0.1), rng.uniform(0.05, 0.6), randomPose(0.3));
    std::vector<Eigen::Vector3d> core;
    double radius = 0.0;
    if (kind == 0) {
      core = boxCorners(other);
    } else {
      const Eigen::Vector3d half = 0.5 * other.length * other.pose.R.col(2);
      core = {other.pose.p - half, other.pose.p + half};
      radius = other.radius;
    }
    const double exact = depthOf(box, other);
    ASSERT_TRUE(std::isfinite(exact));
    EXPECT_NEAR(exact, depthOf(other, box), 1e-12);  // symmetric
    // Only where the cores overlap (the origin inside the hull): elsewhere the
    // depth is the swept sphere's overlap, the inner loop's closest points.
    bool inside = true;
    std::vector<Eigen::Vector3d> bc = boxCorners(box);
    for (int axis = 0; axis < 3 && inside; ++axis) {
      double lo = 1e300, hi = -1e300;
      for (const auto& x : bc)
        for (const auto& y : core) {
          lo = std::min(lo, (x - y)[axis]);
          hi = std::max(hi, (x - y)[axis]);
        }
      inside = lo < 0.0 && hi > 0.0;
    }
    if (!inside) continue;
    const double hull = hullDepth(bc, core, radius);
    if (hull - radius < 1e-6) continue;  // the origin outside the hull, or on its boundary
    EXPECT_NEAR(exact, hull, 1e-9) << "kind " << kind << " trial " << trial;
    ++compared[kind];
  }
  EXPECT_GT(compared[0], 40);
  EXPECT_GT(compared[1], 20);
  EXPECT_GT(compared[2], 40);
}

// The world's exact check reports minus the exact depth of its deepest pair.
TEST(PenetrationDepth, TheWorldsClearanceIsTheDeepestPairsExactDepth) {
  ChainSpec spec;
  spec.joints = 2;
  const auto model = randomChain(spec, 3);
  Data data(*model);
  forwardKinematics(*model, model->neutralConfiguration(), data);
  const int body = model->numJoints() - 1;
  const Pose3d link_world = data.world_T_body[static_cast<size_t>(body)];
  // A capsule on the last body and two obstacles through it, 1 cm and 3 cm deep.
  const Shape link = Shape::capsuleBetween("l", Eigen::Vector3d(-0.3, 0, 0), Eigen::Vector3d(0.3, 0, 0), 0.05);
  const Eigen::Vector3d up = link_world.R.col(2), centre = link_world.p;
  Pose3d shallow, deep;
  shallow.p = centre + (0.05 + 0.1 - 0.01) * up;
  deep.p = centre - (0.05 + 0.1 - 0.03) * up;
  const CollisionWorld world(model, {{body, link, false}}, {Shape::sphere("shallow", 0.1, shallow),
                                                          Shape::sphere("deep", 0.1, deep)}, {}, "t");
  const CollisionReport r = world.check(data);
  EXPECT_FALSE(r.collision_free);
  EXPECT_NEAR(r.min_clearance, -0.03, 1e-9);
  EXPECT_NE(r.pair.find("deep"), std::string::npos) << r.pair;
  // The link lying 4 cm into a 4 cm wall, 2 m wide: 4 cm deep, not the metre
  // it would slide to pass the wall's edge (a contact point's depth).
  Pose3d wall_pose = link_world;
  wall_pose.p = centre + 0.03 * up;
  const CollisionWorld walled(model, {{body, link, false}},
                              {Shape::box("wall", Eigen::Vector3d(2.0, 2.0, 0.04), wall_pose)}, {}, "t");
  EXPECT_NEAR(walled.check(data).min_clearance, -0.04, 1e-9);
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
#if defined(__SANITIZE_ADDRESS__)
  const int count = 20;  // the first 20 of the same targets: the sanitizers make the collision checks slow
#else
  const int count = 60;
#endif
  const Family fam = nearFamily(count);
  // Without the scene's say, KDL's answers collide on some of these targets
  // (the test can fail: the reject mode must make a difference).
  const Counts off = solveAll(fam, "kdl-lma:restarts=20");
  EXPECT_GT(off.colliding_converged, 0);
  for (const char* spec : {"kdl-lma:restarts=20:collision=reject", "auto:time_budget_us=0",
                           "auto:collision=avoid:time_budget_us=0"}) {
    const Counts c = solveAll(fam, spec);
    EXPECT_EQ(c.colliding_converged, 0) << spec;
    EXPECT_GE(c.success, count * 9 / 10) << spec;  // 90 %
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
