#include "ikbench/collision/world.h"

#if IKBENCH_HAVE_FCL
#include <fcl/geometry/bvh/BVH_model.h>
#include <fcl/geometry/shape/box.h>
#include <fcl/geometry/shape/capsule.h>
#include <fcl/geometry/shape/convex.h>
#include <fcl/geometry/shape/cylinder.h>
#include <fcl/geometry/shape/sphere.h>
#include <fcl/math/bv/OBBRSS.h>
#include <fcl/narrowphase/collision.h>
#include <fcl/narrowphase/distance.h>
#endif
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <tuple>

#include "ikbench/collision/depth.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"

namespace ikbench {

// ---- fitted capsules ------------------------------------------------------------

Eigen::VectorXd restConfiguration(const Model& model) {
  Eigen::VectorXd q = model.neutralConfiguration();
  for (int j = 0; j < model.numJoints(); ++j) {
    if (model.type(j) != JointType::kRevolute && model.type(j) != JointType::kPrismatic) continue;
    const int iv = model.idxV(j), iq = model.idxQ(j);
    const double lo = model.lowerLimits()[iv], hi = model.upperLimits()[iv];
    if (!(q[iq] >= lo && q[iq] <= hi) && model.hasFiniteLimits(iv)) q[iq] = 0.5 * (lo + hi);
  }
  return q;
}

namespace {

bool adjacentBodies(const Model& m, int a, int b) { return m.parent(a) == b || m.parent(b) == a; }

// Signed distance of a point (world) to an inner-loop shape: negative inside
// (the point as a capsule of no length and no radius).
double pointDistance(const ApproxShape& s, const Eigen::Vector3d& x) { return closestPoints(Capsule{x, x, 0.0}, s).distance; }

// The bodies whose joints lie on the kinematic path between bodies a and b:
// each one's ancestors (itself included) below their lowest common ancestor.
std::vector<int> pathBodies(const Model& m, int a, int b) {
  std::vector<int> up_a, up_b, path;
  for (int x = a; x >= 0; x = m.parent(x)) up_a.push_back(x);
  for (int x = b; x >= 0; x = m.parent(x)) up_b.push_back(x);
  auto in = [](const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  for (int x : up_a)
    if (!in(up_b, x)) path.push_back(x);
  for (int x : up_b)
    if (!in(up_a, x)) path.push_back(x);
  return path;
}

// The part of segment a-b (parameters in [0, 1]) within distance rho of
// point c, or nullopt.
std::optional<std::pair<double, double>> ballInterval(const Eigen::Vector3d& a, const Eigen::Vector3d& b,
                                                      const Eigen::Vector3d& c, double rho) {
  const Eigen::Vector3d d = b - a, f = a - c;
  const double A = d.squaredNorm(), B = 2.0 * f.dot(d), C = f.squaredNorm() - rho * rho;
  if (A == 0.0) return C <= 0.0 ? std::optional(std::pair{0.0, 1.0}) : std::nullopt;
  const double disc = B * B - 4.0 * A * C;
  if (disc < 0.0) return std::nullopt;
  const double t0 = std::max(0.0, (-B - std::sqrt(disc)) / (2.0 * A)), t1 = std::min(1.0, (-B + std::sqrt(disc)) / (2.0 * A));
  if (t0 > t1) return std::nullopt;
  return std::pair{t0, t1};
}

// How far apart [m], at rest, the pieces of a split capsule that are checked
// stay from the shape it overlaps: the avoidance's default influence
// distance, so that at rest no checked piece pair enters the velocity
// damper's rows (which would hold back every step from the rest pose).
constexpr double kSplitClearance = 0.05;

// Where along a fitted capsule's segment (parameter t in [0, 1]) its swept
// sphere comes within `clearance` of `other` (world frame, at rest): the
// interval [t0, t1] (the distance of the swept sphere at t is a convex
// function of t, so the set is one interval), or nullopt when it never does.
std::optional<std::pair<double, double>> nearInterval(const Eigen::Vector3d& a, const Eigen::Vector3d& b, double radius,
                                                      const ApproxShape& other, double clearance) {
  auto f = [&](double t) {
    const Eigen::Vector3d x = a + t * (b - a);
    return closestPoints(Capsule{x, x, radius}, other).distance - clearance;
  };
  const double tm = convexArgminOnUnit(f, 60);
  if (f(tm) >= 0.0) return std::nullopt;
  // f falls to tm and rises after it: bisect each side for f = 0.
  auto crossing = [&](double inside, double outside) {
    if (f(outside) < 0.0) return outside;
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (inside + outside);
      (f(mid) < 0.0 ? inside : outside) = mid;
    }
    return outside;
  };
  return std::pair{crossing(tm, 0.0), crossing(tm, 1.0)};
}

// Step 4 of fitLinkCapsules: split each fitted capsule (at index >= n_given)
// at the ends of the intervals where it comes within kSplitClearance of a
// shape of a link that is neither its own nor a neighbour, at rest (`data`
// holds the rest configuration's forward kinematics), and only when it
// overlaps that shape there (a pair the world would otherwise leave out).
void splitRestOverlaps(const Model& model, const CapsuleRule& rule, const Data& data, size_t n_given,
                       std::vector<LinkShape>* shapes) {
  std::vector<LinkShape>& out = *shapes;
  std::vector<ApproxShape> world;
  for (const LinkShape& l : out) world.push_back(transformed(approximate(l.shape), data.world_T_body[static_cast<size_t>(l.body)]));
  // A capsule's segment in its body frame (capsuleBetween puts it along z).
  auto segment = [](const Shape& s) {
    const Eigen::Vector3d h = s.pose.R.col(2) * (0.5 * s.length);
    return std::pair<Eigen::Vector3d, Eigen::Vector3d>{s.pose.p - h, s.pose.p + h};
  };
  std::vector<LinkShape> split;
  split.reserve(out.size());
  for (size_t k = 0; k < out.size(); ++k) {
    const LinkShape& l = out[k];
    if (k < n_given || l.shape.kind != ShapeKind::kCapsule || !(l.shape.length > 0.0)) {
      split.push_back(l);
      continue;
    }
    const auto [a0, b0] = segment(l.shape);
    const Pose3d& T = data.world_T_body[static_cast<size_t>(l.body)];
    const Eigen::Vector3d wa = T.act(a0), wb = T.act(b0);
    std::vector<double> cuts;
    for (size_t o = 0; o < out.size(); ++o) {
      const int bo = out[o].body;
      if (bo == l.body || adjacentBodies(model, bo, l.body)) continue;
      if (closestPoints(world[k].capsule, world[o]).distance > 0.0) continue;  // no overlap at rest
      auto in = nearInterval(wa, wb, l.shape.radius, world[o], kSplitClearance);
      if (!in) continue;
      // The joint region: the part within rho = r + r_other + kRestClearance
      // of the joint through which the path to the other link leaves this
      // one (its origin is fixed in this link: a child's joint when the other
      // link lies below, else this link's own). Whatever that joint does,
      // the other link's shape meets this one there (the two capsules' ends
      // both reach the joint), so only the pieces outside are checked.
      int joint = l.body;
      for (int x = bo; x >= 0; x = model.parent(x))
        if (model.parent(x) == l.body) joint = x;
      const double other_r = world[o].is_box ? world[o].box.half.norm() : world[o].capsule.radius;
      if (const auto ball = ballInterval(wa, wb, data.world_T_body[static_cast<size_t>(joint)].p,
                                         l.shape.radius + other_r + kRestClearance))
        in = std::pair{std::min(in->first, ball->first), std::max(in->second, ball->second)};
      cuts.push_back(in->first);
      cuts.push_back(in->second);
    }
    // At most three pieces, so that the inner loop's pairs grow little: one
    // from the start to the farthest end of the intervals that begin at the
    // start, one from the nearest beginning of the intervals that reach the
    // end, and the middle (an interval inside falls to the middle piece,
    // which the world then leaves out with that shape only if it overlaps
    // it at rest). A piece shorter than min_segment stays with its neighbour.
    if (cuts.empty()) {
      split.push_back(l);
      continue;
    }
    const double len = l.shape.length, min_t = rule.min_segment / len;
    double head = 0.0, tail = 1.0;
    for (size_t c = 0; c + 1 < cuts.size(); c += 2) {
      if (cuts[c] < min_t && cuts[c + 1] < 1.0 - min_t) head = std::max(head, cuts[c + 1]);
      if (cuts[c + 1] > 1.0 - min_t && cuts[c] > min_t) tail = std::min(tail, cuts[c]);
    }
    std::vector<double> at{0.0};
    if (head >= min_t && 1.0 - head >= min_t) at.push_back(head);
    if (tail - at.back() >= min_t && 1.0 - tail >= min_t) at.push_back(tail);
    at.push_back(1.0);
    for (size_t i = 0; i + 1 < at.size(); ++i) {
      LinkShape piece = l;
      piece.shape = Shape::capsuleBetween(l.shape.name, a0 + at[i] * (b0 - a0), a0 + at[i + 1] * (b0 - a0), l.shape.radius);
      split.push_back(std::move(piece));
    }
  }
  out = std::move(split);
}

}  // namespace

std::vector<LinkShape> fitLinkCapsules(const Model& model, const CapsuleRule& rule, std::vector<LinkShape> given) {
  for (const auto& [name, radius] : rule.link_radius)
    if (model.bodyIndex(name) < 0)
      throw std::invalid_argument(
          fmt::format("robot.links.{}: the model '{}' has no link of this name", name, model.name()));
  const int n = model.numJoints();
  std::vector<char> has(static_cast<size_t>(n), 0);
  for (const LinkShape& s : given)
    if (s.body >= 0 && s.body < n) has[static_cast<size_t>(s.body)] = 1;
  const size_t n_given = given.size();
  std::vector<LinkShape> out = std::move(given);
  auto radiusFor = [&](int b, double len) {
    const auto own = rule.link_radius.find(model.bodyName(b));
    return own != rule.link_radius.end() ? own->second : std::clamp(rule.fraction * len, rule.min_radius, rule.max_radius);
  };
  auto moving = [&](int b) { return !model.supportingJoints(b).empty(); };
  // Every fitted capsule's segment (body frame), for trimming below.
  std::vector<std::pair<Eigen::Vector3d, Eigen::Vector3d>> seg(
      n_given, {Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero()});
  // 1. A capsule along every segment of at least min_segment (from the
  //    body's origin to a child joint's origin).
  std::vector<char> point_body(static_cast<size_t>(n), 0);
  std::vector<int> into(static_cast<size_t>(n), -1);  // the fitted capsule from a body's parent to it
  for (int b = 0; b < n; ++b) {
    if (has[static_cast<size_t>(b)]) continue;
    int made = 0;
    for (int c : model.children(b)) {
      const Eigen::Vector3d end = model.parentTJoint(c).p;
      const double len = end.norm();
      if (len < rule.min_segment) continue;
      out.push_back({b, Shape::capsuleBetween(model.bodyName(b), Eigen::Vector3d::Zero(), end, radiusFor(b, len)), true});
      seg.emplace_back(Eigen::Vector3d::Zero(), end);
      into[static_cast<size_t>(c)] = static_cast<int>(out.size()) - 1;
      ++made;
    }
    point_body[static_cast<size_t>(b)] = made == 0;
  }
  // 2. A body none of whose segments reaches min_segment (joint origins that
  //    coincide: a shoulder or wrist of intersecting axes; a leaf: the flange,
  //    the tool, an effector's tip frame) sweeps no more than its origin, but
  //    what it carries turns about that point:
  //    * a run of such bodies at one point (a shoulder, a wrist) gets one
  //      sphere there, on the last body of the run (the neighbour of the
  //      capsules that leave the point; the first when none leaves); the others are inside it whatever the
  //      configuration, the point being fixed in every body of the run.
  //      Radius: the largest the rule gives the segments that meet at the
  //      point, so that the sphere holds the capsules' ends;
  //    * a leaf at the end of a fitted capsule of at most 2 max_radius (a
  //      flange, a tool frame) makes that capsule the hand the model does not
  //      describe: its radius becomes at least max_radius. At the end of a
  //      longer capsule the capsule's end holds it. A leaf in a run, or with a
  //      radius of its own, gets a sphere (at least max_radius).
  //    A body whose origin lies inside a shape of the description on a
  //    neighbour gets nothing: that shape holds it. Bodies no joint moves are
  //    left as they are (nothing to cover for IK).
  std::vector<int> run_root(static_cast<size_t>(n), -1), run_last(static_cast<size_t>(n), -1);
  std::vector<double> run_radius(static_cast<size_t>(n), 0.0);
  std::vector<char> run_out(static_cast<size_t>(n), 0);  // capsules leave the run's point
  // Whether the origin of body b lies inside a shape of the description
  // (`given`) on its parent or on a child at the same origin: such a point is
  // held whatever the configuration.
  auto heldByGiven = [&](int b) {
    for (size_t i = 0; i < n_given; ++i) {
      const int o = out[i].body;
      Eigen::Vector3d x;
      if (o == model.parent(b))
        x = model.parentTJoint(b).p;
      else if (o >= 0 && model.parent(o) == b && model.parentTJoint(o).p.norm() < rule.min_segment)
        x = -(model.parentTJoint(o).R.transpose() * model.parentTJoint(o).p);
      else
        continue;
      if (pointDistance(approximate(out[i].shape), x) <= 0.0) return true;
    }
    return false;
  };
  // The leaves at the end of a fitted capsule first (the hands), so that the
  // spheres below hold the hands' ends too.
  std::vector<char> held(static_cast<size_t>(n), 0);
  for (int b = 0; b < n; ++b) {
    const int cap = into[static_cast<size_t>(b)];
    if (!point_body[static_cast<size_t>(b)] || !moving(b) || !model.children(b).empty() || cap < 0 ||
        rule.link_radius.count(model.bodyName(b)))
      continue;
    held[static_cast<size_t>(b)] = 1;
    LinkShape& hand = out[static_cast<size_t>(cap)];
    if (model.parentTJoint(b).p.norm() <= 2.0 * rule.max_radius && !rule.link_radius.count(model.bodyName(hand.body)) &&
        hand.shape.radius < rule.max_radius)
      hand.shape = Shape::capsuleBetween(hand.shape.name, seg[static_cast<size_t>(cap)].first,
                                         seg[static_cast<size_t>(cap)].second, rule.max_radius);
  }
  for (int b = 0; b < n; ++b) {
    if (!point_body[static_cast<size_t>(b)] || !moving(b) || held[static_cast<size_t>(b)] || heldByGiven(b)) continue;
    const int p = model.parent(b);
    const double in = model.parentTJoint(b).p.norm();
    const bool joins = p >= 0 && run_root[static_cast<size_t>(p)] >= 0 && in < rule.min_segment;
    const bool own = rule.link_radius.count(model.bodyName(b)) > 0;
    const int root = joins ? run_root[static_cast<size_t>(p)] : b;
    run_root[static_cast<size_t>(b)] = root;
    run_last[static_cast<size_t>(root)] = b;
    // The radii of the fitted capsules that end or start at the point.
    double r = rule.min_radius;
    if (const int cap = into[static_cast<size_t>(b)]; cap >= 0) r = std::max(r, out[static_cast<size_t>(cap)].shape.radius);
    for (int c : model.children(b))
      for (int cc : model.children(c))
        if (const int cap = into[static_cast<size_t>(cc)];
            cap >= 0 && model.parentTJoint(c).p.norm() < rule.min_segment)
          r = std::max(r, out[static_cast<size_t>(cap)].shape.radius), run_out[static_cast<size_t>(root)] = 1;
    if (model.children(b).empty()) r = std::max(r, rule.max_radius);
    if (own) r = std::max(r, rule.link_radius.at(model.bodyName(b)));
    run_radius[static_cast<size_t>(root)] = std::max(run_radius[static_cast<size_t>(root)], r);
  }
  for (int b = 0; b < n; ++b) {
    if (run_root[static_cast<size_t>(b)] != b) continue;
    // On the neighbour of the capsules that leave the point; a run that ends
    // the tree (a wrist and its tool frame) on its first body, the neighbour
    // of the capsule that arrives.
    const int last = run_out[static_cast<size_t>(b)] ? run_last[static_cast<size_t>(b)] : b;
    const auto own = rule.link_radius.find(model.bodyName(last));
    const double r = own != rule.link_radius.end() ? own->second : run_radius[static_cast<size_t>(b)];
    out.push_back({last, Shape::sphere(model.bodyName(last), r, Pose3d()), true});
    seg.emplace_back(Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero());
  }
  // 3. A fitted capsule that ends at a joint where another link's sphere
  //    sits (a run's sphere, on a link that is not its neighbour: the
  //    forearm's capsule at a wrist whose sphere is on the last wrist link)
  //    collides with it at rest and would be left out of the checks whole
  //    (CollisionWorld leaves out pairs colliding at the rest configuration).
  //    Instead its end there is drawn back along its axis by the sum of the
  //    radii and kRestClearance: the sphere holds what was given up, and since
  //    the joint's point is fixed in both links the pair stays that far apart
  //    whatever the joints do. Capsules that meet each other across a joint
  //    are not trimmed: their distance changes as the joint bends, and
  //    trimming for one pose would only move the contact to another (a pair
  //    that collides at rest so is left out, with its reason, and flags the scene).
  Data data(model);
  forwardKinematics(model, restConfiguration(model), data);
  for (size_t s = n_given; s < out.size(); ++s) {
    if ((seg[s].second - seg[s].first).norm() != 0.0) continue;  // spheres only
    const Eigen::Vector3d centre = data.world_T_body[static_cast<size_t>(out[s].body)].act(out[s].shape.pose.p);
    for (size_t k = n_given; k < out.size(); ++k) {
      const auto& [a0, b0] = seg[k];
      const double len = (b0 - a0).norm();
      if (len == 0.0 || out[k].body == out[s].body || adjacentBodies(model, out[k].body, out[s].body)) continue;
      const Pose3d& T = data.world_T_body[static_cast<size_t>(out[k].body)];
      const bool at_a = (T.act(a0) - centre).norm() < rule.min_segment, at_b = (T.act(b0) - centre).norm() < rule.min_segment;
      if (!at_a && !at_b) continue;
      // Keep the capsule at least half its length (the rest is the sphere's).
      const double cut = std::min(out[s].shape.radius + out[k].shape.radius + kRestClearance, 0.5 * len);
      const Eigen::Vector3d u = (b0 - a0) / len;
      const Eigen::Vector3d a = at_a ? Eigen::Vector3d(a0 + cut * u) : a0, b = at_b ? Eigen::Vector3d(b0 - cut * u) : b0;
      seg[k] = {a, b};
      out[k].shape = Shape::capsuleBetween(out[k].shape.name, a, b, out[k].shape.radius);
    }
  }
  // 4. A fitted capsule that still overlaps, at rest, a shape of a link that
  //    is not its neighbour (capsules that meet across a short wrist or elbow
  //    offset, a hand folded back at rest, siblings leaving one point) is split
  //    along its axis where its swept sphere comes within kSplitClearance of
  //    that shape: the pieces are capsules over consecutive parts of the same
  //    segment with the same radius, so together they are exactly the
  //    original capsule (coverage is unchanged), and the pieces outside the
  //    overlapping interval are at least kSplitClearance clear of the whole
  //    other shape at rest. CollisionWorld then leaves out only the piece
  //    pairs that overlap at rest (the joint region, where the kinematics and
  //    not the geometry keeps the links apart) and checks every other piece
  //    pair of the two links (docs/collision.md, "Coverage").
  splitRestOverlaps(model, rule, data, n_given, &out);
  return out;
}

// ---- FCL ------------------------------------------------------------------------

#if IKBENCH_HAVE_FCL
struct CollisionWorld::Fcl {
  std::vector<std::shared_ptr<fcl::CollisionGeometryd>> links, obstacles;
  std::vector<Eigen::Isometry3d> obstacle_tf;
};
#else
struct CollisionWorld::Fcl {};
#endif

namespace {

#if IKBENCH_HAVE_FCL
std::shared_ptr<fcl::CollisionGeometryd> fclGeometry(const Shape& s) {
  switch (s.kind) {
    case ShapeKind::kBox: return std::make_shared<fcl::Boxd>(s.size);
    case ShapeKind::kSphere: return std::make_shared<fcl::Sphered>(s.radius);
    case ShapeKind::kCapsule:
      // FCL's capsule of length 0 is a degenerate case its GJK handles poorly:
      // a sphere is the same shape.
      if (s.length <= 0.0) return std::make_shared<fcl::Sphered>(s.radius);
      return std::make_shared<fcl::Capsuled>(s.radius, s.length);
    case ShapeKind::kCylinder: return std::make_shared<fcl::Cylinderd>(s.radius, s.length);
    case ShapeKind::kMesh: {
      if (s.convex) {
        // A hull: FCL's solid convex polytope, faces as [3, i, j, k, ...].
        auto vertices = std::make_shared<std::vector<Eigen::Vector3d>>(s.mesh->vertices);
        auto faces = std::make_shared<std::vector<int>>();
        faces->reserve(4 * s.mesh->triangles.size());
        for (const auto& t : s.mesh->triangles) faces->insert(faces->end(), {3, t[0], t[1], t[2]});
        return std::make_shared<fcl::Convexd>(vertices, static_cast<int>(s.mesh->triangles.size()), faces);
      }
      auto m = std::make_shared<fcl::BVHModel<fcl::OBBRSSd>>();
      std::vector<fcl::Triangle> tris;
      tris.reserve(s.mesh->triangles.size());
      for (const auto& t : s.mesh->triangles) tris.emplace_back(t[0], t[1], t[2]);
      m->beginModel();
      m->addSubModel(s.mesh->vertices, tris);
      m->endModel();
      return m;
    }
  }
  return nullptr;
}

#endif

void checkShape(const Shape& s, const std::string& what) {
  auto bad = [&](const std::string& msg) {
    throw std::invalid_argument(fmt::format("{} '{}' ({}): {}", what, s.name, toString(s.kind), msg));
  };
  if (!s.pose.R.allFinite() || !s.pose.p.allFinite()) bad("pose is not finite");
  // Beyond kMaxShapeExtent the exact check's arithmetic overflows (FCL's GJK
  // squares coordinates; at 1e308 it stops on an assertion): refused here, so
  // no reader hands FCL such a shape.
  const auto extreme = [](double v) { return !(std::abs(v) <= CollisionWorld::kMaxShapeExtent); };
  if (extreme(s.pose.p.cwiseAbs().maxCoeff()))
    bad(fmt::format("position beyond {} m from the origin", CollisionWorld::kMaxShapeExtent));
  if (extreme(s.size.cwiseAbs().maxCoeff()) || extreme(s.radius) || extreme(s.length))
    bad(fmt::format("a size beyond {} m", CollisionWorld::kMaxShapeExtent));
  if (s.mesh)
    for (const Eigen::Vector3d& v : s.mesh->vertices)
      if (!v.allFinite() || extreme(v.cwiseAbs().maxCoeff()))
        bad(fmt::format("a vertex that is not finite or beyond {} m", CollisionWorld::kMaxShapeExtent));
  switch (s.kind) {
    case ShapeKind::kBox:
      if (!(s.size.minCoeff() > 0.0) || !s.size.allFinite()) bad("box sizes must be finite and > 0");
      break;
    case ShapeKind::kSphere:
      if (!(s.radius > 0.0) || !std::isfinite(s.radius)) bad("radius must be finite and > 0");
      break;
    case ShapeKind::kCapsule:
    case ShapeKind::kCylinder:
      if (!(s.radius > 0.0) || !std::isfinite(s.radius)) bad("radius must be finite and > 0");
      if (!(s.length >= 0.0) || !std::isfinite(s.length) || (s.kind == ShapeKind::kCylinder && !(s.length > 0.0)))
        bad("length must be finite and >= 0 (> 0 for a cylinder)");
      break;
    case ShapeKind::kMesh:
      if (!s.mesh || s.mesh->triangles.empty()) bad("mesh has no triangles");
      for (const auto& t : s.mesh->triangles)
        if (t.minCoeff() < 0 || t.maxCoeff() >= static_cast<int>(s.mesh->vertices.size()))
          bad("a triangle names a vertex the mesh does not have");
      break;
  }
}

std::pair<Eigen::Vector3d, double> boundingSphere(const ApproxShape& s) {
  if (s.is_box) return {s.box.pose.p, s.box.half.norm()};
  return {0.5 * (s.capsule.a + s.capsule.b), 0.5 * (s.capsule.b - s.capsule.a).norm() + s.capsule.radius};
}

}  // namespace

CollisionWorld::CollisionWorld(std::shared_ptr<const Model> model, std::vector<LinkShape> links,
                               std::vector<Shape> obstacles,
                               const std::vector<std::pair<std::string, std::string>>& disabled, std::string scene_name,
                               AvoidanceParameters avoid, PairRule rule,
                               const std::optional<std::vector<CollisionPair>>& recorded,
                               std::vector<std::string> recorded_reasons,
                               std::vector<ExcludedShapePair> recorded_excluded)
    : model_(std::move(model)),
      links_(std::move(links)),
      obstacles_(std::move(obstacles)),
      scene_name_(std::move(scene_name)),
      avoid_(avoid),
      fcl_(std::make_unique<Fcl>()) {
  if (!model_) throw std::invalid_argument("collision world: no model");
  const Model& m = *model_;
  if (!(avoid_.security_distance >= 0.0 && avoid_.influence_distance > avoid_.security_distance &&
        avoid_.damper_gain > 0.0 && avoid_.damper_gain <= 1.0))
    throw std::invalid_argument(fmt::format(
        "collision world: avoidance parameters need 0 <= security_distance ({}) < influence_distance ({}) and "
        "damper_gain ({}) in (0, 1]",
        avoid_.security_distance, avoid_.influence_distance, avoid_.damper_gain));
  for (const LinkShape& l : links_) {
    if (l.body < 0 || l.body >= m.numJoints())
      throw std::invalid_argument(fmt::format("link shape '{}': body {} is not in the model", l.shape.name, l.body));
    checkShape(l.shape, "link shape");
    link_approx_.push_back(approximate(l.shape));
    link_bound_.push_back(boundingSphere(link_approx_.back()));
#if IKBENCH_HAVE_FCL
    fcl_->links.push_back(fclGeometry(l.shape));
#endif
  }
  computeCoverage();
  std::set<std::string> obstacle_names;
  for (const Shape& o : obstacles_) {
    checkShape(o, "obstacle");
    if (!obstacle_names.insert(o.name).second)
      throw std::invalid_argument(fmt::format("obstacle '{}': a second obstacle of this name", o.name));
    obstacle_approx_.push_back(approximate(o));
    obstacle_bound_.push_back(boundingSphere(obstacle_approx_.back()));
#if IKBENCH_HAVE_FCL
    fcl_->obstacles.push_back(fclGeometry(o));
    fcl_->obstacle_tf.push_back(o.pose.toIsometry());
#endif
  }
  // The scene's disabled pairs, by name: a body (all its shapes) or an obstacle.
  std::set<std::pair<int, int>> off_self;      // body pairs (lo, hi)
  std::set<std::pair<int, int>> off_obstacle;  // (body, obstacle)
  auto obstacleIndex = [&](const std::string& n) {
    for (size_t i = 0; i < obstacles_.size(); ++i)
      if (obstacles_[i].name == n) return static_cast<int>(i);
    return -1;
  };
  for (const auto& [x, y] : disabled) {
    const int bx = m.bodyIndex(x), by = m.bodyIndex(y), ox = obstacleIndex(x), oy = obstacleIndex(y);
    if (bx >= 0 && by >= 0) {
      off_self.insert({std::min(bx, by), std::max(bx, by)});
    } else if (bx >= 0 && oy >= 0) {
      off_obstacle.insert({bx, oy});
    } else if (by >= 0 && ox >= 0) {
      off_obstacle.insert({by, ox});
    } else {
      throw std::invalid_argument(fmt::format(
          "disabled pair ['{}', '{}']: expected two links of the model or a link and an obstacle of the scene", x, y));
    }
    disabled_.emplace_back(x, y);
  }
  if (rule == PairRule::kAsRecorded && !recorded_reasons.empty()) {
    if (recorded_reasons.size() != disabled_.size())
      throw std::invalid_argument(fmt::format("disabled_reasons: {} reasons for {} disabled pairs",
                                              recorded_reasons.size(), disabled_.size()));
    for (size_t k = 0; k < recorded_reasons.size(); ++k) {
      const std::string& r = recorded_reasons[k];
      if (r != kDisabledAdjacent && r != kDisabledScene && r != kDisabledOverlap && r != kDisabledAlways)
        throw std::invalid_argument(fmt::format("disabled_reasons[{}]: '{}': expected one of {}, {}, {}, {}", k, r,
                                                kDisabledAdjacent, kDisabledScene, kDisabledOverlap, kDisabledAlways));
    }
    disabled_reason_ = std::move(recorded_reasons);
  } else {
    disabled_reason_.assign(disabled_.size(), rule == PairRule::kAsRecorded ? "" : kDisabledScene);
  }
  // Adjacent bodies.
  for (int b = 0; b < m.numJoints(); ++b)
    if (const int p = m.parent(b); p >= 0 && off_self.insert({p, b}).second)
      disabled_.emplace_back(m.bodyName(p), m.bodyName(b)), disabled_reason_.emplace_back(kDisabledAdjacent);
  for (int i = 0; i < static_cast<int>(links_.size()); ++i) {
    const int bi = links_[static_cast<size_t>(i)].body;
    // A body no joint moves (the base, what is fixed to it) is as static as
    // the obstacles: the pair cannot change, so it is not a question for IK.
    if (m.supportingJoints(bi).empty()) continue;
    for (int o = 0; o < static_cast<int>(obstacles_.size()); ++o)
      if (!off_obstacle.count({bi, o})) pairs_.push_back({i, o, true});
  }
  // A world read back from a results file: its disabled pairs are the whole
  // record of what the run left out, taken as they are. Deriving them again
  // would let a doctored scene (an obstacle moved onto the robot) drop its own
  // pairs as "always colliding" and pass every answer.
  if (rule == PairRule::kAsRecorded) {
    for (int i = 0; i < static_cast<int>(links_.size()); ++i)
      for (int j = i + 1; j < static_cast<int>(links_.size()); ++j) {
        const int bi = links_[static_cast<size_t>(i)].body, bj = links_[static_cast<size_t>(j)].body;
        if (bi != bj && !off_self.count({std::min(bi, bj), std::max(bi, bj)})) pairs_.push_back({i, j, false});
      }
    // The shape pairs the run left out on their own: shapes of two links of
    // the scene, each once, for the one reason it derives (overlap at rest).
    std::set<std::pair<int, int>> excluded;
    const int n_shapes = static_cast<int>(links_.size());
    for (size_t k = 0; k < recorded_excluded.size(); ++k) {
      const ExcludedShapePair& e = recorded_excluded[k];
      auto bad = [&](const std::string& why) {
        throw std::invalid_argument(fmt::format("excluded_pairs[{}]: [{}, {}, \"{}\"]: {}", k, e.a, e.b, e.reason, why));
      };
      if (!(0 <= e.a && e.a < e.b && e.b < n_shapes))
        bad(fmt::format("expected two link shapes of the scene's {}, the first of lower index", n_shapes));
      if (links_[static_cast<size_t>(e.a)].body == links_[static_cast<size_t>(e.b)].body) bad("two shapes of one link");
      if (e.reason != kDisabledOverlap) bad(fmt::format("expected the reason '{}'", kDisabledOverlap));
      if (!excluded.insert({e.a, e.b}).second) bad("listed twice");
      if (recorded)
        for (const CollisionPair& p : *recorded)
          if (!p.obstacle && p.a == e.a && p.b == e.b) bad("also among the checked pairs");
    }
    excluded_ = std::move(recorded_excluded);
    if (!recorded) {
      std::erase_if(pairs_, [&](const CollisionPair& p) { return !p.obstacle && excluded.count({p.a, p.b}); });
      return;
    }
    // The checked pairs as the run recorded them (shape by shape: a pair of
    // links disabled by name may still have shape pairs that were checked),
    // each naming shapes and obstacles of this scene, and leaving out no
    // pair the scene does not disable.
    std::set<std::tuple<int, int, bool>> must, seen;
    for (const CollisionPair& p : pairs_)
      if (p.obstacle || !excluded.count({p.a, p.b})) must.insert({p.a, p.b, p.obstacle});
    const int n_links = static_cast<int>(links_.size()), n_obs = static_cast<int>(obstacles_.size());
    for (size_t k = 0; k < recorded->size(); ++k) {
      const CollisionPair& p = (*recorded)[k];
      auto bad = [&](const std::string& why) {
        throw std::invalid_argument(fmt::format("pairs[{}]: [{}, {}, \"{}\"]: {}", k, p.a, p.b,
                                                p.obstacle ? "obstacle" : "link", why));
      };
      if (p.a < 0 || p.a >= n_links) bad(fmt::format("link shape {} is not one of the scene's {}", p.a, n_links));
      if (p.obstacle && (p.b < 0 || p.b >= n_obs))
        bad(fmt::format("obstacle {} is not one of the scene's {} obstacles", p.b, n_obs));
      if (!p.obstacle && !(p.a < p.b && p.b < n_links))
        bad(fmt::format("expected two link shapes of the scene's {}, the first of lower index", n_links));
      if (!p.obstacle && links_[static_cast<size_t>(p.a)].body == links_[static_cast<size_t>(p.b)].body)
        bad("two shapes of one link");
      if (!seen.insert({p.a, p.b, p.obstacle}).second) bad("listed twice");
    }
    for (const auto& [a, b, obstacle] : must)
      if (!seen.count({a, b, obstacle}))
        throw std::invalid_argument(fmt::format(
            "pairs: leaves out link shape {} with {} {}, which the scene does not disable: not a record of a run", a,
            obstacle ? "obstacle" : "link shape", b));
    pairs_ = *recorded;
    return;
  }
  // Self pairs, less those that collide at the rest configuration (restConfiguration).
  Data data(m);
  forwardKinematics(m, restConfiguration(m), data);
  // A link pair all of whose shape pairs collide at rest is left out whole
  // (MoveIt's "default" pairs); one with some shape pairs clear (split
  // capsules, fitLinkCapsules) leaves out only the colliding shape pairs.
  std::map<std::pair<int, int>, std::vector<std::pair<int, int>>> at_rest;  // link pair -> colliding shape pairs
  std::map<std::pair<int, int>, int> shape_pairs;                            // link pair -> its shape pairs
  for (int i = 0; i < static_cast<int>(links_.size()); ++i)
    for (int j = i + 1; j < static_cast<int>(links_.size()); ++j) {
      const int bi = links_[static_cast<size_t>(i)].body, bj = links_[static_cast<size_t>(j)].body;
      const std::pair<int, int> key{std::min(bi, bj), std::max(bi, bj)};
      if (bi == bj || off_self.count(key)) continue;
      ++shape_pairs[key];
      pairs_.push_back({i, j, false});
      bool colliding = false;
      exactPair(data, static_cast<int>(pairs_.size()) - 1, &colliding);
      if (colliding) {
        pairs_.pop_back();
        at_rest[key].emplace_back(i, j);
      }
    }
  for (const auto& [key, shapes] : at_rest) {
    if (static_cast<int>(shapes.size()) == shape_pairs[key]) {
      disabled_.emplace_back(m.bodyName(key.first), m.bodyName(key.second));
      disabled_reason_.emplace_back(kDisabledOverlap);
      continue;
    }
    for (const auto& [i, j] : shapes) {
      ExcludedShapePair e{i, j, kDisabledOverlap};
      // The joint on the path between the two links nearest the overlap.
      const int bi = links_[static_cast<size_t>(i)].body, bj = links_[static_cast<size_t>(j)].body;
      const ApproxShape wi = transformed(link_approx_[static_cast<size_t>(i)], data.world_T_body[static_cast<size_t>(bi)]);
      const ApproxShape wj = transformed(link_approx_[static_cast<size_t>(j)], data.world_T_body[static_cast<size_t>(bj)]);
      const ClosestPoints cp = wi.is_box ? closestPoints(wj.capsule, wi) : closestPoints(wi.capsule, wj);
      const std::vector<int> path = pathBodies(m, bi, bj);
      for (int x : path) {
        const Eigen::Vector3d o = data.world_T_body[static_cast<size_t>(x)].p;
        const double d = std::max((cp.on_a - o).norm(), (cp.on_b - o).norm());
        if (e.joint < 0 || d < e.joint_distance) e.joint = x, e.joint_distance = d;
      }
      excluded_.push_back(e);
    }
  }
  // Pairs that collide in every one of kAlwaysSamples seeded random
  // configurations within the limits (the first moving link of an arm
  // standing on a table, turning on it): a constant of the scene, not a
  // question for IK.
  std::vector<char> always(pairs_.size(), 1);
  Rng rng(kAlwaysSeed);
  for (int k = 0; k < kAlwaysSamples; ++k) {
    forwardKinematics(m, randomConfiguration(m, rng), data);
    for (int i = 0; i < static_cast<int>(pairs_.size()); ++i) {
      if (!always[static_cast<size_t>(i)]) continue;
      bool colliding = false;
      exactPair(data, i, &colliding);
      always[static_cast<size_t>(i)] = colliding;
    }
  }
  // An obstacle pair may be "always" only for a link one joint from a static
  // body: it turns in place on what it is mounted on (the arm's first link on
  // the table top). Any other link that collides with an obstacle in every
  // sampled configuration means an obstacle that encloses or pins the robot:
  // dropping the pair would call every answer collision-free, so the scene is
  // refused, naming the pairs.
  std::vector<std::string> swallowed;
  for (size_t i = 0; i < pairs_.size(); ++i) {
    const CollisionPair& p = pairs_[i];
    if (!always[i] || !p.obstacle) continue;
    if (m.supportingJoints(links_[static_cast<size_t>(p.a)].body).size() > 1) swallowed.push_back(pairName(static_cast<int>(i)));
  }
  if (!swallowed.empty()) {
    std::string list;
    for (size_t k = 0; k < swallowed.size() && k < 4; ++k) list += (k ? ", " : "") + swallowed[k];
    if (swallowed.size() > 4) list += fmt::format(" and {} more", swallowed.size() - 4);
    throw std::invalid_argument(fmt::format(
        "{} link-obstacle pair(s) collide in every one of {} sampled configurations ({}): an obstacle encloses or "
        "pins the robot, so no answer could be collision-free; move or shrink it, or list a pair in "
        "disabled_pairs where the contact is intended",
        swallowed.size(), kAlwaysSamples, list));
  }
  std::vector<CollisionPair> kept;
  for (size_t i = 0; i < pairs_.size(); ++i) {
    if (!always[i]) {
      kept.push_back(pairs_[i]);
      continue;
    }
    const CollisionPair& p = pairs_[i];
    disabled_.emplace_back(m.bodyName(links_[static_cast<size_t>(p.a)].body),
                           p.obstacle ? obstacles_[static_cast<size_t>(p.b)].name
                                      : m.bodyName(links_[static_cast<size_t>(p.b)].body));
    disabled_reason_.emplace_back(kDisabledAlways);
  }
  pairs_ = std::move(kept);
}

CollisionWorld::~CollisionWorld() = default;

// ---- coverage ---------------------------------------------------------------------

void CollisionWorld::computeCoverage() {
  const Model& m = *model_;
  // The points of each moving body's segments (body frame), five per segment.
  std::vector<std::vector<Eigen::Vector3d>> points(static_cast<size_t>(m.numJoints()));
  for (int b = 0; b < m.numJoints(); ++b) {
    if (m.supportingJoints(b).empty()) continue;
    LinkCoverage c;
    c.body = b;
    for (const LinkShape& l : links_) c.shapes += l.body == b;
    coverage_.push_back(c);
    points[static_cast<size_t>(b)].push_back(Eigen::Vector3d::Zero());
    for (int ch : m.children(b))
      for (int k = 1; k <= 4; ++k) points[static_cast<size_t>(b)].push_back(0.25 * k * m.parentTJoint(ch).p);
  }
  if (coverage_.empty()) return;
  std::vector<char> covered(coverage_.size(), 1);
  Data data(m);
  Rng rng(kCoverSeed);
  for (int sample = 0; sample <= kCoverSamples; ++sample) {
    forwardKinematics(m, sample == 0 ? restConfiguration(m) : randomConfiguration(m, rng), data);
    std::vector<ApproxShape> world;
    for (size_t i = 0; i < links_.size(); ++i)
      world.push_back(transformed(link_approx_[i], data.world_T_body[static_cast<size_t>(links_[i].body)]));
    for (size_t k = 0; k < coverage_.size(); ++k) {
      LinkCoverage& c = coverage_[k];
      for (const Eigen::Vector3d& p : points[static_cast<size_t>(c.body)]) {
        const Eigen::Vector3d x = data.world_T_body[static_cast<size_t>(c.body)].act(p);
        // A shape of a neighbour (parent or child) first: it holds the point
        // whatever the configuration; another link's only where it passes.
        int holder = -1;
        for (int pass = 0; pass < 2 && holder < 0; ++pass)
          for (size_t i = 0; i < world.size() && holder < 0; ++i) {
            const int o = links_[i].body;
            const bool near = o == c.body || o == m.parent(c.body) || m.parent(o) == c.body;
            if ((pass == 0) == near && pointDistance(world[i], x) <= 1.5 * kRestClearance) holder = static_cast<int>(i);
          }
        if (holder < 0) covered[k] = 0;
        if (sample == 0 && p.isZero() && c.shapes == 0 && holder >= 0) c.covered_by = links_[static_cast<size_t>(holder)].body;
      }
    }
  }
  for (size_t k = 0; k < coverage_.size(); ++k) coverage_[k].covered = covered[k] && (coverage_[k].shapes > 0 || coverage_[k].covered_by >= 0);
}

std::vector<std::string> CollisionWorld::uncoveredLinks() const {
  std::vector<std::string> out;
  for (const LinkCoverage& c : coverage_)
    if (!c.covered) out.push_back(model_->bodyName(c.body));
  return out;
}

std::vector<std::pair<std::string, std::string>> CollisionWorld::restOverlaps() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t k = 0; k < disabled_.size(); ++k)
    if (disabled_reason_[k] == kDisabledOverlap) out.push_back(disabled_[k]);
  return out;
}

std::string CollisionWorld::coverageWarning() const {
  std::string out;
  if (const auto u = uncoveredLinks(); !u.empty())
    out = fmt::format("moving link(s) without a shape that covers them: {}", fmt::join(u, ", "));
  if (const auto o = restOverlaps(); !o.empty()) {
    std::vector<std::string> names;
    for (const auto& [a, b] : o) names.push_back(a + "~" + b);
    out += fmt::format("{}link pair(s) never checked because they collide at rest: {}", out.empty() ? "" : "; ",
                       fmt::join(names, ", "));
  }
  return out;
}

std::string CollisionWorld::describeExcluded(const ExcludedShapePair& e) const {
  std::string text = fmt::format("{}~{}: {}", linkShapeName(e.a), linkShapeName(e.b), e.reason);
  if (e.joint >= 0)
    text += fmt::format(", {:.3g} m from joint {}", e.joint_distance, model_->joint(e.joint).name);
  return text;
}

std::string CollisionWorld::describeLink(int body) const {
  std::vector<std::string> parts;
  for (const LinkShape& l : links_) {
    if (l.body != body) continue;
    const Shape& s = l.shape;
    const std::string from = l.fitted ? "" : " (description)";
    switch (s.kind) {
      case ShapeKind::kSphere: parts.push_back(fmt::format("sphere r={:.3g}{}", s.radius, from)); break;
      case ShapeKind::kCapsule: parts.push_back(fmt::format("capsule r={:.3g} l={:.3g}{}", s.radius, s.length, from)); break;
      case ShapeKind::kCylinder: parts.push_back(fmt::format("cylinder r={:.3g} l={:.3g}{}", s.radius, s.length, from)); break;
      case ShapeKind::kBox: parts.push_back(fmt::format("box {:.3g}x{:.3g}x{:.3g}{}", s.size.x(), s.size.y(), s.size.z(), from)); break;
      case ShapeKind::kMesh: parts.push_back(fmt::format("{} {} triangles", s.convex ? "hull" : "mesh", s.mesh->triangles.size())); break;
    }
  }
  std::string text = parts.empty() ? "" : fmt::format("{}", fmt::join(parts, ", "));
  for (const LinkCoverage& c : coverage_) {
    if (c.body != body) continue;
    if (parts.empty())
      text = c.covered_by >= 0 ? fmt::format("inside {}'s shape", model_->bodyName(c.covered_by)) : "none";
    if (!c.covered) text += " [not covered]";
  }
  return parts.empty() && text.empty() ? "none (no joint moves it)" : text;
}

std::map<std::string, int> CollisionWorld::geometryCounts() const {
  std::map<std::string, int> out;
  for (const LinkShape& l : links_)
    ++out[l.fitted ? "capsules" : l.shape.kind == ShapeKind::kMesh ? (l.shape.convex ? "hull" : "mesh") : "primitives"];
  return out;
}

std::string CollisionWorld::geometrySummary() const {
  std::string out;
  for (const char* k : {"mesh", "hull", "primitives", "capsules"})
    if (const auto counts = geometryCounts(); counts.count(k))
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", k, counts.at(k));
  return out.empty() ? "none" : out;
}

std::string CollisionWorld::linkShapeName(int link) const {
  const LinkShape& l = links_[static_cast<size_t>(link)];
  int k = 0;
  for (int i = 0; i < link; ++i) k += links_[static_cast<size_t>(i)].body == l.body;
  const std::string& body = model_->bodyName(l.body);
  return k == 0 ? body : fmt::format("{}#{}", body, k);
}

std::string CollisionWorld::pairName(int pair) const {
  const CollisionPair& p = pairs_[static_cast<size_t>(pair)];
  return linkShapeName(p.a) + "~" + (p.obstacle ? obstacles_[static_cast<size_t>(p.b)].name : linkShapeName(p.b));
}

double CollisionWorld::exactPair(const Data& data, int pair, bool* colliding) const {
#if !IKBENCH_HAVE_FCL
  // No FCL in this build (the playground): the enclosing approximations.
  const double d = approximateDistance(data, pair).distance;
  *colliding = d <= 0.0;
  return d;
#else
  const CollisionPair& p = pairs_[static_cast<size_t>(pair)];
  const LinkShape& la = links_[static_cast<size_t>(p.a)];
  const Pose3d pa = data.world_T_body[static_cast<size_t>(la.body)] * la.shape.pose;
  const fcl::CollisionGeometryd* ga = fcl_->links[static_cast<size_t>(p.a)].get();
  const fcl::CollisionGeometryd* gb;
  const Shape* sb;
  Pose3d pb;
  if (p.obstacle) {
    gb = fcl_->obstacles[static_cast<size_t>(p.b)].get();
    sb = &obstacles_[static_cast<size_t>(p.b)];
    pb = sb->pose;
  } else {
    const LinkShape& lb = links_[static_cast<size_t>(p.b)];
    gb = fcl_->links[static_cast<size_t>(p.b)].get();
    sb = &lb.shape;
    pb = data.world_T_body[static_cast<size_t>(lb.body)] * lb.shape.pose;
  }
  const Eigen::Isometry3d ta = pa.toIsometry(), tb = pb.toIsometry();
  // FCL's default GJK tolerance (1e-6) leaves box distances 1e-5 m off; 1e-9 makes them exact to rounding.
  fcl::DistanceRequestd dreq(false, false, 0.0, 0.0, 1e-9);
  fcl::DistanceResultd dres;
  const double d = fcl::distance(ga, ta, gb, tb, dreq, dres);
  // A triangle mesh (FCL's BVH) that crosses the other shape gets a distance
  // of about 0 from FCL, not a negative one (at times a denormal above 0):
  // near 0, FCL's collision query decides.
  const bool surface = (la.shape.kind == ShapeKind::kMesh && !la.shape.convex) ||
                       (sb->kind == ShapeKind::kMesh && !sb->convex);
  constexpr double kSurfaceContact = 1e-9;  // [m]
  if (d > (surface ? kSurfaceContact : 0.0)) {
    *colliding = false;
    return d;
  }
  if (surface) {
    fcl::CollisionRequestd probe(1, false);
    fcl::CollisionResultd hit;
    fcl::collide(ga, ta, gb, tb, probe, hit);
    if (!hit.isCollision()) {
      *colliding = false;
      return std::max(d, 0.0);
    }
  }
  *colliding = true;
  // In contact: minus the penetration depth, the shortest translation that
  // separates the shapes (depth.h: exact for spheres, capsules and boxes, a
  // cylinder as its circumscribed prism). A mesh has no such depth here, and
  // FCL's contact depth of its deepest triangle stands in (docs/collision.md).
  if (const std::optional<double> depth = penetrationDepth(la.shape, pa, *sb, pb)) return -*depth;
  fcl::CollisionRequestd creq(1, true);
  fcl::CollisionResultd cres;
  fcl::collide(ga, ta, gb, tb, creq, cres);
  if (!cres.isCollision()) return 0.0;  // touching: distance 0, counted as a collision
  return -std::abs(cres.getContact(0).penetration_depth);
#endif
}

bool CollisionWorld::exactCheckIsFcl() {
#if IKBENCH_HAVE_FCL
  return true;
#else
  return false;
#endif
}

CollisionReport CollisionWorld::check(const Data& data) const {
  CollisionReport r;
  r.min_clearance = std::numeric_limits<double>::infinity();
  for (int i = 0; i < static_cast<int>(pairs_.size()); ++i) {
    bool colliding = false;
    const double d = exactPair(data, i, &colliding);
    if (colliding) r.collision_free = false;
    if (d < r.min_clearance || r.pair_index < 0) {
      r.min_clearance = d;
      r.pair_index = i;
    }
  }
  if (r.pair_index >= 0) r.pair = pairName(r.pair_index);
  return r;
}

bool CollisionWorld::collides(const Data& data) const {
  for (int i = 0; i < static_cast<int>(pairs_.size()); ++i) {
    if (approximateDistance(data, i, kFastDistanceSlack).distance > kFastDistanceSlack) continue;
    bool colliding = false;
    exactPair(data, i, &colliding);
    if (colliding) return true;
  }
  return false;
}

ClosestPoints CollisionWorld::approximateDistance(const Data& data, int pair, double cutoff) const {
  const CollisionPair& p = pairs_[static_cast<size_t>(pair)];
  const LinkShape& la = links_[static_cast<size_t>(p.a)];
  if (std::isfinite(cutoff)) {
    const auto& [ca, ra] = link_bound_[static_cast<size_t>(p.a)];
    const Eigen::Vector3d wa = data.world_T_body[static_cast<size_t>(la.body)].act(ca);
    Eigen::Vector3d wb;
    double rb;
    if (p.obstacle && obstacle_approx_[static_cast<size_t>(p.b)].is_box) {
      // A box's bounding sphere is loose (a table): the point's distance to
      // the box itself is as cheap and far tighter.
      ClosestPoints bound;
      bound.distance = boxSignedDistance(obstacle_approx_[static_cast<size_t>(p.b)].box, wa) - ra;
      if (bound.distance > cutoff) return bound;
      wb = wa;
      rb = 0.0;
    } else if (p.obstacle) {
      wb = obstacle_bound_[static_cast<size_t>(p.b)].first;
      rb = obstacle_bound_[static_cast<size_t>(p.b)].second;
    } else {
      const auto& [cb, r] = link_bound_[static_cast<size_t>(p.b)];
      wb = data.world_T_body[static_cast<size_t>(links_[static_cast<size_t>(p.b)].body)].act(cb);
      rb = r;
    }
    ClosestPoints bound;
    bound.distance = (wa - wb).norm() - ra - rb;
    if (bound.distance > cutoff) return bound;
  }
  const ApproxShape a = transformed(link_approx_[static_cast<size_t>(p.a)], data.world_T_body[static_cast<size_t>(la.body)]);
  if (a.is_box) {
    // A link given as a box (URDF <collision><box>): its enclosing capsule
    // along the longest side, so that one side of every pair is a capsule.
    const Box& bx = a.box;
    int k = 0;
    bx.half.maxCoeff(&k);
    const Eigen::Vector3d axis = bx.pose.R.col(k) * bx.half[k];
    Eigen::Vector3d rest = bx.half;
    rest[k] = 0.0;
    const Capsule c{bx.pose.p - axis, bx.pose.p + axis, rest.norm()};
    return p.obstacle ? closestPoints(c, obstacle_approx_[static_cast<size_t>(p.b)])
                      : closestPoints(c, transformed(link_approx_[static_cast<size_t>(p.b)],
                                                     data.world_T_body[static_cast<size_t>(links_[static_cast<size_t>(p.b)].body)]));
  }
  if (p.obstacle) return closestPoints(a.capsule, obstacle_approx_[static_cast<size_t>(p.b)]);
  const LinkShape& lb = links_[static_cast<size_t>(p.b)];
  return closestPoints(a.capsule, transformed(link_approx_[static_cast<size_t>(p.b)],
                                              data.world_T_body[static_cast<size_t>(lb.body)]));
}

void CollisionWorld::approximateDistances(const Data& data, double cutoff, std::vector<ClosestPoints>* out) const {
  out->resize(pairs_.size());
  for (int i = 0; i < static_cast<int>(pairs_.size()); ++i)
    (*out)[static_cast<size_t>(i)] = approximateDistance(data, i, cutoff);
}

}  // namespace ikbench
