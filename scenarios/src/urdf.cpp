// URDF loader: a TinyXML pass that validates the file with line numbers
// (urdfdom reports problems only through console_bridge, without lines, and
// accepts some values we must reject, e.g. NaN), then urdfdom's own parser
// for the model, then the conversion to an ikbench Model (see urdf.h).
#include "ikbench/scenarios/urdf.h"

#include <console_bridge/console.h>
#include <fmt/format.h>
#include <tinyxml.h>
#include <urdf_parser/urdf_parser.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/scenarios/input_limits.h"
#include "ikbench/scenarios/mesh_file.h"
#include "ikbench/scenarios/scene.h"
#include "xml_input.h"

namespace ikbench {
namespace fs = std::filesystem;
namespace {

// Collects urdfdom's console_bridge messages while it parses (the handler is
// process-global, hence the mutex).
class CaptureHandler : public console_bridge::OutputHandler {
 public:
  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_WARN) messages += (messages.empty() ? "" : "; ") + text;
  }
  std::string messages;
};
std::mutex g_urdfdom_mutex;

struct Validator {
  const std::string& source;

  [[noreturn]] void fail(const TiXmlNode* node, const std::string& msg) const {
    if (node) throw SuiteError(fmt::format("{}:{}: {}", source, node->Row(), msg));
    throw SuiteError(fmt::format("{}: {}", source, msg));
  }

  // `count` finite numbers separated by blanks.
  Eigen::VectorXd numbers(const TiXmlElement* e, const char* attr, int count, const std::string& what) const {
    const char* s = e->Attribute(attr);
    if (!s) fail(e, fmt::format("{}: missing attribute '{}' (expected {} numbers)", what, attr, count));
    const std::optional<std::vector<double>> v = parseNumberList(s, count);
    if (!v)
      fail(e, fmt::format("{}: attribute {}=\"{}\": expected {} finite number{}", what, attr, s, count,
                          count > 1 ? "s" : ""));
    if (static_cast<int>(v->size()) != count)
      fail(e, fmt::format("{}: attribute {}=\"{}\": expected {} finite numbers, found {}", what, attr, s, count,
                          v->size()));
    return Eigen::Map<const Eigen::VectorXd>(v->data(), count);
  }
};

}  // namespace

// Element nesting depth, checked on the raw text before any XML parser (both
// TinyXML and urdfdom's parser recurse once per level). Comments, CDATA,
// processing instructions and declarations are skipped; attribute values are
// quoted. Throws with the line of the first element past kMaxXmlNesting.
std::optional<std::vector<double>> parseNumberList(std::string_view text, int max) {
  std::vector<double> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size()) break;
    size_t j = i;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    const char* b = text.data() + i + (text[i] == '+' ? 1 : 0);
    double v = 0.0;
    const auto [ptr, ec] = std::from_chars(b, text.data() + j, v);
    if (ec != std::errc() || ptr != text.data() + j || !std::isfinite(v) || static_cast<int>(out.size()) >= max)
      return std::nullopt;
    out.push_back(v);
    i = j;
  }
  return out;
}

void checkXmlNesting(const std::string& xml, const std::string& source) {
  int depth = 0, line = 1;
  const size_t n = xml.size();
  auto skipPast = [&](size_t i, const char* end) {
    const size_t k = xml.find(end, i);
    const size_t stop = k == std::string::npos ? n : k + std::char_traits<char>::length(end);
    line += static_cast<int>(std::count(xml.begin() + static_cast<std::ptrdiff_t>(i),
                                        xml.begin() + static_cast<std::ptrdiff_t>(stop), '\n'));
    return stop;
  };
  for (size_t i = 0; i < n;) {
    const char c = xml[i];
    if (c == '\n') ++line;
    if (c != '<') {
      ++i;
      continue;
    }
    if (xml.compare(i, 4, "<!--") == 0) {
      i = skipPast(i, "-->");
    } else if (xml.compare(i, 9, "<![CDATA[") == 0) {
      i = skipPast(i, "]]>");
    } else if (xml.compare(i, 2, "<?") == 0) {
      i = skipPast(i, "?>");
    } else if (xml.compare(i, 2, "<!") == 0) {
      i = skipPast(i, ">");
    } else if (xml.compare(i, 2, "</") == 0) {
      --depth;
      i = skipPast(i, ">");
    } else {
      // A start tag: find its end outside quoted attribute values.
      const int start_line = line;
      size_t k = i + 1;
      char quote = 0;
      for (; k < n; ++k) {
        if (xml[k] == '\n') ++line;
        if (quote != 0) {
          if (xml[k] == quote) quote = 0;
        } else if (xml[k] == '"' || xml[k] == '\'') {
          quote = xml[k];
        } else if (xml[k] == '>') {
          break;
        }
      }
      const bool self_closing = k < n && k > i + 1 && xml[k - 1] == '/';
      if (!self_closing && ++depth > kMaxXmlNesting)
        throw SuiteError(fmt::format("{}:{}: XML elements are nested more than {} levels deep (the limit)", source,
                                     start_line, kMaxXmlNesting));
      i = k < n ? k + 1 : n;
    }
  }
}

void parseXml(const std::string& xml, const std::string& source, TiXmlDocument* doc) {
  checkXmlNesting(xml, source);
  std::string padded;
  padded.reserve(xml.size() + 8);
  padded.append(xml).append(8, '\0');
  doc->Parse(padded.c_str());
  if (doc->Error())
    throw SuiteError(
        fmt::format("{}:{}: malformed XML: {} (truncated file?)", source, doc->ErrorRow(), doc->ErrorDesc()));
}

namespace {

Pose3d toPose(const urdf::Pose& p) {
  Pose3d out;
  out.p = Eigen::Vector3d(p.position.x, p.position.y, p.position.z);
  out.R = Eigen::Quaterniond(p.rotation.w, p.rotation.x, p.rotation.y, p.rotation.z).normalized().toRotationMatrix();
  return out;
}

}  // namespace

MeshGeometry parseMeshGeometry(const std::string& text, const std::string& where) {
  if (text == "mesh") return MeshGeometry::kMesh;
  if (text == "hull") return MeshGeometry::kHull;
  if (text == "capsules") return MeshGeometry::kCapsules;
  throw SuiteError(fmt::format("{}: '{}' (expected mesh, hull or capsules)", where, text));
}

std::string toString(MeshGeometry g) {
  switch (g) {
    case MeshGeometry::kMesh: return "mesh";
    case MeshGeometry::kHull: return "hull";
    case MeshGeometry::kCapsules: return "capsules";
  }
  return "mesh";
}

UrdfModel loadUrdf(const std::string& path, const UrdfOptions& options) {
  return parseUrdf(readInputFile(path, "URDF file"), path, options);
}

UrdfModel parseUrdf(const std::string& xml, const std::string& source, const UrdfOptions& options) {
  const Validator v{source};

  // ---- 1. validation with line numbers ----
  TiXmlDocument doc;
  parseXml(xml, source, &doc);
  const TiXmlElement* robot = doc.RootElement();
  if (!robot) throw SuiteError(fmt::format("{}: empty file (expected a <robot> element)", source));
  if (std::string(robot->Value()) != "robot")
    v.fail(robot, fmt::format("expected the root element <robot>, found <{}>", robot->Value()));

  std::map<std::string, int> link_row;
  for (const TiXmlElement* l = robot->FirstChildElement("link"); l; l = l->NextSiblingElement("link")) {
    const char* name = l->Attribute("name");
    if (!name || !*name) v.fail(l, "<link> without a name attribute");
    if (!link_row.emplace(name, l->Row()).second)
      v.fail(l, fmt::format("link '{}' is defined twice (first on line {})", name, link_row[name]));
  }
  if (link_row.empty()) v.fail(robot, "no <link> element (expected at least one)");

  static const std::set<std::string> kTypes = {"revolute", "continuous", "prismatic", "fixed", "floating", "planar"};
  std::map<std::string, std::string> parent_of;  // child link -> parent link
  std::map<std::string, const TiXmlElement*> joint_elem, joint_of_child;
  for (const TiXmlElement* j = robot->FirstChildElement("joint"); j; j = j->NextSiblingElement("joint")) {
    const char* name_c = j->Attribute("name");
    if (!name_c || !*name_c) v.fail(j, "<joint> without a name attribute");
    const std::string name = name_c;
    const std::string what = fmt::format("joint '{}'", name);
    if (joint_elem.count(name))
      v.fail(j, fmt::format("{} is defined twice (first on line {})", what, joint_elem[name]->Row()));
    joint_elem[name] = j;
    if (joint_elem.size() > static_cast<size_t>(kMaxJoints))
      v.fail(j, fmt::format("more than {} joints (the limit)", kMaxJoints));
    const char* type_c = j->Attribute("type");
    const std::string type = type_c ? type_c : "";
    if (!kTypes.count(type))
      v.fail(j,
             fmt::format("{}: unknown type '{}' (expected revolute, continuous, prismatic, fixed, floating or planar)",
                         what, type));
    if (type == "planar") v.fail(j, fmt::format("{}: planar joints are not supported", what));
    std::string link[2];
    const char* tags[2] = {"parent", "child"};
    for (int k = 0; k < 2; ++k) {
      const TiXmlElement* e = j->FirstChildElement(tags[k]);
      if (!e || !e->Attribute("link")) v.fail(j, fmt::format("{}: missing <{} link=\"...\"/>", what, tags[k]));
      link[k] = e->Attribute("link");
      if (!link_row.count(link[k]))
        v.fail(e,
               fmt::format("{}: {} link '{}' is not defined (no <link name=\"{}\">)", what, tags[k], link[k], link[k]));
    }
    if (link[0] == link[1]) v.fail(j, fmt::format("{}: parent and child are the same link '{}'", what, link[0]));
    if (joint_of_child.count(link[1]))
      v.fail(j, fmt::format("{}: link '{}' already has a parent joint '{}' (line {}); a URDF is a tree", what, link[1],
                            joint_of_child[link[1]]->Attribute("name"), joint_of_child[link[1]]->Row()));
    joint_of_child[link[1]] = j;
    parent_of[link[1]] = link[0];
    if (const TiXmlElement* o = j->FirstChildElement("origin")) {
      if (o->Attribute("xyz")) v.numbers(o, "xyz", 3, what + " <origin>");
      if (o->Attribute("rpy")) v.numbers(o, "rpy", 3, what + " <origin>");
    }
    // The axis matters only for moving joints (fixed joints often carry a
    // zero placeholder axis, e.g. Kinova's and Sawyer's URDFs).
    const bool moving = type == "revolute" || type == "continuous" || type == "prismatic";
    if (const TiXmlElement* a = j->FirstChildElement("axis"); a && moving) {
      // The largest component, not the norm: the norm of (1e308, 0, 0) overflows.
      if (a->Attribute("xyz") && v.numbers(a, "xyz", 3, what + " <axis>").cwiseAbs().maxCoeff() < 1e-12)
        v.fail(a, fmt::format("{} <axis>: the axis is zero (expected a non-zero direction)", what));
    }
    const TiXmlElement* lim = j->FirstChildElement("limit");
    if ((type == "revolute" || type == "prismatic") && !lim)
      v.fail(j, fmt::format("{}: a {} joint needs a <limit lower=\"...\" upper=\"...\"/> element", what, type));
    if (lim) {
      double lu[2] = {0, 0};
      const char* la[2] = {"lower", "upper"};
      for (int k = 0; k < 2; ++k)
        if (lim->Attribute(la[k])) lu[k] = v.numbers(lim, la[k], 1, what + " <limit>")[0];
      for (const char* a : {"effort", "velocity"})
        if (lim->Attribute(a)) v.numbers(lim, a, 1, what + " <limit>");
      if ((type == "revolute" || type == "prismatic") && lu[0] > lu[1])
        v.fail(lim, fmt::format("{} <limit>: lower {} > upper {}", what, lu[0], lu[1]));
    }
    if (const TiXmlElement* m = j->FirstChildElement("mimic")) {
      if (!m->Attribute("joint")) v.fail(m, fmt::format("{} <mimic>: missing attribute 'joint'", what));
      for (const char* a : {"multiplier", "offset"})
        if (m->Attribute(a)) v.numbers(m, a, 1, what + " <mimic>");
    }
  }
  for (const auto& [name, j] : joint_elem) {
    if (const TiXmlElement* m = j->FirstChildElement("mimic"); m && !joint_elem.count(m->Attribute("joint")))
      v.fail(m, fmt::format("joint '{}' <mimic>: joint '{}' is not defined", name, m->Attribute("joint")));
  }
  // Every link must reach a single root without meeting itself. Each link is
  // walked up once: a walk stops at the first link already resolved (linear in
  // the number of links).
  std::map<std::string, std::string> root_of;  // resolved link -> its root
  std::string root;
  for (const auto& [link, row] : link_row) {
    std::vector<std::string> path{link};
    std::set<std::string> on_path{link};
    std::string cur = link;
    while (!root_of.count(cur) && parent_of.count(cur)) {
      cur = parent_of[cur];
      if (!on_path.insert(cur).second) {
        std::string chain;
        for (const auto& l : path) chain += l + " -> ";
        throw SuiteError(fmt::format("{}:{}: links form a cycle: {}{} (a URDF must be a tree)", source,
                                     joint_of_child[cur]->Row(), chain, cur));
      }
      path.push_back(cur);
    }
    const std::string top = root_of.count(cur) ? root_of[cur] : cur;
    for (const auto& l : path) root_of[l] = top;
    if (root.empty()) root = top;
    if (top != root)
      throw SuiteError(
          fmt::format("{}:{}: links '{}' and '{}' both have no parent joint (expected one root link; "
                      "is a joint missing?)",
                      source, link_row[top], root, top));
  }

  // ---- 2. urdfdom ----
  urdf::ModelInterfaceSharedPtr urdf;
  CaptureHandler capture;
  {
    std::lock_guard<std::mutex> lock(g_urdfdom_mutex);
    console_bridge::useOutputHandler(&capture);
    try {
      urdf = urdf::parseURDF(xml);
    } catch (const std::exception& e) {
      capture.messages += (capture.messages.empty() ? "" : "; ") + std::string(e.what());
    }
    console_bridge::restorePreviousOutputHandler();
  }
  if (!urdf) throw SuiteError(fmt::format("{}: urdfdom rejected the file: {}", source, capture.messages));

  // ---- 3. conversion ----
  UrdfModel out;
  out.robot_name = urdf->getName();
  for (const auto& [name, row] : link_row) out.names.links.insert(name);
  for (const auto& [name, j] : joint_elem) out.names.joints.insert(name);
  // An unknown link name gets the model's links (the first 60) in the error.
  auto knownLinks = [&] {
    std::string out;
    int n = 0;
    for (const auto& [name, row] : link_row) {
      if (n++ == 60) {
        out += fmt::format(", ... ({} links in all)", link_row.size());
        break;
      }
      out += (out.empty() ? "" : ", ") + name;
    }
    return out;
  };
  const std::string base = options.base.empty() ? urdf->getRoot()->name : options.base;
  if (!urdf->getLink(base))
    throw SuiteError(fmt::format("{}: base link '{}' is not defined (links: {})", source, base, knownLinks()));

  // URDF joints to keep, parents first.
  std::vector<urdf::JointConstSharedPtr> order;
  if (!options.tip.empty()) {
    urdf::LinkConstSharedPtr l = urdf->getLink(options.tip);
    if (!l)
      throw SuiteError(fmt::format("{}: tip link '{}' is not defined (links: {})", source, options.tip, knownLinks()));
    while (l->name != base) {
      if (!l->parent_joint)
        throw SuiteError(fmt::format("{}: tip link '{}' is not below base link '{}'", source, options.tip, base));
      order.push_back(l->parent_joint);
      l = urdf->getLink(l->parent_joint->parent_link_name);
    }
    std::reverse(order.begin(), order.end());
  } else {
    // Depth-first, parents first; urdfdom's child order (by link name) is
    // deterministic.
    std::vector<urdf::LinkConstSharedPtr> stack{urdf->getLink(base)};
    while (!stack.empty()) {
      urdf::LinkConstSharedPtr l = stack.back();
      stack.pop_back();
      if (l->parent_joint && l->name != base) order.push_back(l->parent_joint);
      for (auto it = l->child_links.rbegin(); it != l->child_links.rend(); ++it) stack.push_back(*it);
    }
  }

  std::vector<JointSpec> specs;
  std::map<std::string, int> body_of_link;
  JointSpec root_joint;
  root_joint.name = urdf->getJoint(base) ? "root" : base;
  root_joint.body_name = base;
  root_joint.parent = -1;
  root_joint.type = options.floating_base ? JointType::kFree : JointType::kFixed;
  specs.push_back(root_joint);
  body_of_link[base] = 0;
  for (const auto& j : order) {
    JointSpec s;
    s.name = j->name;
    s.body_name = j->child_link_name;
    s.parent = body_of_link.at(j->parent_link_name);
    s.parent_T_joint = toPose(j->parent_to_joint_origin_transform);
    s.axis = Eigen::Vector3d(j->axis.x, j->axis.y, j->axis.z);
    if (const double scale = s.axis.cwiseAbs().maxCoeff(); scale > 0) s.axis = (s.axis / scale).normalized();
    switch (j->type) {
      case urdf::Joint::REVOLUTE:
      case urdf::Joint::PRISMATIC:
        s.type = j->type == urdf::Joint::REVOLUTE ? JointType::kRevolute : JointType::kPrismatic;
        if (j->limits) {
          s.lower = Eigen::VectorXd::Constant(1, j->limits->lower);
          s.upper = Eigen::VectorXd::Constant(1, j->limits->upper);
        }
        break;
      case urdf::Joint::CONTINUOUS:
        s.type = JointType::kRevolute;
        break;
      case urdf::Joint::FLOATING:
        s.type = JointType::kFree;
        break;
      case urdf::Joint::FIXED:
        s.type = JointType::kFixed;
        break;
      default:
        throw SuiteError(fmt::format("{}:{}: joint '{}': unsupported joint type", source,
                                     joint_elem.count(j->name) ? joint_elem[j->name]->Row() : 0, j->name));
    }
    if (j->mimic && s.type != JointType::kFixed) {
      // Approximation: the follower is frozen at its offset (its value when
      // the leader is at 0), folded into the rest transform.
      const double qm = j->mimic->offset;
      Pose3d motion;
      if (s.type == JointType::kRevolute) motion.R = axisRotation<double>(s.axis, qm);
      if (s.type == JointType::kPrismatic) motion.p = s.axis * qm;
      s.parent_T_joint = s.parent_T_joint * motion;
      s.type = JointType::kFixed;
      s.lower.resize(0);
      s.upper.resize(0);
      ++out.mimic_joints;
      out.warnings.push_back(fmt::format("joint '{}' mimics '{}': approximated as fixed at its offset {}", j->name,
                                         j->mimic->joint_name, qm));
    }
    if (s.type == JointType::kFixed || s.type == JointType::kFree) {
      s.lower.resize(0);
      s.upper.resize(0);
    }
    body_of_link[j->child_link_name] = static_cast<int>(specs.size());
    specs.push_back(std::move(s));
  }
  // Masses: each link's <inertial> mass, its centre of mass the inertial
  // frame's origin (<inertial><origin xyz>, in the link frame).
  for (JointSpec& s : specs) {
    const urdf::LinkConstSharedPtr link = urdf->getLink(s.body_name);
    if (!link || !link->inertial) continue;
    s.body_mass = link->inertial->mass;
    const urdf::Vector3& c = link->inertial->origin.position;
    s.body_com = Eigen::Vector3d(c.x, c.y, c.z);
  }
  try {
    out.model = std::make_shared<const Model>(std::move(specs), out.robot_name);
  } catch (const ModelError& e) {
    throw SuiteError(fmt::format("{}: {}", source, e.what()));
  }
  // <collision> geometry of the kept links: primitives, and meshes as
  // options.meshes says.
  std::size_t triangles = 0;
  for (const auto& [link_name, body] : body_of_link) {
    const urdf::LinkConstSharedPtr link = urdf->getLink(link_name);
    if (!link) continue;
    for (const auto& col : link->collision_array) {
      if (!col || !col->geometry) continue;
      const Pose3d pose = toPose(col->origin);
      const std::string where = fmt::format("{}: link '{}': <collision>", source, link_name);
      Shape shape;
      switch (col->geometry->type) {
        case urdf::Geometry::BOX: {
          const auto& b = static_cast<const urdf::Box&>(*col->geometry);
          shape = Shape::box(link_name, Eigen::Vector3d(b.dim.x, b.dim.y, b.dim.z), pose);
          break;
        }
        case urdf::Geometry::SPHERE:
          shape = Shape::sphere(link_name, static_cast<const urdf::Sphere&>(*col->geometry).radius, pose);
          break;
        case urdf::Geometry::CYLINDER: {
          const auto& c = static_cast<const urdf::Cylinder&>(*col->geometry);
          shape = Shape::cylinder(link_name, c.radius, c.length, pose);
          break;
        }
        case urdf::Geometry::MESH: {
          // The mesh itself, its hull, or nothing: the link's fitted capsules.
          if (options.meshes == MeshGeometry::kCapsules) continue;
          const auto& m = static_cast<const urdf::Mesh&>(*col->geometry);
          const std::string at = fmt::format("{}:{}: link '{}': <collision> mesh '{}'", source, link_row[link_name],
                                             link_name, m.filename);
          std::vector<std::string> looked;
          const std::string file =
              resolveMeshPath(m.filename, fs::path(source).parent_path().string(), options.package_path, &looked);
          if (file.empty()) {
            std::string where;
            for (size_t k = 0; k < looked.size() && k < 6; ++k) where += (k ? ", " : "") + looked[k];
            if (looked.size() > 6) where += fmt::format(" and {} more", looked.size() - 6);
            throw SuiteError(fmt::format("{}: no such file (looked for {}{})", at,
                                         where.empty() ? "it in no directory" : where,
                                         m.filename.rfind("package://", 0) == 0
                                             ? "; give the package's directory with --package-path or ROS_PACKAGE_PATH"
                                             : ""));
          }
          try {
            shape = meshShape(link_name, file, Eigen::Vector3d(m.scale.x, m.scale.y, m.scale.z),
                              options.meshes == MeshGeometry::kHull, pose, kMaxSceneTriangles, &triangles);
          } catch (const std::exception& e) {
            throw SuiteError(fmt::format("{}: {}", at, e.what()));
          }
          out.collision.push_back({body, std::move(shape), false});
          continue;
        }
        default: continue;
      }
      const double size = shape.kind == ShapeKind::kBox ? shape.size.minCoeff() : shape.radius;
      if (!(size > 0.0) || !std::isfinite(size) || !std::isfinite(shape.length) || shape.length < 0.0)
        throw SuiteError(fmt::format("{}: sizes must be finite and > 0", where));
      out.collision.push_back({body, std::move(shape), false});
    }
  }
  return out;
}

}  // namespace ikbench
