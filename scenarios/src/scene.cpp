// Scene files (scene.h); JSON read with the suites' typed field access.
#include "ikbench/scenarios/scene.h"

#include <fmt/format.h>

#include <set>

#include "ikbench/kinematics/rng.h"
#include "json_input.h"

namespace ikbench {
using namespace json_input;  // Path, Ctx

namespace {

Eigen::Vector3d vec3(const Ctx& c, const json& o, const Path& p, const std::string& key,
                     std::optional<Eigen::Vector3d> dflt, double lo, double hi) {
  const json* v = c.find(o, key);
  if (!v) {
    if (dflt) return *dflt;
    c.fail(p, fmt::format("missing field '{}' (expected an array [x, y, z] of numbers in [{}, {}])", key, lo, hi));
  }
  if (!v->is_array() || v->size() != 3)
    c.fail(p / key, fmt::format("expected an array [x, y, z] of numbers in [{}, {}], got {}", lo, hi, describe(*v)));
  Eigen::Vector3d out;
  for (size_t k = 0; k < 3; ++k) {
    const json& x = (*v)[k];
    if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() < lo || x.get<double>() > hi)
      c.fail(p / key / k, fmt::format("expected a number in [{}, {}], got {}", lo, hi, describe(x)));
    out[static_cast<Eigen::Index>(k)] = x.get<double>();
  }
  return out;
}

Pose3d placement(const Ctx& c, const json& o, const Path& p) {
  Pose3d pose;
  pose.p = vec3(c, o, p, "position", Eigen::Vector3d::Zero(), -kMaxSceneExtent, kMaxSceneExtent);
  const Eigen::Vector3d rpy = vec3(c, o, p, "rpy", Eigen::Vector3d::Zero(), -10.0, 10.0);
  // URDF's convention: R = Rz(yaw) Ry(pitch) Rx(roll).
  pose.R = (Eigen::AngleAxisd(rpy.z(), Eigen::Vector3d::UnitZ()) * Eigen::AngleAxisd(rpy.y(), Eigen::Vector3d::UnitY()) *
            Eigen::AngleAxisd(rpy.x(), Eigen::Vector3d::UnitX()))
               .toRotationMatrix();
  return pose;
}

Shape parseObstacle(const Ctx& c, const json& o, const Path& p, std::size_t* triangles) {
  c.checkObject(o, p);
  const std::string type = c.string(o, p, "type", std::nullopt);
  const std::string name = c.string(o, p, "name", std::nullopt);
  if (name.empty() || name.find_first_of(",~\"\n") != std::string::npos)
    c.fail(p / "name", fmt::format("expected a non-empty name without ',', '~', quotes or line breaks, got '{}'", name));
  const Pose3d pose = placement(c, o, p);
  constexpr double kMin = 1e-6;
  if (type == "box") {
    c.allowKeys(o, p, {"name", "type", "size", "position", "rpy"});
    return Shape::box(name, vec3(c, o, p, "size", std::nullopt, kMin, kMaxSceneExtent), pose);
  }
  if (type == "sphere") {
    c.allowKeys(o, p, {"name", "type", "radius", "position", "rpy"});
    return Shape::sphere(name, c.number(o, p, "radius", std::nullopt, kMin, kMaxSceneExtent), pose);
  }
  if (type == "capsule" || type == "cylinder") {
    c.allowKeys(o, p, {"name", "type", "radius", "length", "position", "rpy"});
    const double r = c.number(o, p, "radius", std::nullopt, kMin, kMaxSceneExtent);
    const double l = c.number(o, p, "length", std::nullopt, type == "cylinder" ? kMin : 0.0, kMaxSceneExtent);
    return type == "capsule" ? Shape::capsule(name, r, l, pose) : Shape::cylinder(name, r, l, pose);
  }
  if (type == "mesh") {
    c.allowKeys(o, p, {"name", "type", "file", "scale", "position", "rpy"});
    const std::string file = c.resolve(o, p, "file");
    const double scale = c.number(o, p, "scale", 1.0, kMin, 1e6);
    TriangleMesh mesh;
    try {
      (void)readInputFile(file, "STL file");  // a regular file within the size limit
      mesh = readStl(file, kMaxSceneTriangles - *triangles);
    } catch (const std::exception& e) {
      c.fail(p / "file", e.what());
    }
    for (auto& v : mesh.vertices) {
      v *= scale;
      if (v.cwiseAbs().maxCoeff() > kMaxSceneExtent)
        c.fail(p / "scale", fmt::format("a vertex lies farther than {} m from the mesh's origin", kMaxSceneExtent));
    }
    *triangles += mesh.triangles.size();
    Shape s;
    s.kind = ShapeKind::kMesh;
    s.name = name;
    s.pose = pose;
    s.file = file;
    s.mesh = std::make_shared<const TriangleMesh>(std::move(mesh));
    return s;
  }
  c.fail(p / "type", fmt::format("unknown obstacle type '{}' (expected one of: box, sphere, capsule, cylinder, mesh)", type));
}

// "random_boxes": a seeded field of axis-aligned boxes, uniform positions in
// [min, max] and sizes in [min_size, max_size], none whose bounding sphere
// reaches into the sphere of clear_radius around the origin (the robot's base).
void randomBoxes(const Ctx& c, const json& o, const Path& p, std::vector<Shape>* out) {
  c.checkObject(o, p);
  c.allowKeys(o, p, {"count", "seed", "min", "max", "min_size", "max_size", "clear_radius"});
  const int count = static_cast<int>(c.integer(o, p, "count", std::nullopt, 0, kMaxSceneObstacles));
  const std::uint64_t seed = static_cast<std::uint64_t>(c.integer(o, p, "seed", 0, 0, std::numeric_limits<std::int64_t>::max()));
  const Eigen::Vector3d lo = vec3(c, o, p, "min", std::nullopt, -kMaxSceneExtent, kMaxSceneExtent);
  const Eigen::Vector3d hi = vec3(c, o, p, "max", std::nullopt, -kMaxSceneExtent, kMaxSceneExtent);
  const Eigen::Vector3d slo = vec3(c, o, p, "min_size", std::nullopt, 1e-6, kMaxSceneExtent);
  const Eigen::Vector3d shi = vec3(c, o, p, "max_size", std::nullopt, 1e-6, kMaxSceneExtent);
  const double clear = c.number(o, p, "clear_radius", 0.0, 0.0, kMaxSceneExtent);
  for (int k = 0; k < 3; ++k) {
    if (lo[k] > hi[k]) c.fail(p / "max", "expected max >= min in every coordinate");
    if (slo[k] > shi[k]) c.fail(p / "max_size", "expected max_size >= min_size in every coordinate");
  }
  if (out->size() + static_cast<size_t>(count) > static_cast<size_t>(kMaxSceneObstacles))
    c.fail(p / "count", fmt::format("more than {} obstacles in one scene (the limit)", kMaxSceneObstacles));
  Rng rng(seed);
  constexpr int kDraws = 1000;
  for (int i = 0; i < count; ++i) {
    for (int draw = 0;; ++draw) {
      if (draw >= kDraws)
        c.fail(p / "clear_radius",
               fmt::format("box {}: no position in [min, max] keeps clear of the radius in {} draws", i, kDraws));
      Eigen::Vector3d centre, size;
      for (int k = 0; k < 3; ++k) centre[k] = rng.uniform(lo[k], hi[k]);
      for (int k = 0; k < 3; ++k) size[k] = rng.uniform(slo[k], shi[k]);
      if (centre.norm() - 0.5 * size.norm() < clear) continue;
      Pose3d pose;
      pose.p = centre;
      out->push_back(Shape::box(fmt::format("box{}", i), size, pose));
      break;
    }
  }
}

}  // namespace

Scene loadScene(const std::string& path) { return parseScene(readInputFile(path, "scene file"), path); }

Scene parseScene(const std::string& text, const std::string& path) {
  const Ctx c = inputContext(text, path);
  const json root = parseJsonInput(c);
  const Path top;
  c.checkObject(root, top);
  c.allowKeys(root, top, {"name", "description", "units", "obstacles", "random_boxes", "robot", "disabled_pairs", "srdf", "avoid"});
  Scene s;
  s.source = path;
  s.name = c.string(root, top, "name", fs::path(path).stem().string());
  if (s.name.empty() || s.name.find_first_of(",\"\n") != std::string::npos)
    c.fail(top / "name", "expected a non-empty name without ',', quotes or line breaks");
  s.description = c.string(root, top, "description", "");
  const std::string units = c.string(root, top, "units", "m");
  if (units != "m" && units != "reach") c.fail(top / "units", fmt::format("expected 'm' or 'reach', got '{}'", units));
  s.units_reach = units == "reach";
  std::size_t triangles = 0;
  std::set<std::string> names;
  if (const json* obs = c.find(root, "obstacles")) {
    const Path op = top / "obstacles";
    if (!obs->is_array()) c.fail(op, fmt::format("expected an array of obstacles, got {}", describe(*obs)));
    if (obs->size() > static_cast<size_t>(kMaxSceneObstacles))
      c.fail(op, fmt::format("{} obstacles, more than the {} a scene takes", obs->size(), kMaxSceneObstacles));
    for (size_t k = 0; k < obs->size(); ++k) {
      s.obstacles.push_back(parseObstacle(c, (*obs)[k], op / k, &triangles));
      if (!names.insert(s.obstacles.back().name).second)
        c.fail(op / k / "name", fmt::format("a second obstacle named '{}'", s.obstacles.back().name));
    }
  }
  if (const json* rb = c.find(root, "random_boxes")) {
    randomBoxes(c, *rb, top / "random_boxes", &s.obstacles);
    for (size_t k = 0; k < s.obstacles.size(); ++k)
      if (k >= names.size() && !names.insert(s.obstacles[k].name).second)
        c.fail(top / "random_boxes", fmt::format("a listed obstacle is named '{}' like a random box", s.obstacles[k].name));
  }
  if (const json* r = c.find(root, "robot")) {
    const Path rp = top / "robot";
    c.checkObject(*r, rp);
    c.allowKeys(*r, rp, {"fraction", "min_radius", "max_radius", "links"});
    CapsuleRule& rule = s.capsules;
    rule.fraction = c.number(*r, rp, "fraction", rule.fraction, 0.0, 10.0);
    rule.min_radius = c.number(*r, rp, "min_radius", rule.min_radius, 1e-4, 10.0);
    rule.max_radius = c.number(*r, rp, "max_radius", rule.max_radius, rule.min_radius, 10.0);
    if (const json* links = c.find(*r, "links")) {
      const Path lp = rp / "links";
      c.checkObject(*links, lp);
      for (auto it = links->begin(); it != links->end(); ++it) {
        c.checkObject(*it, lp / it.key());
        c.allowKeys(*it, lp / it.key(), {"radius"});
        rule.link_radius[it.key()] = c.number(*it, lp / it.key(), "radius", std::nullopt, 1e-4, 10.0);
      }
    }
  }
  if (const json* d = c.find(root, "disabled_pairs")) {
    const Path dp = top / "disabled_pairs";
    if (!d->is_array()) c.fail(dp, fmt::format("expected an array of [name, name] pairs, got {}", describe(*d)));
    if (d->size() > 1000000) c.fail(dp, "more than 1000000 pairs");
    for (size_t k = 0; k < d->size(); ++k) {
      const json& pr = (*d)[k];
      if (!pr.is_array() || pr.size() != 2 || !pr[0].is_string() || !pr[1].is_string())
        c.fail(dp / k, fmt::format("expected a pair [\"link\", \"link or obstacle\"], got {}", describe(pr)));
      s.disabled.emplace_back(pr[0].get<std::string>(), pr[1].get<std::string>());
    }
  }
  if (c.find(root, "srdf")) s.srdf = c.resolve(root, top, "srdf");
  if (const json* a = c.find(root, "avoid")) {
    const Path ap = top / "avoid";
    c.checkObject(*a, ap);
    c.allowKeys(*a, ap, {"influence_distance", "security_distance", "damper_gain"});
    s.avoid.influence_distance = c.number(*a, ap, "influence_distance", s.avoid.influence_distance, 1e-6, 10.0);
    s.avoid.security_distance =
        c.number(*a, ap, "security_distance", s.avoid.security_distance, 0.0, s.avoid.influence_distance);
    if (!(s.avoid.security_distance < s.avoid.influence_distance))
      c.fail(ap / "security_distance", "expected security_distance < influence_distance");
    s.avoid.damper_gain = c.number(*a, ap, "damper_gain", s.avoid.damper_gain, 1e-6, 1.0);
  }
  return s;
}

double modelReach(const Model& model) {
  std::vector<double> dist(static_cast<size_t>(model.numJoints()), 0.0);
  double reach = 0.0;
  for (int j = 0; j < model.numJoints(); ++j) {
    const int p = model.parent(j);
    dist[static_cast<size_t>(j)] = (p >= 0 ? dist[static_cast<size_t>(p)] : 0.0) + model.parentTJoint(j).p.norm();
    reach = std::max(reach, dist[static_cast<size_t>(j)]);
  }
  return reach;
}

std::shared_ptr<const CollisionWorld> buildCollisionWorld(const Scene& scene, const std::shared_ptr<const Model>& model,
                                                          std::vector<LinkShape> link_shapes,
                                                          const std::vector<std::pair<std::string, std::string>>& more_disabled) {
  std::vector<Shape> obstacles = scene.obstacles;
  std::vector<std::pair<std::string, std::string>> disabled = scene.disabled;
  disabled.insert(disabled.end(), more_disabled.begin(), more_disabled.end());
  if (scene.units_reach) {
    const double k = modelReach(*model);
    if (!(k > 0.0)) throw SuiteError(fmt::format("{}: units 'reach', but the robot's reach is 0", scene.source));
    for (Shape& o : obstacles) {
      o.pose.p *= k;
      o.size *= k;
      o.radius *= k;
      o.length *= k;
      if (o.mesh) {
        auto m = std::make_shared<TriangleMesh>(*o.mesh);
        for (auto& v : m->vertices) v *= k;
        o.mesh = std::move(m);
      }
    }
  }
  try {
    return std::make_shared<const CollisionWorld>(model, fitLinkCapsules(*model, scene.capsules, std::move(link_shapes)),
                                                  std::move(obstacles), disabled, scene.name, scene.avoid);
  } catch (const std::invalid_argument& e) {
    throw SuiteError(fmt::format("{}: {}", scene.source, e.what()));
  }
}

}  // namespace ikbench
