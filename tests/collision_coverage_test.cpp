// Coverage of the fitted collision geometry (docs/collision.md, "Coverage"):
// every moving link of an arm has a shape that holds its segments, the wrist,
// shoulder and tool frame included; links that are not neighbours are
// trimmed apart at rest rather than left unchecked; a hand pushed through an
// obstacle is found colliding; the shipped robots (and the external corpus's,
// when present) are covered, and every pair they leave out has its reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "ikbench/collision/world.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/scene.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/scenarios/urdf.h"
#include "test_util.h"

namespace ikbench {
namespace {

// A 7-DOF arm laid out like the Barrett WAM: three shoulder axes that meet
// at one point, an elbow offset 0.045 m off the axis, three wrist axes that
// meet at one point and a tool frame 0.06 m beyond them (the leaf).
std::shared_ptr<const Model> wamLikeArm() {
  auto hinge = [](const std::string& name, int parent, const Eigen::Vector3d& offset, const Eigen::Vector3d& axis) {
    JointSpec j;
    j.name = j.body_name = name;
    j.parent = parent;
    j.type = JointType::kRevolute;
    j.parent_T_joint.p = offset;
    j.axis = axis;
    j.lower = Eigen::VectorXd::Constant(1, -2.6);
    j.upper = Eigen::VectorXd::Constant(1, 2.6);
    return j;
  };
  JointSpec base;
  base.name = base.body_name = "base";
  std::vector<JointSpec> js{base};
  const Eigen::Vector3d z = Eigen::Vector3d::UnitZ(), y = Eigen::Vector3d::UnitY(), o = Eigen::Vector3d::Zero();
  js.push_back(hinge("wam1", 0, {0, 0, 0.346}, z));
  js.push_back(hinge("wam2", 1, o, y));
  js.push_back(hinge("wam3", 2, o, z));
  js.push_back(hinge("wam4", 3, {0.045, 0, 0.55}, y));
  js.push_back(hinge("wam5", 4, {-0.045, 0, 0.3}, z));
  js.push_back(hinge("wam6", 5, o, y));
  js.push_back(hinge("wam7", 6, o, z));
  JointSpec tool;
  tool.name = tool.body_name = "tool";
  tool.parent = 7;
  tool.parent_T_joint.p = {0, 0, 0.06};
  js.push_back(tool);
  return std::make_shared<const Model>(js, "wam-like");
}

// Capsules along the segments alone, none at a point (the geometry without
// the coverage rule): the shoulder, wrist and tool bodies get nothing.
std::vector<LinkShape> segmentCapsulesOnly(const Model& m, const CapsuleRule& rule) {
  std::vector<LinkShape> out;
  for (int b = 0; b < m.numJoints(); ++b)
    for (int c : m.children(b)) {
      const Eigen::Vector3d end = m.parentTJoint(c).p;
      if (end.norm() < rule.min_segment) continue;
      const double r = std::clamp(rule.fraction * end.norm(), rule.min_radius, rule.max_radius);
      out.push_back({b, Shape::capsuleBetween(m.bodyName(b), Eigen::Vector3d::Zero(), end, r), true});
    }
  return out;
}

TEST(CollisionCoverage, EveryMovingLinkOfAWamLikeArmIsCovered) {
  const auto model = wamLikeArm();
  const CollisionWorld bare(model, segmentCapsulesOnly(*model, {}), {}, {}, "bare");
  // Without the rule: the shoulder, wrist and tool bodies have no shape.
  std::set<std::string> shapeless;
  for (const LinkCoverage& c : bare.coverage())
    if (c.shapes == 0) shapeless.insert(model->bodyName(c.body));
  EXPECT_EQ(shapeless, (std::set<std::string>{"wam1", "wam2", "wam5", "wam6", "tool"}));
  EXPECT_NE(bare.coverageWarning(), "");

  const CollisionWorld w(model, fitLinkCapsules(*model, {}), {}, {}, "covered");
  for (const LinkCoverage& c : w.coverage()) {
    EXPECT_TRUE(c.covered) << model->bodyName(c.body) << ": " << w.describeLink(c.body);
    EXPECT_TRUE(c.shapes > 0 || c.covered_by >= 0) << model->bodyName(c.body);
  }
  EXPECT_TRUE(w.uncoveredLinks().empty());
  EXPECT_TRUE(w.restOverlaps().empty()) << w.coverageWarning();
  EXPECT_EQ(w.coverageWarning(), "");
  // One sphere per run of coincident origins (shoulder, wrist) and one at the
  // tool frame: few shapes for the inner loop.
  EXPECT_LE(w.links().size(), 8u);
  // Every pair left out has its reason; here only neighbours are.
  ASSERT_EQ(w.disabledReasons().size(), w.disabledPairs().size());
  for (size_t k = 0; k < w.disabledPairs().size(); ++k)
    EXPECT_EQ(w.disabledReasons()[k], kDisabledAdjacent)
        << w.disabledPairs()[k].first << "~" << w.disabledPairs()[k].second;
  // The short capsule from the wrist to the tool frame is the hand the model
  // does not describe: at least the rule's largest radius.
  bool hand = false;
  for (const LinkShape& l : w.links())
    if (model->bodyName(l.body) == "wam7" && l.shape.kind == ShapeKind::kCapsule)
      hand = l.shape.radius >= CapsuleRule{}.max_radius - 1e-12;
  EXPECT_TRUE(hand) << w.describeLink(model->bodyIndex("wam7"));
  EXPECT_NE(w.describeLink(model->bodyIndex("tool")).find("inside wam7's shape"), std::string::npos)
      << w.describeLink(model->bodyIndex("tool"));
}

TEST(CollisionCoverage, NeighboursOverlappingAtRestAreTrimmedNotDisabled) {
  // The forearm's capsule (wam4) ends at the wrist, where the hand's capsule
  // (wam7, three joints on) starts: untrimmed, the pair collides at the
  // neutral configuration. After fitting, with fat links, no pair is left
  // out for that and every moving link is still covered.
  const auto model = wamLikeArm();
  CapsuleRule rule;
  rule.max_radius = 0.07;  // fat links: more contact at the joints
  rule.fraction = 0.3;
  const CollisionWorld w(model, fitLinkCapsules(*model, rule), {}, {}, "fat");
  EXPECT_TRUE(w.restOverlaps().empty()) << w.coverageWarning();
  EXPECT_TRUE(w.uncoveredLinks().empty()) << w.coverageWarning();
  // The same arm's segment capsules untrimmed do overlap at rest: the world
  // leaves the pair out and says so.
  const CollisionWorld unfixed(model, segmentCapsulesOnly(*model, rule), {}, {}, "unfixed");
  EXPECT_FALSE(unfixed.restOverlaps().empty());
  EXPECT_NE(unfixed.coverageWarning().find("collide at rest"), std::string::npos) << unfixed.coverageWarning();
}

TEST(CollisionCoverage, AHandThroughAnObstacleIsNowFoundColliding) {
  const auto model = wamLikeArm();
  Eigen::VectorXd q = model->neutralConfiguration();
  q << 0.3, 0.8, 0.0, 1.2, 0.0, 0.6, 0.0;
  Data data(*model);
  forwardKinematics(*model, q, data);
  const Pose3d& tool = data.world_T_body[static_cast<size_t>(model->bodyIndex("tool"))];
  // A 1 cm ball 5 cm beside the tool frame, across the tool's z axis (the
  // axis of the last segment): 4 cm from that axis, outside the 2.5 cm capsule
  // the radius rule gives the short wrist-to-tool segment, inside the hand of
  // the rule's 6 cm that this segment now is.
  Pose3d at;
  at.p = tool.act(Eigen::Vector3d(0.05, 0.0, 0.0));
  const Shape ball = Shape::sphere("ball", 0.01, at);
  const CollisionWorld before(model, segmentCapsulesOnly(*model, {}), {ball}, {}, "before");
  const CollisionWorld after(model, fitLinkCapsules(*model, {}), {ball}, {}, "after");
  const CollisionReport rb = before.check(data), ra = after.check(data);
  EXPECT_TRUE(rb.collision_free) << rb.pair << " " << rb.min_clearance;
  EXPECT_FALSE(ra.collision_free);
  EXPECT_EQ(ra.pair, "wam7~ball");
  EXPECT_TRUE(after.collides(data));
  // With the arm folded away from it the ball is clear again: the pair is
  // checked, not just always reported.
  forwardKinematics(*model, model->neutralConfiguration(), data);
  EXPECT_TRUE(after.check(data).collision_free);
}

// Every moving link of a robot description covered (a link whose segments
// only the description's own shapes hold may not be: those are not changed,
// and the flag names it), every pair left out with its reason; the pairs left
// out for colliding at rest are returned.
std::vector<std::string> checkRobot(const std::string& path) {
  const UrdfModel um = loadUrdf(path);
  const auto w = buildCollisionWorld(Scene{}, um.model, um.collision);
  std::string links;
  for (int b = 0; b < w->model().numJoints(); ++b)
    links += "\n  " + w->model().bodyName(b) + ": " + w->describeLink(b);
  for (const LinkCoverage& c : w->coverage()) {
    bool described = false;
    for (const LinkShape& l : w->links()) described |= l.body == c.body && !l.fitted;
    EXPECT_TRUE(c.covered || described) << path << ": " << w->coverageWarning() << links;
    EXPECT_TRUE(c.shapes > 0 || c.covered_by >= 0) << path << ": " << w->model().bodyName(c.body);
  }
  EXPECT_EQ(w->disabledReasons().size(), w->disabledPairs().size()) << path;
  std::vector<std::string> overlaps;
  for (size_t k = 0; k < w->disabledPairs().size(); ++k) {
    const std::string& r = w->disabledReasons()[k];
    EXPECT_TRUE(r == kDisabledAdjacent || r == kDisabledScene || r == kDisabledOverlap || r == kDisabledAlways)
        << path << ": '" << r << "'";
    if (r == kDisabledOverlap) overlaps.push_back(w->disabledPairs()[k].first + "~" + w->disabledPairs()[k].second);
  }
  return overlaps;
}

TEST(CollisionCoverage, ShippedRobotsAreCoveredAndListEachPairLeftOutForOverlapAtRest) {
  // Capsules that meet each other across a short joint offset (the iiwa's
  // and the IRB 2400's wrists, the Panda's elbow and wrist) are split, and
  // only their pieces that overlap at rest are left out (collision_split_test).
  // Two pairs remain, both the Panda's: at its rest configuration (zeros, the
  // elbow at the middle of its range) the wrist folds the hand back along
  // link 4 (joint 6 at 0, by its lower limit), every piece of the one beside
  // a piece of the other; and link 7 and the hand are joined by fixed joints
  // only, so they overlap in every configuration as at rest.
  const std::map<std::string, std::vector<std::string>> expected{
      {"panda.urdf", {"panda_link4~panda_hand", "panda_link7~panda_hand"}}};
  int robots = 0;
  for (const auto& e : std::filesystem::directory_iterator(dataDirectory() + "/robots")) {
    if (e.path().extension() != ".urdf") continue;
    ++robots;
    const std::vector<std::string> overlaps = checkRobot(e.path().string());
    const auto it = expected.find(e.path().filename().string());
    EXPECT_EQ(overlaps, it == expected.end() ? std::vector<std::string>{} : it->second) << e.path();
  }
  EXPECT_GE(robots, 5);
}

TEST(CollisionCoverage, CorpusRobotsAreCovered) {
  IKBENCH_REQUIRE_CORPUS("robots");
  int robots = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::corpusFile("robots"))) {
    if (e.path().extension() != ".urdf") continue;
    ++robots;
    const std::vector<std::string> overlaps = checkRobot(e.path().string());
    if (!overlaps.empty())
      std::cout << e.path().filename().string() << ": " << overlaps.size()
                << " pair(s) left out for colliding at rest, e.g. " << overlaps.front() << "\n";
  }
  if (!std::filesystem::exists(test::corpusFile("robots/wam.urdf")))
    std::cout << "no WAM description in the corpus: the WAM-like arm above stands in for it\n";
  EXPECT_GE(robots, 1);
}

}  // namespace
}  // namespace ikbench
