// A collision world: a robot's link geometry, the obstacles of a scene and
// the pairs to check, with the two kinds of query the project needs:
//
// * the exact check (FCL, Pan, Chitta & Manocha 2012, "FCL: A general purpose
//   library for collision and proximity queries", ICRA): whether a
//   configuration collides, its smallest clearance and the pair that has it.
//   It decides a result's `collision_free`, as forward kinematics decides
//   `converged`;
// * the inner-loop distances: every pair's closest points on the enclosing
//   approximations of shapes.h (capsules and boxes), cheap enough to run at
//   every solver iteration; they never exceed the exact distance (up to
//   kFastDistanceSlack), so a configuration they find clear is clear.
//
// Link geometry comes from the URDF's <collision> primitives where a link has
// them, otherwise from capsules fitted along the link's segments (the
// segment from the body's origin to each child joint's origin; radius rule:
// RobotGeometryOptions). Pairs: every link shape against every obstacle, and
// every two link shapes of different bodies, except the obstacle pairs of
// static bodies (no joint moves them: the base and what is fixed to it, as
// still as the obstacles), pairs of adjacent bodies
// (parent and child), pairs of link shapes that already collide in the
// model's rest configuration (restConfiguration) (the SRDF "default" pairs a MoveIt setup
// assistant disables), pairs (with links or obstacles) that collide in every
// one of kAlwaysSamples seeded random configurations (its "always" pairs;
// with an obstacle, only for a link one joint from a static body, which turns
// in place on its mount: any other such pair refuses the scene), and the
// pairs a scene lists as disabled.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ikbench/collision/shapes.h"
#include "ikbench/kinematics/data.h"
#include "ikbench/kinematics/model.h"

namespace ikbench {

// One shape attached to a body of the model (pose: body_T_shape).
struct LinkShape {
  int body = -1;
  Shape shape;
  bool fitted = false;  // a fitted capsule (not the URDF's own geometry)
};

// The radius rule of fitted capsules: r = clamp(fraction * L, min, max) for a
// segment of length L [m], unless the link's name has its own radius.
// Segments shorter than min_segment get no capsule; a moving body with no
// segment that long (coincident joint origins, a leaf such as the flange or
// the tool frame) gets a sphere at its origin (docs/collision.md, "Coverage").
struct CapsuleRule {
  double fraction = 0.15;
  double min_radius = 0.025;
  double max_radius = 0.06;
  double min_segment = 1e-3;
  std::map<std::string, double> link_radius;  // body name -> radius [m]
};

// The configuration "at rest" that the pairs colliding in it are judged at:
// the neutral configuration, with every revolute or prismatic joint whose zero
// lies outside its finite limits at the middle of them (MoveIt's default joint
// values: JointModel::getVariableDefaultPositions), so that a robot whose
// zero is not a pose it can take (the Panda's elbow) is judged in one it can.
Eigen::VectorXd restConfiguration(const Model& model);

// How far apart [m] fitLinkCapsules keeps a capsule from a sphere at the
// joint it ends at (above the avoidance's default security distance, 2 mm,
// so that the damper's rows of such a pair stay feasible); a point of a
// link's segments within 1.5 times this of a link shape counts as covered
// (CollisionWorld::coverage).
inline constexpr double kRestClearance = 5e-3;

// Fitted shapes for the bodies that have no shape in `given` (which is
// returned first, unchanged): a capsule along every segment of at least
// min_segment, a sphere at the origin of each run of moving bodies that
// share one (a shoulder, a wrist), a leaf's short capsule made the hand
// (radius at least max_radius), each capsule that ends at another link's
// joint sphere drawn back from it by the radii and kRestClearance, and each
// capsule that still overlaps a shape of a non-neighbouring link at rest split
// into consecutive pieces (together the same capsule) at the ends of the part
// within 5 cm (the avoidance's default influence distance) of that shape and
// of the joint region, so that only the overlapping pieces need be left out
// (docs/collision.md, "Coverage"). Throws std::invalid_argument for a
// link_radius entry naming a body the model does not have.
std::vector<LinkShape> fitLinkCapsules(const Model& model, const CapsuleRule& rule, std::vector<LinkShape> given = {});

// Parameters of collision avoidance (the velocity damper of Faverjon &
// Tournassoud 1987; docs/collision.md): pairs closer than influence_distance
// enter the step as inequality rows that keep them at least
// security_distance apart, with damper gain xi.
struct AvoidanceParameters {
  double influence_distance = 0.05;  // d_i [m]
  double security_distance = 0.002;  // d_s [m], < d_i
  double damper_gain = 0.5;          // xi, in (0, 1]
};

// Why a pair is left out of the checks (CollisionWorld::disabledReasons).
inline constexpr const char* kDisabledAdjacent = "adjacent";             // parent and child
inline constexpr const char* kDisabledScene = "scene";                   // the scene's or its SRDF's list
inline constexpr const char* kDisabledOverlap = "overlap_at_rest";       // collide at restConfiguration
inline constexpr const char* kDisabledAlways = "always_colliding";       // collide in every sampled configuration

// What covers one moving body: its own shapes, or another body's shape that
// holds its segments (a run of bodies sharing one joint origin and its sphere).
struct LinkCoverage {
  int body = -1;
  int shapes = 0;       // its own link shapes
  int covered_by = -1;  // with no shape of its own: the body whose shape holds its origin, or -1
  // Every point of its segments (origin to each child joint's origin) lies
  // within kRestClearance of a link shape at the rest configuration and
  // at kCoverSamples seeded random ones.
  bool covered = false;
};

// A pair of link shapes of two links that are otherwise checked, left out on
// its own (CollisionWorld::excludedPairs): pieces of split capsules that
// overlap at the rest configuration (reason kDisabledOverlap), where the joint
// between the links, not the geometry, keeps them apart. `joint` is the body
// whose joint, on the kinematic path between the two links, lies nearest the
// overlap at rest, and `joint_distance` [m] how far the overlap's witness
// points are from that joint's origin (the farther one); -1 and NaN when not
// derived (a world read back from a results file).
struct ExcludedShapePair {
  int a = -1;  // link shape index
  int b = -1;  // link shape index, a < b
  std::string reason;
  int joint = -1;
  double joint_distance = std::numeric_limits<double>::quiet_NaN();
};

struct CollisionPair {
  int a = -1;  // link shape index
  int b = -1;  // link shape index, or obstacle index when obstacle is true
  bool obstacle = false;
};

// The exact check's answer for one configuration.
struct CollisionReport {
  bool collision_free = true;
  // Smallest signed distance over the checked pairs [m]: the separation, or
  // minus the penetration depth of a colliding pair; +inf with no pairs.
  double min_clearance = 0.0;
  std::string pair;  // the pair that has it, "<link>~<obstacle or link>"; empty with no pairs
  int pair_index = -1;
};

// How a world settles the pairs it leaves out. kDerive: a scene read for a
// run: adjacent, collide-at-rest and always-colliding pairs derived here,
// beside the scene's own list. kAsRecorded: a world read back from a results
// file, whose list already holds every pair the run left out: only those
// (and adjacent bodies) are left out, nothing is derived again.
enum class PairRule { kDerive, kAsRecorded };

class CollisionWorld {
 public:
  // Positions, sizes and mesh vertices beyond this [m] are refused: past it
  // the exact check's arithmetic is no longer exact (and overflows near 1e308).
  static constexpr double kMaxShapeExtent = 1e6;
  // The "always in collision" rule: configurations sampled, and their seed.
  static constexpr int kAlwaysSamples = 256;
  static constexpr std::uint64_t kAlwaysSeed = 0x5ce9e;
  // The coverage check's random configurations, and their seed.
  static constexpr int kCoverSamples = 16;
  static constexpr std::uint64_t kCoverSeed = 0xc0fe5;

  // Throws std::invalid_argument naming the shape or pair for a link shape on
  // a body the model does not have, a shape with a non-positive or
  // non-finite size, or a disabled pair naming an unknown link or obstacle.
  // With PairRule::kAsRecorded and `recorded`, the checked pairs are those
  // (the results file's, shape by shape), after checking that each names
  // shapes and obstacles of the world and that none the scene does not
  // disable is missing (std::invalid_argument naming pairs[k] otherwise).
  // With PairRule::kDerive, also throws naming the pairs when a link more
  // than one joint from a static body collides with an obstacle in every
  // sampled configuration (an obstacle that encloses or pins the robot).
  // recorded_reasons (kAsRecorded): why each of `disabled` was left out, as
  // the results file says (empty: not recorded). recorded_excluded
  // (kAsRecorded): the shape pairs the run left out on their own
  // (excludedPairs()); std::invalid_argument naming excluded_pairs[k] for one
  // that names shapes the scene does not have, two shapes of one link, a pair
  // also checked or listed twice, or a reason other than kDisabledOverlap.
  CollisionWorld(std::shared_ptr<const Model> model, std::vector<LinkShape> links, std::vector<Shape> obstacles,
                 const std::vector<std::pair<std::string, std::string>>& disabled, std::string scene_name,
                 AvoidanceParameters avoid = {}, PairRule rule = PairRule::kDerive,
                 const std::optional<std::vector<CollisionPair>>& recorded = std::nullopt,
                 std::vector<std::string> recorded_reasons = {},
                 std::vector<ExcludedShapePair> recorded_excluded = {});
  ~CollisionWorld();
  CollisionWorld(const CollisionWorld&) = delete;
  CollisionWorld& operator=(const CollisionWorld&) = delete;

  const Model& model() const { return *model_; }
  const std::shared_ptr<const Model>& modelPtr() const { return model_; }
  const std::string& sceneName() const { return scene_name_; }
  const std::vector<LinkShape>& links() const { return links_; }
  const std::vector<Shape>& obstacles() const { return obstacles_; }
  const std::vector<CollisionPair>& pairs() const { return pairs_; }
  // The pairs left out (by name), for the results files: adjacent bodies,
  // collide-at-rest, always-colliding and the scene's own list.
  const std::vector<std::pair<std::string, std::string>>& disabledPairs() const { return disabled_; }
  // Why each of disabledPairs() is left out: kDisabledAdjacent, kDisabledScene,
  // kDisabledOverlap or kDisabledAlways ("" when read back without reasons).
  const std::vector<std::string>& disabledReasons() const { return disabled_reason_; }
  // Shape pairs left out on their own while other shape pairs of their two
  // links are checked (split capsules overlapping at rest), a < b.
  const std::vector<ExcludedShapePair>& excludedPairs() const { return excluded_; }
  // One excluded pair as text: "link_5#1~link_7: overlap_at_rest, 0.031 m
  // from joint of link_6".
  std::string describeExcluded(const ExcludedShapePair& e) const;
  // Every moving body (one a joint moves), root first: what covers it.
  const std::vector<LinkCoverage>& coverage() const { return coverage_; }
  // The names of the moving bodies that are not covered.
  std::vector<std::string> uncoveredLinks() const;
  // The link pairs left out because they collide at the rest configuration.
  std::vector<std::pair<std::string, std::string>> restOverlaps() const;
  // The coverage flag: a moving body not covered, or a pair left out for
  // colliding at rest; the reasons as text (empty when neither).
  std::string coverageWarning() const;
  // One line per moving body: its shapes, or what holds it ("sphere r=0.05",
  // "capsule r=0.04 l=0.3", "inside wam5's sphere", "none").
  std::string describeLink(int body) const;
  const AvoidanceParameters& avoidance() const { return avoid_; }
  // Which geometry the robot's links are checked as: link shapes per kind,
  // "mesh" (a triangle mesh, FCL's BVH), "hull" (a mesh's convex hull),
  // "primitives" (the description's boxes, spheres, capsules, cylinders) and
  // "capsules" (fitted to the link's segments).
  std::map<std::string, int> geometryCounts() const;
  // The same as text: "mesh 6, capsules 1".
  std::string geometrySummary() const;
  std::string pairName(int pair) const;
  // A link shape's name: "<body>" or "<body>#k" for its k-th shape (k > 0).
  std::string linkShapeName(int link) const;

  // ---- the exact check (FCL); needs forwardKinematics(model, q, data) ----
  CollisionReport check(const Data& data) const;
  // Whether check() is FCL's: false in a build without FCL (the playground's
  // WebAssembly module), where it takes the inner-loop distances instead.
  static bool exactCheckIsFcl();
  // Whether the configuration collides: the inner-loop distances first
  // (clear by them is clear), FCL for the pairs they cannot clear.
  bool collides(const Data& data) const;

  // ---- the inner loop ----
  // Closest points of every pair on the enclosing approximations, into
  // out[pair] (resized to pairs().size()). A pair whose bounding spheres are
  // farther apart than `cutoff` gets only that lower bound of its distance
  // (witness points unset): the closest points of far pairs are not needed.
  void approximateDistances(const Data& data, double cutoff, std::vector<ClosestPoints>* out) const;
  // Of one pair; with a cutoff as above (infinity: always the closest points).
  ClosestPoints approximateDistance(const Data& data, int pair,
                                    double cutoff = std::numeric_limits<double>::infinity()) const;

 private:
  struct Fcl;
  std::shared_ptr<const Model> model_;
  std::vector<LinkShape> links_;
  std::vector<Shape> obstacles_;
  std::vector<ApproxShape> link_approx_;      // in the body frame
  std::vector<ApproxShape> obstacle_approx_;  // in the world
  // Bounding spheres: centre (link: body frame) and radius.
  std::vector<std::pair<Eigen::Vector3d, double>> link_bound_, obstacle_bound_;
  std::vector<CollisionPair> pairs_;
  std::vector<std::pair<std::string, std::string>> disabled_;
  std::vector<std::string> disabled_reason_;
  std::vector<ExcludedShapePair> excluded_;
  std::vector<LinkCoverage> coverage_;
  std::string scene_name_;
  AvoidanceParameters avoid_;
  std::unique_ptr<Fcl> fcl_;
  double exactPair(const Data& data, int pair, bool* colliding) const;
  void computeCoverage();
};

// Reads a binary or ASCII STL file into a mesh (vertices not merged).
// Throws std::runtime_error naming the file for one that cannot be read, is
// truncated, holds more than max_triangles triangles, or a non-finite value.
TriangleMesh readStl(const std::string& path, std::size_t max_triangles);

}  // namespace ikbench
