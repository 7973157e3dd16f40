// Split capsules rather than link pairs left out (docs/collision.md,
// "Coverage"): a fitted capsule that overlaps a non-neighbouring link's
// shape at the rest configuration is cut into pieces along its axis, and
// only the piece pairs that overlap at rest are left out; every other piece
// pair of the two links is checked. On every shipped robot no link pair but
// two of the Panda's hand is left out whole for colliding at rest (the
// shared corpus's, when present, are listed with their reason); a configuration that folds the iiwa's hand onto link_5 and one that
// swings the humanoid's upper arm into its chest are found colliding by the
// exact check, where the same geometry with the link pair left out whole
// calls them collision-free; a humanoid hand through its own thigh is found
// colliding.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ikbench/collision/world.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/scenarios/bvh.h"
#include "ikbench/scenarios/scene.h"
#include "ikbench/scenarios/skeleton.h"
#include "ikbench/scenarios/suite.h"
#include "ikbench/scenarios/urdf.h"
#include "test_util.h"

namespace ikbench {
namespace {

// The shipped humanoid as the clutter-near suite poses it: the BVH skeleton
// with the family's anatomical limits, in its self-collision scene.
std::shared_ptr<const CollisionWorld> shippedHumanoid() {
  const std::string dir = dataDirectory();
  std::ifstream in(dir + "/suites/clutter-near.json");
  const nlohmann::json suite = nlohmann::json::parse(in);
  for (const auto& f : suite["families"]) {
    if (f["name"] != "humanoid-hands-near-torso") continue;
    std::vector<JointLimitSpec> limits;
    for (auto it = f["limits"].begin(); it != f["limits"].end(); ++it) {
      JointLimitSpec l;
      l.joint = it.key();
      const auto& j = it.value();
      if (j.contains("cone")) l.cone = j["cone"];
      if (j.contains("translation")) l.translation = j["translation"];
      if (j.contains("twist")) l.twist_lo = j["twist"][0], l.twist_hi = j["twist"][1];
      if (j.contains("hinge")) {
        l.hinge = true;
        l.axis = Eigen::Vector3d(j["hinge"][0], j["hinge"][1], j["hinge"][2]);
        l.lo = j["range"][0];
        l.hi = j["range"][1];
      }
      limits.push_back(l);
    }
    BvhOptions bo;
    bo.scale = f.value("scale", 0.0);
    const BvhClip clip = loadBvh(dir + "/" + f["file"].get<std::string>(), bo);
    const auto model = constrainSkeleton(*clip.model, limits);
    return buildCollisionWorld(loadScene(dir + "/" + f["scene"].get<std::string>()), model);
  }
  ADD_FAILURE() << "clutter-near.json has no family humanoid-hands-near-torso";
  return nullptr;
}

// The overlap at rest of two link shapes, by their inner-loop forms (exact
// for capsules and spheres): negative when they overlap.
double restDistance(const CollisionWorld& w, int a, int b) {
  const Model& m = w.model();
  Data data(m);
  forwardKinematics(m, restConfiguration(m), data);
  const auto world = [&](int i) {
    const LinkShape& l = w.links()[static_cast<size_t>(i)];
    return transformed(approximate(l.shape), data.world_T_body[static_cast<size_t>(l.body)]);
  };
  return closestPoints(world(a).capsule, world(b)).distance;
}

// No link pair left out whole for colliding at rest; each shape pair left
// out on its own overlaps at rest, and its two links have other shape pairs
// that are checked; every moving link still covered.
void expectSplitNotDisabled(const CollisionWorld& w, const std::string& what,
                            const std::vector<std::pair<std::string, std::string>>& whole = {}) {
  EXPECT_EQ(w.restOverlaps(), whole) << what << ": " << w.coverageWarning();
  EXPECT_TRUE(w.uncoveredLinks().empty()) << what << ": " << w.coverageWarning();
  for (const ExcludedShapePair& e : w.excludedPairs()) {
    EXPECT_EQ(e.reason, kDisabledOverlap) << what;
    const std::string name = w.describeExcluded(e);
    const LinkShape &la = w.links()[static_cast<size_t>(e.a)], &lb = w.links()[static_cast<size_t>(e.b)];
    if (la.shape.kind != ShapeKind::kMesh && lb.shape.kind != ShapeKind::kMesh)
      EXPECT_LE(restDistance(w, e.a, e.b), 0.0) << what << ": " << name;
    // A joint on the kinematic path between the two links.
    EXPECT_GE(e.joint, 0) << what << ": " << name;
    int checked = 0;
    for (const CollisionPair& p : w.pairs())
      if (!p.obstacle) {
        const int ba = w.links()[static_cast<size_t>(p.a)].body, bb = w.links()[static_cast<size_t>(p.b)].body;
        checked += (ba == la.body && bb == lb.body) || (ba == lb.body && bb == la.body);
      }
    EXPECT_GT(checked, 0) << what << ": " << name << ": no other shape pair of the two links is checked";
  }
}

TEST(CollisionSplit, ShippedRobotsLeaveNoLinkPairOutWholeForOverlapAtRest) {
  int robots = 0, excluded = 0;
  for (const auto& e : std::filesystem::directory_iterator(dataDirectory() + "/robots")) {
    if (e.path().extension() != ".urdf") continue;
    ++robots;
    const UrdfModel um = loadUrdf(e.path().string());
    const auto w = buildCollisionWorld(Scene{}, um.model, um.collision);
    // The Panda's two exceptions: at its rest configuration joint 6 is at 0,
    // by its lower limit, where the wrist folds the hand back along link 4:
    // the hand's capsule lies beside link 4's over its whole length, so every
    // piece of the one comes within the split's clearance of the other; and
    // link 7 and the hand are joined by fixed joints only (link 8 between),
    // so their overlap at rest is their overlap in every configuration.
    std::vector<std::pair<std::string, std::string>> whole;
    if (e.path().filename() == "panda.urdf") whole = {{"panda_link4", "panda_hand"}, {"panda_link7", "panda_hand"}};
    expectSplitNotDisabled(*w, e.path().filename().string(), whole);
    excluded += static_cast<int>(w->excludedPairs().size());
  }
  EXPECT_GE(robots, 5);
  // The iiwa's, the IRB 2400's and the Panda's wrist pieces overlap at rest.
  EXPECT_GT(excluded, 0);
  const auto human = shippedHumanoid();
  ASSERT_TRUE(human);
  expectSplitNotDisabled(*human, "humanoid");
  EXPECT_FALSE(human->excludedPairs().empty());
}

TEST(CollisionSplit, CorpusRobotsLeaveOutWholeOnlyPairsNoCutCanSeparate) {
  // A link pair is still left out whole when no piece of either link is
  // clear of the other at rest outside its joint region: its shapes are
  // spheres (links whose origins coincide: camera and sensor frames), the
  // description's own (not changed: grippers' fingers), or capsules within
  // the overlap and the joint region along their whole length. Each is
  // printed with what its links are checked as.
  IKBENCH_REQUIRE_CORPUS("robots");
  int robots = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::corpusFile("robots"))) {
    if (e.path().extension() != ".urdf") continue;
    ++robots;
    const UrdfModel um = loadUrdf(e.path().string());
    const auto w = buildCollisionWorld(Scene{}, um.model, um.collision);
    EXPECT_TRUE(w->uncoveredLinks().empty() || std::any_of(w->links().begin(), w->links().end(),
                                                           [](const LinkShape& l) { return !l.fitted; }))
        << e.path().filename() << ": " << w->coverageWarning();
    // Each left out whole with its reason, and named here with what its two
    // links are checked as.
    for (const auto& [x, y] : w->restOverlaps()) {
      const int bx = w->model().bodyIndex(x), by = w->model().bodyIndex(y);
      ASSERT_GE(bx, 0);
      ASSERT_GE(by, 0);
      std::cout << e.path().filename().string() << ": " << x << "~" << y << " left out whole (overlap_at_rest): "
                << w->describeLink(bx) << " / " << w->describeLink(by) << "\n";
    }
    if (!w->restOverlaps().empty())
      std::cout << e.path().filename().string() << ": " << w->restOverlaps().size()
                << " link pair(s) left out whole (spheres, description shapes or capsules within the overlap), e.g. "
                << w->restOverlaps().front().first << "~" << w->restOverlaps().front().second << "\n";
  }
  EXPECT_GE(robots, 1);
}

// A seeded search for a configuration in which the only colliding shape
// pairs of `w` are between links `x` and `y`: `w` must report it colliding
// (by FCL's exact check), and the same geometry with that link pair left out
// whole (what the world did before splitting) collision-free.
void expectFoundOnlyWhenChecked(const std::shared_ptr<const CollisionWorld>& w, const std::string& x,
                                const std::string& y, std::uint64_t seed, int draws, Eigen::VectorXd* found) {
  ASSERT_TRUE(CollisionWorld::exactCheckIsFcl());
  const Model& m = w->model();
  const int bx = m.bodyIndex(x), by = m.bodyIndex(y);
  ASSERT_GE(bx, 0);
  ASSERT_GE(by, 0);
  auto disabled = w->disabledPairs();
  disabled.emplace_back(x, y);
  const CollisionWorld whole(w->modelPtr(), w->links(), w->obstacles(), disabled, "whole", w->avoidance());
  Data data(m);
  Rng rng(seed);
  for (int k = 0; k < draws; ++k) {
    const Eigen::VectorXd q = randomConfiguration(m, rng);
    forwardKinematics(m, q, data);
    bool other = false, between = false;
    for (int i = 0; i < static_cast<int>(w->pairs().size()) && !other; ++i) {
      const CollisionPair& p = w->pairs()[static_cast<size_t>(i)];
      const ClosestPoints d = w->approximateDistance(data, i);
      if (d.distance > 0.0) continue;  // clear by the enclosing forms: clear
      const int ba = w->links()[static_cast<size_t>(p.a)].body;
      const int bb = p.obstacle ? -1 : w->links()[static_cast<size_t>(p.b)].body;
      const bool xy = (ba == bx && bb == by) || (ba == by && bb == bx);
      (xy ? between : other) = true;
    }
    if (!between || other) continue;
    const CollisionReport split = w->check(data), before = whole.check(data);
    if (split.collision_free || !before.collision_free) continue;  // the enclosing forms only
    *found = q;
    std::cout << x << "~" << y << " collide only in draw " << k << ": " << split.pair << " " << split.min_clearance
              << "\n";
    EXPECT_NE(split.pair.find(x), std::string::npos) << split.pair;
    EXPECT_NE(split.pair.find(y), std::string::npos) << split.pair;
    EXPECT_LT(split.min_clearance, 0.0);
    EXPECT_TRUE(w->collides(data));
    EXPECT_FALSE(whole.collides(data));
    return;
  }
  ADD_FAILURE() << "no configuration in " << draws << " seeded draws where only " << x << "~" << y << " collide";
}

TEST(CollisionSplit, IiwaHandFoldedOntoLink5IsFoundColliding) {
  const UrdfModel um = loadUrdf(dataDirectory() + "/robots/iiwa14.urdf");
  const auto w = buildCollisionWorld(Scene{}, um.model, um.collision);
  Eigen::VectorXd q;
  expectFoundOnlyWhenChecked(w, "link_5", "link_7", 7, 20000, &q);
  if (q.size()) {
    // The fold is joint a6 (limits +-120 degrees) bent towards a limit.
    const int j6 = um.model->bodyIndex("link_6");
    EXPECT_GT(std::abs(q[um.model->idxQ(j6)]), 1.0) << q.transpose();
  }
}

TEST(CollisionSplit, HumanoidUpperArmIntoItsChestIsFoundColliding) {
  const auto w = shippedHumanoid();
  ASSERT_TRUE(w);
  Eigen::VectorXd q;
  expectFoundOnlyWhenChecked(w, "Chest", "LeftArm", 11, 20000, &q);
}

TEST(CollisionSplit, HumanoidHandThroughItsThighIsFoundColliding) {
  // A seeded search for the left hand 2 cm or more into the left thigh (by
  // the enclosing forms); the pair is checked, and FCL's check of the two
  // links' shapes alone finds them colliding, as does the whole world.
  const auto w = shippedHumanoid();
  ASSERT_TRUE(w);
  const Model& m = w->model();
  const int hand = m.bodyIndex("LeftHand"), thigh = m.bodyIndex("LeftUpLeg");
  std::vector<LinkShape> two;
  for (const LinkShape& l : w->links())
    if (l.body == hand || l.body == thigh) two.push_back(l);
  const CollisionWorld pair(w->modelPtr(), two, {}, {}, "hand-thigh");
  ASSERT_FALSE(pair.pairs().empty());
  Data data(m);
  Rng rng(13);
  for (int k = 0; k < 20000; ++k) {
    forwardKinematics(m, randomConfiguration(m, rng), data);
    bool through = false;
    for (int i = 0; i < static_cast<int>(w->pairs().size()); ++i) {
      const CollisionPair& p = w->pairs()[static_cast<size_t>(i)];
      const int ba = w->links()[static_cast<size_t>(p.a)].body, bb = p.obstacle ? -1 : w->links()[static_cast<size_t>(p.b)].body;
      through |= ((ba == hand && bb == thigh) || (ba == thigh && bb == hand)) && w->approximateDistance(data, i).distance < -0.02;
    }
    if (!through) continue;
    const CollisionReport r = pair.check(data);
    EXPECT_FALSE(r.collision_free);
    EXPECT_LT(r.min_clearance, 0.0);
    EXPECT_NE(r.pair.find("LeftHand"), std::string::npos) << r.pair;
    EXPECT_NE(r.pair.find("LeftUpLeg"), std::string::npos) << r.pair;
    EXPECT_FALSE(w->check(data).collision_free);
    return;
  }
  ADD_FAILURE() << "no configuration in 20000 seeded draws with the left hand through the left thigh";
}

}  // namespace
}  // namespace ikbench
