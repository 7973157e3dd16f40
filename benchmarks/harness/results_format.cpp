#include "harness/results_format.h"

#include "harness/gzip_stream.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

namespace ikbench::harness {
using nlohmann::json;

namespace {
template <std::size_t N>
std::vector<std::string> names(const std::array<std::string_view, N>& a) {
  return {a.begin(), a.end()};
}
}  // namespace

const std::vector<std::string> kSolveColumns = names(results_schema::kSolvesLeadingColumns);
const std::vector<std::string> kSolveExtraColumns = names(results_schema::kSolvesExtraColumns);
const std::vector<std::string> kTraceColumns = names(results_schema::kTraceColumns);
const std::vector<std::string> kSolutionColumns = names(results_schema::kSolutionColumns);
const std::vector<std::string> kTimeColumns = names(results_schema::kTimeColumns);
const std::vector<std::string> kQualityColumns = names(results_schema::kQualityColumns);
const std::vector<std::string> kCollisionColumns = names(results_schema::kCollisionColumns);
const std::vector<std::string> kExternalColumns = names(results_schema::kExternalColumns);
const std::vector<std::string> kLevelColumns = names(results_schema::kLevelColumns);
const std::vector<std::string> kOptionalSolveColumns = [] {
  std::vector<std::string> c = kQualityColumns;
  c.insert(c.end(), kCollisionColumns.begin(), kCollisionColumns.end());
  c.insert(c.end(), kExternalColumns.begin(), kExternalColumns.end());
  c.insert(c.end(), kLevelColumns.begin(), kLevelColumns.end());
  return c;
}();
const std::vector<std::string> kOutcomeNames = names(results_schema::kOutcomes);

std::vector<std::string> solveHeader() {
  std::vector<std::string> h = kSolveColumns;
  h.insert(h.end(), kSolveExtraColumns.begin(), kSolveExtraColumns.end());
  return h;
}

std::string numText(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::format("{}", x);
}

std::string csvField(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::vector<std::string> parseCsvLine(std::string_view line, const std::string& where) {
  std::vector<std::string> out;
  std::string field;
  size_t i = 0;
  for (;;) {
    field.clear();
    if (i < line.size() && line[i] == '"') {
      ++i;
      for (;;) {
        if (i >= line.size()) throw ResultsError(fmt::format("{}: unterminated quoted field", where));
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      if (i < line.size() && line[i] != ',')
        throw ResultsError(fmt::format("{}: text after a quoted field", where));
    } else {
      while (i < line.size() && line[i] != ',') field += line[i++];
    }
    out.push_back(field);
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  return out;
}

std::string configText(const Eigen::VectorXd& q, int digits) {
  std::string out;
  for (Eigen::Index k = 0; k < q.size(); ++k) {
    if (k) out += ' ';
    out += digits > 0 ? fmt::format("{:.{}g}", q[k], digits) : numText(q[k]);
  }
  return out;
}

bool parseResultNumber(std::string_view t, double* out) {
  if (t.empty()) return false;
  const bool negative = t.front() == '-';
  std::string_view body = t.front() == '-' || t.front() == '+' ? t.substr(1) : t;
  auto lower = [](std::string_view a, std::string_view word) {
    if (a.size() != word.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(a[i])) != word[i]) return false;
    return true;
  };
  if (lower(body, "nan")) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (lower(body, "inf") || lower(body, "infinity")) {
    *out = negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  // digits [. digits] | . digits, then an optional exponent: nothing else
  // (from_chars alone would also take "inf" spellings and hexadecimal).
  size_t i = 0, digits = 0;
  while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i, ++digits;
  if (i < body.size() && body[i] == '.') {
    ++i;
    while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < body.size() && std::isdigit(static_cast<unsigned char>(body[i]))) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  if (i != body.size()) return false;
  const std::string text(t.front() == '+' ? t.substr(1) : t);
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);  // the syntax is decimal: strtod reads it as from_chars would
  return end == text.c_str() + text.size();
}

Eigen::VectorXd parseConfigText(std::string_view text, const std::string& where) {
  std::vector<double> v;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size()) break;
    size_t j = i;
    while (j < text.size() && text[j] != ' ') ++j;
    double x = 0.0;
    if (!parseResultNumber(text.substr(i, j - i), &x))
      throw ResultsError(fmt::format("{}: '{}' in a configuration is not a number", where, text.substr(i, j - i)));
    v.push_back(x);
    i = j;
  }
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

// ---- JSON of models and problems -------------------------------------------------

namespace {

json vec(const Eigen::Vector3d& v) { return json::array({v.x(), v.y(), v.z()}); }

json quatJson(const Eigen::Matrix3d& R) {
  Eigen::Quaterniond qt(R);
  qt.normalize();
  if (qt.w() < 0) qt.coeffs() = -qt.coeffs();  // one representative of +-q
  return json::array({qt.x(), qt.y(), qt.z(), qt.w()});
}

// JSON has no infinity: an infinite limit is null.
json limits(const Eigen::VectorXd& v, int from, int n) {
  json a = json::array();
  for (int k = 0; k < n; ++k) {
    const double x = v[from + k];
    a.push_back(std::isfinite(x) ? json(x) : json(nullptr));
  }
  return a;
}

[[noreturn]] void fail(const std::string& where, const std::string& field, const std::string& what) {
  throw ResultsError(fmt::format("{}: {}: {}", where, field, what));
}

const json& member(const json& j, const char* key, const std::string& where) {
  if (!j.is_object()) fail(where, key, "expected an object");
  auto it = j.find(key);
  if (it == j.end()) fail(where, key, "missing");
  return *it;
}

double number(const json& j, const std::string& where, const std::string& field) {
  if (!j.is_number()) fail(where, field, fmt::format("expected a number, got {}", j.type_name()));
  return j.get<double>();
}

Eigen::VectorXd numbers(const json& j, int n, const std::string& where, const std::string& field,
                        double null_value = std::numeric_limits<double>::quiet_NaN()) {
  if (!j.is_array() || static_cast<int>(j.size()) != n)
    fail(where, field, fmt::format("expected an array of {} numbers", n));
  Eigen::VectorXd v(n);
  for (int k = 0; k < n; ++k) {
    if (j[k].is_null() && !std::isnan(null_value)) {
      v[k] = null_value;
    } else {
      v[k] = number(j[k], where, fmt::format("{}[{}]", field, k));
    }
  }
  return v;
}

Eigen::Matrix3d rotationFromQuat(const json& j, const std::string& where, const std::string& field) {
  const Eigen::VectorXd c = numbers(j, 4, where, field);
  Eigen::Quaterniond qt(c[3], c[0], c[1], c[2]);
  const double n = qt.norm();
  if (!(std::abs(n - 1.0) < 1e-6)) fail(where, field, fmt::format("quaternion of norm {} (expected 1)", n));
  qt.normalize();
  return qt.toRotationMatrix();
}

// ---- scenes in models.json ----------------------------------------------------
// {"name", "obstacles": [shape], "links": [shape + "body"], "disabled_pairs":
// [[a, b]], "pairs": [[link index, index, "obstacle" | "link"]], "avoid": {...}}
// with shape = {"name", "type", "size" | "radius" + "length", "xyz",
// "quat_xyzw"} (+ "vertices", "triangles", optional "convex" and "file" for a
// mesh), in the frame of the
// world (obstacles) or of the body (links). "pairs" are the checked pairs,
// for readers that do not rebuild them; "geometry" counts the link shapes per
// kind (CollisionWorld::geometryCounts), for readers that show it.
// "disabled_reasons" (optional; runs before it have none) says why each of
// disabled_pairs is left out (the schema's disabled_reasons); "coverage"
// (optional, derived, not read back) says what covers each moving link, which
// are not covered, which pairs collide at rest and whether the scene is
// flagged for either (CollisionWorld::coverage, docs/collision.md).

json shapeToJson(const Shape& s) {
  json j = {{"name", s.name}, {"type", toString(s.kind)}, {"xyz", vec(s.pose.p)}, {"quat_xyzw", quatJson(s.pose.R)}};
  switch (s.kind) {
    case ShapeKind::kBox: j["size"] = vec(s.size); break;
    case ShapeKind::kSphere: j["radius"] = s.radius; break;
    case ShapeKind::kCapsule:
    case ShapeKind::kCylinder:
      j["radius"] = s.radius;
      j["length"] = s.length;
      break;
    case ShapeKind::kMesh: {
      json v = json::array(), t = json::array();
      for (const auto& x : s.mesh->vertices) v.push_back(vec(x));
      for (const auto& x : s.mesh->triangles) t.push_back({x[0], x[1], x[2]});
      j["vertices"] = v;
      j["triangles"] = t;
      if (!s.file.empty()) j["file"] = s.file;
      if (s.convex) j["convex"] = true;  // checked as a solid convex polytope (a hull)
      break;
    }
  }
  return j;
}

json sceneToJson(const CollisionWorld& w) {
  json obstacles = json::array(), links = json::array(), disabled = json::array(), pairs = json::array();
  for (const Shape& s : w.obstacles()) obstacles.push_back(shapeToJson(s));
  for (const LinkShape& l : w.links()) {
    json j = shapeToJson(l.shape);
    j["body"] = w.model().bodyName(l.body);
    j["fitted"] = l.fitted;
    links.push_back(j);
  }
  for (const auto& [a, b] : w.disabledPairs()) disabled.push_back({a, b});
  json reasons = json::array();
  for (const std::string& r : w.disabledReasons()) reasons.push_back(r);
  const bool all_reasons = std::none_of(w.disabledReasons().begin(), w.disabledReasons().end(),
                                        [](const std::string& r) { return r.empty(); });
  json covered = json::object(), uncovered = json::array(), overlap = json::array();
  for (const LinkCoverage& c : w.coverage()) covered[w.model().bodyName(c.body)] = w.describeLink(c.body);
  for (const std::string& n : w.uncoveredLinks()) uncovered.push_back(n);
  for (const auto& [a, b] : w.restOverlaps()) overlap.push_back({a, b});
  for (const CollisionPair& p : w.pairs()) pairs.push_back({p.a, p.b, p.obstacle ? "obstacle" : "link"});
  const AvoidanceParameters& a = w.avoidance();
  json geometry = json::object();  // link shapes per kind: what the exact check saw
  for (const auto& [kind, n] : w.geometryCounts()) geometry[kind] = n;
  json out = {{"name", w.sceneName()},
              {"geometry", geometry},
              {"obstacles", obstacles},
              {"links", links},
              {"disabled_pairs", disabled},
              {"pairs", pairs},
              {"coverage",
               {{"links", covered},
                {"uncovered", uncovered},
                {"overlap_at_rest", overlap},
                {"flagged", !uncovered.empty() || !overlap.empty()}}},
              {"avoid",
               {{"influence_distance", a.influence_distance},
                {"security_distance", a.security_distance},
                {"damper_gain", a.damper_gain}}}};
  if (all_reasons) out["disabled_reasons"] = reasons;
  return out;
}

Shape shapeFromJson(const json& j, const std::string& w) {
  Shape s;
  const json& name = member(j, "name", w);
  const json& type = member(j, "type", w);
  if (!name.is_string() || !type.is_string()) fail(w, "name/type", "expected strings");
  s.name = name.get<std::string>();
  const auto k = kShapeKindNames.find(type.get<std::string>());
  if (!k) fail(w, "type", fmt::format("expected one of: {}", kShapeKindNames.names()));
  s.kind = *k;
  s.pose.p = numbers(member(j, "xyz", w), 3, w, "xyz");
  s.pose.R = rotationFromQuat(member(j, "quat_xyzw", w), w, "quat_xyzw");
  auto real = [&](const char* key) {
    const json& v = member(j, key, w);
    if (!v.is_number()) fail(w, key, "expected a number");
    return v.get<double>();
  };
  switch (s.kind) {
    case ShapeKind::kBox: s.size = numbers(member(j, "size", w), 3, w, "size"); break;
    case ShapeKind::kSphere: s.radius = real("radius"); break;
    case ShapeKind::kCapsule:
    case ShapeKind::kCylinder:
      s.radius = real("radius");
      s.length = real("length");
      break;
    case ShapeKind::kMesh: {
      const json& v = member(j, "vertices", w);
      const json& t = member(j, "triangles", w);
      if (!v.is_array() || !t.is_array()) fail(w, "vertices/triangles", "expected arrays");
      auto mesh = std::make_shared<TriangleMesh>();
      for (size_t i = 0; i < v.size(); ++i) mesh->vertices.push_back(numbers(v[i], 3, w, "vertices"));
      for (size_t i = 0; i < t.size(); ++i) {
        if (!t[i].is_array() || t[i].size() != 3 || !t[i][0].is_number_integer() || !t[i][1].is_number_integer() ||
            !t[i][2].is_number_integer())
          fail(w, "triangles", "expected [i, j, k] vertex indices");
        mesh->triangles.emplace_back(t[i][0].get<int>(), t[i][1].get<int>(), t[i][2].get<int>());
      }
      s.mesh = std::move(mesh);
      if (j.contains("convex") && !j["convex"].is_boolean()) fail(w, "convex", "expected true or false");
      s.convex = j.value("convex", false);
      if (j.contains("file") && !j["file"].is_string()) fail(w, "file", "expected a string");
      s.file = j.value("file", std::string());
      break;
    }
  }
  return s;
}

}  // namespace

std::shared_ptr<const CollisionWorld> sceneFromJson(const json& entry, const std::shared_ptr<const Model>& model,
                                                    const std::string& where) {
  if (!entry.is_object() || !entry.contains("scene")) return nullptr;
  const json& sc = entry["scene"];
  const std::string w = where + ": scene";
  if (!sc.is_object()) fail(where, "scene", "expected an object");
  const json& name = member(sc, "name", w);
  if (!name.is_string()) fail(w, "name", "expected a string");
  std::vector<Shape> obstacles;
  std::vector<LinkShape> links;
  const json& obs = member(sc, "obstacles", w);
  const json& lks = member(sc, "links", w);
  const json& dis = member(sc, "disabled_pairs", w);
  if (!obs.is_array() || !lks.is_array() || !dis.is_array()) fail(w, "obstacles/links/disabled_pairs", "expected arrays");
  for (size_t i = 0; i < obs.size(); ++i) obstacles.push_back(shapeFromJson(obs[i], fmt::format("{}: obstacles[{}]", w, i)));
  for (size_t i = 0; i < lks.size(); ++i) {
    const std::string lw = fmt::format("{}: links[{}]", w, i);
    LinkShape l;
    l.shape = shapeFromJson(lks[i], lw);
    const json& body = member(lks[i], "body", lw);
    l.body = body.is_string() ? model->bodyIndex(body.get<std::string>()) : -1;
    if (l.body < 0) fail(lw, "body", "expected a body of the model");
    if (lks[i].contains("fitted") && !lks[i]["fitted"].is_boolean()) fail(lw, "fitted", "expected true or false");
    l.fitted = lks[i].value("fitted", false);
    links.push_back(std::move(l));
  }
  std::vector<std::pair<std::string, std::string>> disabled;
  for (size_t i = 0; i < dis.size(); ++i) {
    if (!dis[i].is_array() || dis[i].size() != 2 || !dis[i][0].is_string() || !dis[i][1].is_string())
      fail(w, fmt::format("disabled_pairs[{}]", i), "expected a pair of names");
    disabled.emplace_back(dis[i][0].get<std::string>(), dis[i][1].get<std::string>());
  }
  // Why each disabled pair is left out (optional: runs before it have none).
  std::vector<std::string> reasons;
  if (sc.contains("disabled_reasons")) {
    const json& rs = sc["disabled_reasons"];
    if (!rs.is_array() || rs.size() != dis.size())
      fail(w, "disabled_reasons", fmt::format("expected an array of {} reasons, one per disabled pair", dis.size()));
    for (size_t i = 0; i < rs.size(); ++i) {
      if (!rs[i].is_string() ||
          std::find(results_schema::kDisabledReasons.begin(), results_schema::kDisabledReasons.end(), rs[i].get<std::string>()) ==
              results_schema::kDisabledReasons.end())
        fail(w, fmt::format("disabled_reasons[{}]", i),
             fmt::format("expected one of: {}", fmt::join(results_schema::kDisabledReasons, ", ")));
      reasons.push_back(rs[i].get<std::string>());
    }
  }
  if (sc.contains("coverage") && !sc["coverage"].is_object()) fail(w, "coverage", "expected an object");
  AvoidanceParameters avoid;
  if (sc.contains("avoid")) {
    const json& a = sc["avoid"];
    if (!a.is_object()) fail(w, "avoid", "expected an object");
    for (auto [key, field] : {std::pair{"influence_distance", &avoid.influence_distance},
                              std::pair{"security_distance", &avoid.security_distance},
                              std::pair{"damper_gain", &avoid.damper_gain}}) {
      if (!a.contains(key)) continue;
      if (!a[key].is_number() || !std::isfinite(a[key].get<double>()))
        fail(w + ": avoid", key, "expected a finite number");
      *field = a[key].get<double>();
    }
  }
  // The checked pairs as recorded, [link shape, link shape or obstacle, "link" | "obstacle"].
  std::optional<std::vector<CollisionPair>> recorded;
  if (sc.contains("pairs")) {
    const json& prs = sc["pairs"];
    if (!prs.is_array()) fail(w, "pairs", "expected an array");
    recorded.emplace();
    for (size_t i = 0; i < prs.size(); ++i) {
      const json& pr = prs[i];
      if (!pr.is_array() || pr.size() != 3 || !pr[0].is_number_integer() || !pr[1].is_number_integer() ||
          !pr[2].is_string() || (pr[2] != "link" && pr[2] != "obstacle"))
        fail(w, fmt::format("pairs[{}]", i), "expected [link shape index, index, \"link\" | \"obstacle\"]");
      const auto index = [&](const json& v) {
        const std::int64_t x = v.get<std::int64_t>();
        return x < 0 || x > std::numeric_limits<int>::max() ? -1 : static_cast<int>(x);
      };
      recorded->push_back({index(pr[0]), index(pr[1]), pr[2] == "obstacle"});
    }
  }
  try {
    return std::make_shared<const CollisionWorld>(model, std::move(links), std::move(obstacles), disabled,
                                                  name.get<std::string>(), avoid, PairRule::kAsRecorded, recorded,
                                                  std::move(reasons));
  } catch (const std::exception& e) {
    throw ResultsError(fmt::format("{}: {}", w, e.what()));
  }
}

json modelToJson(const Model& model, const std::string& id, const std::string& source, const CollisionWorld* scene) {
  json joints = json::array();
  for (int i = 0; i < model.numJoints(); ++i) {
    const JointSpec& js = model.joint(i);
    const int iv = model.idxV(i), nv = model.jointNv(i);
    joints.push_back({{"name", js.name},
                      {"body", model.bodyName(i)},
                      {"parent", js.parent},
                      {"type", toString(js.type)},
                      {"parent_T_joint", {{"xyz", vec(js.parent_T_joint.p)}, {"quat_xyzw", quatJson(js.parent_T_joint.R)}}},
                      {"axis", vec(js.axis)},
                      {"lower", limits(model.lowerLimits(), iv, nv)},
                      {"upper", limits(model.upperLimits(), iv, nv)},
                      {"weight", limits(model.dofWeights(), iv, nv)},
                      {"idx_q", model.idxQ(i)},
                      {"idx_v", iv}});
    // Inertial data only where present: older readers and massless models
    // see the same joints as before.
    if (js.body_mass != 0.0) {
      joints.back()["mass"] = js.body_mass;
      joints.back()["com"] = vec(js.body_com);
    }
  }
  json out = {{"id", id},
              {"name", model.name()},
              {"source", source.empty() ? json(nullptr) : json(source)},
              {"nq", model.nq()},
              {"nv", model.nv()},
              {"joints", joints}};
  if (scene) out["scene"] = sceneToJson(*scene);
  return out;
}

std::shared_ptr<const Model> modelFromJson(const json& j, const std::string& where) {
  const json& joints = member(j, "joints", where);
  if (!joints.is_array()) fail(where, "joints", "expected an array");
  std::vector<JointSpec> specs;
  for (size_t i = 0; i < joints.size(); ++i) {
    const std::string w = fmt::format("{}: joints[{}]", where, i);
    const json& jj = joints[i];
    JointSpec s;
    const json& name = member(jj, "name", w);
    const json& body = member(jj, "body", w);
    const json& type = member(jj, "type", w);
    if (!name.is_string() || !body.is_string() || !type.is_string()) fail(w, "name/body/type", "expected strings");
    s.name = name.get<std::string>();
    s.body_name = body.get<std::string>();
    const auto t = kJointTypeNames.find(type.get<std::string>());
    if (!t) fail(w, "type", fmt::format("unknown joint type (expected one of: {})", kJointTypeNames.names()));
    s.type = *t;
    const json& parent = member(jj, "parent", w);
    if (!parent.is_number_integer()) fail(w, "parent", "expected an integer");
    s.parent = parent.get<int>();
    const json& rest = member(jj, "parent_T_joint", w);
    s.parent_T_joint.p = numbers(member(rest, "xyz", w), 3, w, "parent_T_joint.xyz");
    s.parent_T_joint.R = rotationFromQuat(member(rest, "quat_xyzw", w), w, "parent_T_joint.quat_xyzw");
    s.axis = numbers(member(jj, "axis", w), 3, w, "axis");
    const int nv = tangentSize(s.type);
    s.lower = numbers(member(jj, "lower", w), nv, w, "lower", -std::numeric_limits<double>::infinity());
    s.upper = numbers(member(jj, "upper", w), nv, w, "upper", std::numeric_limits<double>::infinity());
    s.weight = numbers(member(jj, "weight", w), nv, w, "weight");
    if (jj.contains("mass")) {
      s.body_mass = number(jj["mass"], w, "mass");
      s.body_com = numbers(member(jj, "com", w), 3, w, "com");
    }
    specs.push_back(std::move(s));
  }
  const json& name = member(j, "name", where);
  std::shared_ptr<const Model> model;
  try {
    model = std::make_shared<const Model>(std::move(specs), name.is_string() ? name.get<std::string>() : "");
  } catch (const ModelError& e) {
    throw ResultsError(fmt::format("{}: {}", where, e.what()));
  }
  // The stored sizes and indices are what other readers (the Python library)
  // index configurations with: they must be the model's own.
  auto same = [&](const json& stored, long actual, const std::string& w, const char* field) {
    if (!stored.is_number_integer() || stored.get<long>() != actual)
      fail(w, field, fmt::format("{} does not match the joints (expected {})", stored.dump(), actual));
  };
  same(member(j, "nq", where), model->nq(), where, "nq");
  same(member(j, "nv", where), model->nv(), where, "nv");
  for (size_t i = 0; i < joints.size(); ++i) {
    const std::string w = fmt::format("{}: joints[{}]", where, i);
    same(member(joints[i], "idx_q", w), model->idxQ(static_cast<int>(i)), w, "idx_q");
    same(member(joints[i], "idx_v", w), model->idxV(static_cast<int>(i)), w, "idx_v");
  }
  return model;
}

json problemToJson(const std::string& family, int index, const std::string& model_id, const Problem& problem,
                   bool sequential) {
  const Model& model = *problem.model;
  json goals = json::array();
  for (const Goal& g : problem.goals)
    goals.push_back({{"body", model.bodyName(g.body)},
                     {"body_index", g.body},
                     {"point", vec(g.point)},
                     {"kind", toString(g.kind)},
                     {"target_position", vec(g.target_position)},
                     {"target_quat_xyzw", quatJson(g.target_orientation)},
                     {"weight", g.weight},
                     {"orientation_scale", g.orientation_scale}});
  // Whole-body fields only where used, so plain problems read as before.
  for (size_t k = 0; k < problem.goals.size(); ++k) {
    const Goal& g = problem.goals[k];
    if (g.priority != 0) goals[k]["priority"] = g.priority;
    if (!g.bounded()) continue;
    json b = {{"kind", toString(g.bound.kind)}};
    if (g.bound.kind == BoundKind::kHalfSpaces) {
      json normals = json::array();
      for (Eigen::Index r = 0; r < g.bound.normals.rows(); ++r)
        normals.push_back(vec(Eigen::Vector3d(g.bound.normals.row(r).transpose())));
      b["normals"] = normals;
      json offsets = json::array();
      for (Eigen::Index r = 0; r < g.bound.offsets.size(); ++r) offsets.push_back(g.bound.offsets[r]);
      b["offsets"] = offsets;
    } else {
      b["centre"] = vec(g.bound.centre);
      b["radius"] = g.bound.radius;
    }
    goals[k]["bound"] = b;
  }
  json q0 = json::array();
  for (Eigen::Index k = 0; k < problem.q0.size(); ++k) q0.push_back(problem.q0[k]);
  json out = {{"family", family}, {"problem", index}, {"name", problem.name}, {"model", model_id},
              {"sequential", sequential}, {"q0", q0}, {"goals", goals}};
  if (problem.collision) out["scene"] = problem.collision->sceneName();  // the model's scene in models.json
  return out;
}

Problem problemFromJson(const json& j, const std::map<std::string, std::shared_ptr<const Model>>& models,
                        const std::string& where) {
  Problem p;
  const json& model = member(j, "model", where);
  if (!model.is_string()) fail(where, "model", "expected a model id");
  auto it = models.find(model.get<std::string>());
  if (it == models.end()) fail(where, "model", fmt::format("unknown model id '{}'", model.get<std::string>()));
  p.model = it->second;
  const json& name = member(j, "name", where);
  p.name = name.is_string() ? name.get<std::string>() : "";
  const json& q0 = member(j, "q0", where);
  p.q0 = numbers(q0, p.model->nq(), where, "q0");
  const json& goals = member(j, "goals", where);
  if (!goals.is_array()) fail(where, "goals", "expected an array");
  for (size_t k = 0; k < goals.size(); ++k) {
    const std::string w = fmt::format("{}: goals[{}]", where, k);
    const json& gj = goals[k];
    Goal g;
    const json& body = member(gj, "body", w);
    if (!body.is_string()) fail(w, "body", "expected a body name");
    g.body = p.model->bodyIndex(body.get<std::string>());
    if (g.body < 0) fail(w, "body", fmt::format("no body '{}' in the model", body.get<std::string>()));
    const json& body_index = member(gj, "body_index", w);
    if (!body_index.is_number_integer() || body_index.get<long>() != g.body)
      fail(w, "body_index", fmt::format("{} is not the index of body '{}' ({})", body_index.dump(),
                                        body.get<std::string>(), g.body));
    g.point = numbers(member(gj, "point", w), 3, w, "point");
    const json& kind = member(gj, "kind", w);
    const auto k2 = kind.is_string() ? kGoalKindNames.find(kind.get<std::string>()) : std::nullopt;
    if (!k2) fail(w, "kind", fmt::format("expected one of: {}", kGoalKindNames.names()));
    g.kind = *k2;
    g.target_position = numbers(member(gj, "target_position", w), 3, w, "target_position");
    g.target_orientation = rotationFromQuat(member(gj, "target_quat_xyzw", w), w, "target_quat_xyzw");
    g.weight = number(member(gj, "weight", w), w, "weight");
    g.orientation_scale = number(member(gj, "orientation_scale", w), w, "orientation_scale");
    if (gj.contains("priority")) {
      const json& pr = gj["priority"];
      if (!pr.is_number_integer() || pr.get<long>() < 0 || pr.get<long>() > 1000000)
        fail(w, "priority", fmt::format("{}: expected an integer level >= 0", pr.dump()));
      g.priority = pr.get<int>();
    }
    if (gj.contains("bound")) {
      const std::string wb = w + ": bound";
      const json& b = gj["bound"];
      const json& bk = member(b, "kind", wb);
      const auto k3 = bk.is_string() ? kBoundKindNames.find(bk.get<std::string>()) : std::nullopt;
      if (!k3) fail(wb, "kind", fmt::format("expected one of: {}", kBoundKindNames.names()));
      g.bound.kind = *k3;
      if (g.bound.kind == BoundKind::kHalfSpaces) {
        const json& normals = member(b, "normals", wb);
        if (!normals.is_array() || normals.empty() || normals.size() > 100000)
          fail(wb, "normals", "expected a non-empty array of [x, y, z]");
        g.bound.normals.resize(static_cast<Eigen::Index>(normals.size()), 3);
        for (size_t r = 0; r < normals.size(); ++r)
          g.bound.normals.row(static_cast<Eigen::Index>(r)) =
              numbers(normals[r], 3, wb, fmt::format("normals[{}]", r)).transpose();
        g.bound.offsets = numbers(member(b, "offsets", wb), static_cast<int>(normals.size()), wb, "offsets");
      } else if (g.bound.kind != BoundKind::kNone) {
        g.bound.centre = numbers(member(b, "centre", wb), 3, wb, "centre");
        g.bound.radius = number(member(b, "radius", wb), wb, "radius");
      }
    }
    p.goals.push_back(g);
  }
  std::string why;
  if (!p.isValid(&why)) throw ResultsError(fmt::format("{}: {}", where, why));
  return p;
}

// ---- manifest and reading ---------------------------------------------------------

const std::vector<std::string> kManifestFiles = names(results_schema::kManifestFiles);

std::string compressedName(const std::string& name) { return name + std::string(kGzipSuffix); }

std::string manifestFileOf(const std::string& key) {
  const std::string plain = hasGzipSuffix(key) ? key.substr(0, key.size() - kGzipSuffix.size()) : key;
  return std::find(kManifestFiles.begin(), kManifestFiles.end(), plain) == kManifestFiles.end() ? "" : plain;
}

namespace {


// core's bounded reads (ikbench/core/safe_read.h), their errors as ResultsError.
template <typename F>
void readBlocks(int fd, const std::string& path, F&& take) {
  try {
    ikbench::readBlocks(fd, path, std::forward<F>(take));
  } catch (const InputFileError& e) {
    throw ResultsError(e.what());
  }
}

}  // namespace

int openRegularFile(const std::string& path) {
  try {
    return ikbench::openRegularFile(path);
  } catch (const InputFileError& e) {
    throw ResultsError(e.what());
  }
}

std::string readRegularFile(const std::string& path, std::size_t max_bytes) {
  try {
    return ikbench::readRegularFile(path, max_bytes);
  } catch (const InputFileError& e) {
    throw ResultsError(e.what());
  }
}

std::string readRunFile(const std::string& path, std::size_t max_bytes) {
  if (!hasGzipSuffix(path)) return readRegularFile(path, max_bytes);
  const int fd = openRegularFile(path);
  struct stat st {};
  const std::size_t compressed = ::fstat(fd, &st) == 0 ? static_cast<std::size_t>(st.st_size) : 0;
  const std::size_t ratio_limit = gzipExpansionLimit(compressed);
  const std::size_t limit = std::min(max_bytes, ratio_limit);
  const std::string why = limit == max_bytes ? fmt::format("what a reader takes of this file")
                                             : fmt::format("{} times its {} compressed bytes", kMaxGzipRatio, compressed);
  std::string text;
  GzipReader gz(path, limit, why, [&](const char* p, std::size_t n) { text.append(p, n); });
  readBlocks(fd, path, [&](const char* p, size_t n) { gz.feed(p, n); });
  gz.finish();
  return text;
}

std::string runFilePath(const std::string& dir, const std::string& name) {
  const std::string plain = (std::filesystem::path(dir) / name).string();
  const std::string gz = plain + std::string(kGzipSuffix);
  struct stat st {};
  const bool has_gz = ::lstat(gz.c_str(), &st) == 0, has_plain = ::lstat(plain.c_str(), &st) == 0;
  if (has_gz && has_plain)
    throw ResultsError(fmt::format("{}: both {} and {}{} are here: which one is the run's? (remove the other)", dir,
                                   name, name, kGzipSuffix));
  return has_gz ? gz : plain;
}

json parseJsonText(std::string_view text, const std::string& where) {
  const json::parser_callback_t bound = [&](int depth, json::parse_event_t, json&) {
    if (depth > kMaxResultsJsonNesting)
      throw ResultsError(fmt::format("{}: nested deeper than {} arrays and objects", where, kMaxResultsJsonNesting));
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), bound);
  } catch (const json::exception& e) {
    // The library's message names the byte where parsing stopped.
    std::string what = e.what();
    if (const size_t at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    throw ResultsError(fmt::format("{}: not valid JSON: {}", where, what));
  }
}

std::string jsonDifference(const json& a, const json& b, const std::string& path) {
  if (a == b) return "";
  auto shorten = [](const json& j) {
    std::string t = j.dump(-1, ' ', false, json::error_handler_t::replace);
    return t.size() > 60 ? t.substr(0, 57) + "..." : t;
  };
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      if (!b.contains(key)) return fmt::format("{}.{}: {} vs (absent)", path, key, shorten(value));
      if (std::string d = jsonDifference(value, b[key], path + "." + key); !d.empty()) return d;
    }
    for (const auto& [key, value] : b.items())
      if (!a.contains(key)) return fmt::format("{}.{}: (absent) vs {}", path, key, shorten(value));
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return fmt::format("{}: {} vs {} entries", path, a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      if (std::string d = jsonDifference(a[i], b[i], fmt::format("{}[{}]", path, i)); !d.empty()) return d;
  }
  return fmt::format("{}: {} vs {}", path, shorten(a), shorten(b));
}

std::string fnv1a64File(const std::string& path) { return manifestEntry(path).at("fnv1a64").get<std::string>(); }

namespace {

bool endsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

long rowsOfLines(std::string_view name, long lines) {
  if (hasGzipSuffix(name)) name.remove_suffix(kGzipSuffix.size());
  return endsWith(name, ".csv") ? std::max(0L, lines - 1) : endsWith(name, ".jsonl") ? lines : 0;
}

}  // namespace

long manifestRows(const std::string& name, std::string_view content) {
  return rowsOfLines(name, static_cast<long>(std::count(content.begin(), content.end(), '\n')));
}

json manifestEntry(const std::string& path, bool rows) {
  long lines = 0, bytes = 0;
  std::uint64_t h = 0xcbf29ce484222325ULL;
  const bool gzip = hasGzipSuffix(path);
  const bool inflate = gzip && rows;
  const int fd = openRegularFile(path);
  struct stat st {};
  const std::size_t compressed = ::fstat(fd, &st) == 0 ? static_cast<std::size_t>(st.st_size) : 0;
  // The rows of a compressed file are its content's lines, counted as it is
  // decompressed (never held whole).
  GzipReader content(path, gzipExpansionLimit(compressed),
                     fmt::format("{} times its {} compressed bytes", kMaxGzipRatio, compressed),
                     [&](const char* p, std::size_t n) { lines += std::count(p, p + n, '\n'); });
  readBlocks(fd, path, [&](const char* p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      if (!gzip) lines += p[i] == '\n';
      h ^= static_cast<unsigned char>(p[i]);
      h *= 0x100000001b3ULL;
    }
    if (inflate) content.feed(p, n);
    bytes += static_cast<long>(n);
  });
  if (inflate) content.finish();
  json entry = {{"bytes", bytes}, {"fnv1a64", fmt::format("{:016x}", h)}};
  if (!gzip || rows) entry["rows"] = rowsOfLines(path, lines);
  return entry;
}

}  // namespace ikbench::harness
