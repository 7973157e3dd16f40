// MJCF loader (mjcf.h): TinyXML with line numbers, MuJoCo's default classes
// and frame conventions, then a Model and the collision geoms.
#include "ikbench/scenarios/mjcf.h"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <memory>
#include <cmath>
#include <map>
#include <set>

#include "ikbench/scenarios/input_limits.h"
#include "ikbench/scenarios/mesh_file.h"
#include "ikbench/scenarios/scene.h"
#include "xml_input.h"

namespace ikbench {
namespace {

namespace fs = std::filesystem;

constexpr double kPi = 3.14159265358979323846;
// Vertices of one inline <mesh vertex=...> at most.
constexpr size_t kMaxMeshVertices = 100000;

struct DefaultClass {
  std::string parent;  // empty for "main"
  std::map<std::string, const TiXmlElement*> elements;  // tag -> its attributes
};

// An <asset><mesh>: a file (resolved), or vertices (and faces) given inline.
struct MeshAsset {
  const TiXmlElement* element = nullptr;
  std::string file;
  Eigen::Vector3d scale = Eigen::Vector3d::Ones();
  std::vector<double> vertex;
  std::vector<double> face;
};

struct Reader {
  const std::string& source;
  const UrdfOptions& options;
  bool degrees = true;
  std::string eulerseq = "xyz";
  bool autolimits = true;
  std::map<std::string, DefaultClass> classes;
  std::string meshdir;  // <compiler meshdir>, else assetdir, else the file's directory
  bool strippath = false;
  std::map<std::string, MeshAsset> meshes;
  std::size_t triangles = 0;  // read so far, within kMaxSceneTriangles

  [[noreturn]] void fail(const TiXmlNode* node, const std::string& msg) const {
    if (node) throw SuiteError(fmt::format("{}:{}: {}", source, node->Row(), msg));
    throw SuiteError(fmt::format("{}: {}", source, msg));
  }

  // The attribute of element `e` (tag `tag`), from itself or its class chain.
  const char* attr(const TiXmlElement* e, const std::string& cls, const char* name) const {
    if (const char* v = e->Attribute(name)) return v;
    for (std::string c = cls; !c.empty();) {
      const auto it = classes.find(c);
      if (it == classes.end()) break;
      const auto el = it->second.elements.find(e->Value());
      if (el != it->second.elements.end())
        if (const char* v = el->second->Attribute(name)) return v;
      c = it->second.parent;
    }
    return nullptr;
  }

  Eigen::VectorXd numbers(const TiXmlElement* e, const char* name, const char* text, int count) const {
    return someNumbers(e, name, text, count, count);
  }
  // Between lo and hi numbers (the rest left to the caller), for size="r" or "r l".
  Eigen::VectorXd someNumbers(const TiXmlElement* e, const char* name, const char* text, int lo, int hi) const {
    const std::optional<std::vector<double>> v = parseNumberList(text, hi);
    const int n = v ? static_cast<int>(v->size()) : 0;
    if (!v || n < lo) {
      const std::string want = lo == hi ? std::to_string(lo) : fmt::format("{} to {}", lo, hi);
      fail(e, fmt::format("<{}> {}=\"{}\": expected {} finite number{}{}", e->Value(), name, text, want,
                          hi > 1 ? "s" : "", v ? fmt::format(", found {}", n) : ""));
    }
    return Eigen::Map<const Eigen::VectorXd>(v->data(), n);
  }

  double angle(double v) const { return degrees ? v * kPi / 180.0 : v; }

  // pos and orientation of a body or geom relative to its parent frame.
  Pose3d frame(const TiXmlElement* e, const std::string& cls) const {
    Pose3d pose;
    if (const char* p = attr(e, cls, "pos")) pose.p = numbers(e, "pos", p, 3);
    int given = 0;
    if (const char* q = attr(e, cls, "quat")) {
      ++given;
      const Eigen::VectorXd v = numbers(e, "quat", q, 4);
      if (v.norm() < 1e-12) fail(e, fmt::format("<{}> quat: the quaternion is zero", e->Value()));
      pose.R = Eigen::Quaterniond(v[0], v[1], v[2], v[3]).normalized().toRotationMatrix();
    }
    if (const char* a = attr(e, cls, "axisangle")) {
      ++given;
      const Eigen::VectorXd v = numbers(e, "axisangle", a, 4);
      const Eigen::Vector3d axis = v.head<3>();
      if (axis.norm() < 1e-12) fail(e, fmt::format("<{}> axisangle: the axis is zero", e->Value()));
      pose.R = Eigen::AngleAxisd(angle(v[3]), axis.normalized()).toRotationMatrix();
    }
    if (const char* a = attr(e, cls, "euler")) {
      ++given;
      const Eigen::VectorXd v = numbers(e, "euler", a, 3);
      Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
      for (int k = 0; k < 3; ++k) {
        const char c = eulerseq[static_cast<size_t>(k)];
        const int axis = std::tolower(c) - 'x';
        const Eigen::Matrix3d Rk = Eigen::AngleAxisd(angle(v[k]), Eigen::Vector3d::Unit(axis)).toRotationMatrix();
        R = std::islower(c) ? Eigen::Matrix3d(R * Rk) : Eigen::Matrix3d(Rk * R);
      }
      pose.R = R;
    }
    if (const char* a = attr(e, cls, "xyaxes")) {
      ++given;
      const Eigen::VectorXd v = numbers(e, "xyaxes", a, 6);
      Eigen::Vector3d x = v.head<3>(), y = v.tail<3>();
      if (x.norm() < 1e-12) fail(e, fmt::format("<{}> xyaxes: the x axis is zero", e->Value()));
      x.normalize();
      y -= x * x.dot(y);
      if (y.norm() < 1e-12) fail(e, fmt::format("<{}> xyaxes: the y axis is parallel to x", e->Value()));
      y.normalize();
      pose.R.col(0) = x;
      pose.R.col(1) = y;
      pose.R.col(2) = x.cross(y);
    }
    if (const char* a = attr(e, cls, "zaxis")) {
      ++given;
      const Eigen::Vector3d z = numbers(e, "zaxis", a, 3);
      if (z.norm() < 1e-12) fail(e, fmt::format("<{}> zaxis: the axis is zero", e->Value()));
      pose.R = Eigen::Quaterniond::FromTwoVectors(Eigen::Vector3d::UnitZ(), z.normalized()).toRotationMatrix();
    }
    if (given > 1)
      fail(e, fmt::format("<{}>: more than one of quat, axisangle, euler, xyaxes, zaxis", e->Value()));
    return pose;
  }

  // <asset><mesh name file scale vertex face class>: a mesh's name is its
  // file's stem unless given; its file is found under meshdir.
  void readMesh(const TiXmlElement* m) {
    const char* mc = m->Attribute("class");
    if (mc && !classes.count(mc)) fail(m, fmt::format("<mesh class=\"{}\">: no such default class", mc));
    const std::string cls = mc ? mc : "main";
    MeshAsset a;
    a.element = m;
    const char* file = m->Attribute("file");
    const char* vertex = m->Attribute("vertex");
    if (!file && !vertex) fail(m, "<mesh>: expected a file or vertex attribute");
    if (file && vertex) fail(m, "<mesh>: both file and vertex given (expected one)");
    const char* nm = m->Attribute("name");
    std::string name = nm ? nm : "";
    if (file) {
      fs::path f(file);
      if (name.empty()) name = f.stem().string();
      if (strippath) f = f.filename();
      if (f.is_relative()) f = fs::path(meshdir) / f;
      a.file = f.string();
    }
    if (name.empty()) fail(m, "<mesh vertex=...>: an inline mesh needs a name");
    if (const char* sc = attr(m, cls, "scale")) a.scale = numbers(m, "scale", sc, 3);
    if (!(a.scale.minCoeff() > 0.0)) fail(m, fmt::format("<mesh name=\"{}\">: scale must be three numbers > 0", name));
    for (const char* ref : {"refpos", "refquat"})
      if (m->Attribute(ref)) fail(m, fmt::format("<mesh name=\"{}\">: {} is not supported", name, ref));
    if (vertex) {
      const auto v = parseNumberList(vertex, 3 * kMaxMeshVertices);
      if (!v || v->size() < 12 || v->size() % 3 != 0)
        fail(m, fmt::format("<mesh name=\"{}\"> vertex: expected at least 4 points of 3 finite numbers", name));
      a.vertex = *v;
      if (const char* face = m->Attribute("face")) {
        const auto f = parseNumberList(face, 3 * kMaxMeshVertices);
        if (!f || f->empty() || f->size() % 3 != 0)
          fail(m, fmt::format("<mesh name=\"{}\"> face: expected triangles of 3 vertex indices", name));
        for (double i : *f)
          if (!(i >= 0 && i < static_cast<double>(v->size() / 3) && i == std::floor(i)))
            fail(m, fmt::format("<mesh name=\"{}\"> face: {} is not the index of one of its {} vertices", name, i,
                                v->size() / 3));
        a.face = *f;
      }
    }
    if (!meshes.emplace(name, std::move(a)).second) fail(m, fmt::format("<mesh name=\"{}\"> is defined twice", name));
  }

  // A geom's mesh as a link shape, as options.meshes says: its triangles or
  // their hull. MuJoCo collides every mesh as its convex hull; an inline
  // mesh without faces is only its hull.
  Shape meshGeom(const TiXmlElement* g, const std::string& cls, const std::string& what, const std::string& body,
                 const Pose3d& pose) {
    const char* mn = attr(g, cls, "mesh");
    if (!mn) fail(g, what + ": a mesh geom needs mesh=\"NAME\" (an <asset><mesh>)");
    const auto it = meshes.find(mn);
    if (it == meshes.end()) fail(g, fmt::format("{}: no <asset><mesh name=\"{}\">", what, mn));
    const MeshAsset& a = it->second;
    const bool hull = options.meshes == MeshGeometry::kHull;
    const std::string at = fmt::format("{}: mesh '{}'", what, mn);
    try {
      if (!a.file.empty()) {
        std::error_code ec;
        if (!fs::is_regular_file(a.file, ec))
          throw std::runtime_error(fmt::format("{}: no such file (meshdir: '{}')", a.file, meshdir));
        return meshShape(body, a.file, a.scale, hull, pose, kMaxSceneTriangles, &triangles);
      }
      auto mesh = std::make_shared<TriangleMesh>();
      for (size_t i = 0; i + 2 < a.vertex.size(); i += 3)
        mesh->vertices.push_back(a.scale.cwiseProduct(Eigen::Vector3d(a.vertex[i], a.vertex[i + 1], a.vertex[i + 2])));
      for (size_t i = 0; i + 2 < a.face.size(); i += 3)
        mesh->triangles.emplace_back(static_cast<int>(a.face[i]), static_cast<int>(a.face[i + 1]),
                                     static_cast<int>(a.face[i + 2]));
      const bool as_hull = hull || a.face.empty();
      if (as_hull) *mesh = convexHull(*mesh, fmt::format("mesh '{}'", mn));
      triangles += mesh->triangles.size();
      if (triangles > kMaxSceneTriangles)
        throw std::runtime_error(fmt::format("more than {} triangles in the model (the limit)", kMaxSceneTriangles));
      Shape shape;
      shape.kind = ShapeKind::kMesh;
      shape.name = body;
      shape.pose = pose;
      shape.convex = as_hull;
      shape.mesh = std::move(mesh);
      return shape;
    } catch (const std::exception& e) {
      fail(g, fmt::format("{}: {}", at, e.what()));
    }
  }

  void readDefaults(const TiXmlElement* d, const std::string& parent) {
    const char* c = d->Attribute("class");
    const std::string name = c ? c : (parent.empty() ? "main" : "");
    if (name.empty()) fail(d, "a nested <default> needs a class attribute");
    if (classes.count(name)) fail(d, fmt::format("<default class=\"{}\"> is defined twice", name));
    DefaultClass& dc = classes[name];
    dc.parent = parent;
    for (const TiXmlElement* e = d->FirstChildElement(); e; e = e->NextSiblingElement()) {
      if (std::string(e->Value()) == "default")
        readDefaults(e, name);
      else
        dc.elements[e->Value()] = e;
    }
  }
};

struct Built {
  std::vector<JointSpec> specs;
  std::vector<LinkShape> shapes;  // body: index into specs
  std::set<std::string> joint_names;
};

void readBody(Reader& r, const TiXmlElement* b, int parent, const std::string& childclass, Built* out, int depth) {
  static const std::set<std::string> kIgnored = {"inertial", "site", "camera", "light", "plugin"};
  const char* cc = b->Attribute("childclass");
  const std::string cls_inherited = cc ? cc : childclass;
  if (cc && !r.classes.count(cc)) r.fail(b, fmt::format("<body childclass=\"{}\">: no such default class", cc));
  const char* nm = b->Attribute("name");
  const std::string name = nm && *nm ? nm : fmt::format("body{}", out->specs.size());
  const Pose3d body_pose = r.frame(b, "");
  // The body's joints, in order.
  Pose3d pending = body_pose;  // from the last frame made to the next joint's
  int frame = parent;
  std::vector<const TiXmlElement*> joints;
  for (const TiXmlElement* e = b->FirstChildElement(); e; e = e->NextSiblingElement()) {
    const std::string tag = e->Value();
    if (tag == "joint") joints.push_back(e);
    else if (tag == "freejoint")
      r.fail(e, fmt::format("body '{}': <freejoint>: free joints are not supported (a fixed base is)", name));
    else if (tag != "body" && tag != "geom" && !kIgnored.count(tag))
      r.fail(e, fmt::format("body '{}': <{}> is not supported", name, tag));
  }
  for (size_t k = 0; k < joints.size(); ++k) {
    const TiXmlElement* j = joints[k];
    const char* jc = j->Attribute("class");
    const std::string cls = jc ? jc : (cls_inherited.empty() ? "main" : cls_inherited);
    if (jc && !r.classes.count(jc)) r.fail(j, fmt::format("<joint class=\"{}\">: no such default class", jc));
    const char* jn = j->Attribute("name");
    const std::string jname = jn && *jn ? jn : fmt::format("{}_joint{}", name, k);
    if (!out->joint_names.insert(jname).second) r.fail(j, fmt::format("joint '{}' is defined twice", jname));
    const char* type_c = r.attr(j, cls, "type");
    const std::string type = type_c ? type_c : "hinge";
    if (type == "ball" || type == "free")
      r.fail(j, fmt::format("joint '{}': {} joints are not supported (hinge and slide are)", jname, type));
    if (type != "hinge" && type != "slide")
      r.fail(j, fmt::format("joint '{}': unknown type '{}' (expected hinge or slide)", jname, type));
    if (const char* ref = r.attr(j, cls, "ref"); ref && r.numbers(j, "ref", ref, 1)[0] != 0.0)
      r.fail(j, fmt::format("joint '{}': a non-zero ref is not supported", jname));
    Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();
    if (const char* a = r.attr(j, cls, "axis")) axis = r.numbers(j, "axis", a, 3);
    if (axis.norm() < 1e-12) r.fail(j, fmt::format("joint '{}': the axis is zero", jname));
    Eigen::Vector3d pos = Eigen::Vector3d::Zero();
    if (const char* p = r.attr(j, cls, "pos")) pos = r.numbers(j, "pos", p, 3);
    JointSpec s;
    s.name = jname;
    s.body_name = k + 1 == joints.size() && pos.isZero(0.0) ? name : jname;
    s.parent = frame;
    Pose3d at;
    at.p = pos;
    s.parent_T_joint = pending * at;
    s.axis = axis.normalized();
    s.type = type == "hinge" ? JointType::kRevolute : JointType::kPrismatic;
    const char* lim_c = r.attr(j, cls, "limited");
    const std::string limited = lim_c ? lim_c : "auto";
    if (limited != "true" && limited != "false" && limited != "auto")
      r.fail(j, fmt::format("joint '{}': limited=\"{}\" (expected true, false or auto)", jname, limited));
    const char* range = r.attr(j, cls, "range");
    if (limited == "true" || (limited == "auto" && r.autolimits && range)) {
      if (!range) r.fail(j, fmt::format("joint '{}': limited=\"true\" without a range", jname));
      Eigen::Vector2d lu = r.numbers(j, "range", range, 2);
      if (s.type == JointType::kRevolute) lu = Eigen::Vector2d(r.angle(lu[0]), r.angle(lu[1]));
      if (lu[0] > lu[1]) r.fail(j, fmt::format("joint '{}': range lower {} > upper {}", jname, lu[0], lu[1]));
      s.lower = Eigen::VectorXd::Constant(1, lu[0]);
      s.upper = Eigen::VectorXd::Constant(1, lu[1]);
    }
    out->specs.push_back(std::move(s));
    frame = static_cast<int>(out->specs.size()) - 1;
    at.p = -pos;
    pending = at;
  }
  if (joints.empty() || out->specs[static_cast<size_t>(frame)].body_name != name) {
    JointSpec s;
    s.name = joints.empty() ? name : name + "_frame";
    s.body_name = name;
    s.parent = frame;
    s.parent_T_joint = pending;
    s.type = JointType::kFixed;
    if (!out->joint_names.insert(s.name).second)
      r.fail(b, fmt::format("body '{}': its fixed joint's name '{}' is taken", name, s.name));
    out->specs.push_back(std::move(s));
  }
  const int body = static_cast<int>(out->specs.size()) - 1;
  // <inertial pos mass>: the body's mass and centre of mass (body frame).
  // Masses MuJoCo would infer from geoms are not computed: a body without an
  // <inertial> element keeps mass 0.
  if (const TiXmlElement* in = b->FirstChildElement("inertial")) {
    JointSpec& s = out->specs[static_cast<size_t>(body)];
    const char* mass = in->Attribute("mass");
    if (!mass) r.fail(in, fmt::format("body '{}': <inertial> without a mass", name));
    s.body_mass = r.numbers(in, "mass", mass, 1)[0];
    if (!(s.body_mass >= 0.0) || !std::isfinite(s.body_mass))
      r.fail(in, fmt::format("body '{}': <inertial mass=\"{}\">: expected a finite mass >= 0 [kg]", name, mass));
    if (const char* pos = in->Attribute("pos")) s.body_com = r.numbers(in, "pos", pos, 3);
  }
  for (const TiXmlElement* g = b->FirstChildElement("geom"); g; g = g->NextSiblingElement("geom")) {
    const char* gc = g->Attribute("class");
    const std::string cls = gc ? gc : (cls_inherited.empty() ? "main" : cls_inherited);
    if (gc && !r.classes.count(gc)) r.fail(g, fmt::format("<geom class=\"{}\">: no such default class", gc));
    auto integer = [&](const char* a, int dflt) {
      const char* v = r.attr(g, cls, a);
      return v ? static_cast<int>(r.numbers(g, a, v, 1)[0]) : dflt;
    };
    if (integer("contype", 1) == 0 && integer("conaffinity", 1) == 0) continue;  // visual only
    const char* type_c = r.attr(g, cls, "type");
    const std::string type = type_c ? type_c : "sphere";
    const char* gn = g->Attribute("name");
    const std::string what = fmt::format("body '{}': <geom{}>", name, gn ? fmt::format(" name=\"{}\"", gn) : "");
    if (type == "mesh") {
      if (r.attr(g, cls, "fromto")) r.fail(g, what + ": a mesh geom is placed by pos and orientation, not fromto");
      // A mesh read for nothing: the link gets fitted capsules (collision/world.h).
      if (r.options.meshes == MeshGeometry::kCapsules) continue;
      out->shapes.push_back({body, r.meshGeom(g, cls, what, name, r.frame(g, cls)), false});
      continue;
    }
    if (r.attr(g, cls, "mesh"))
      r.fail(g, fmt::format("{}: a {} fitted to a mesh is not supported (type=\"mesh\" checks the mesh itself)", what,
                            type));
    const char* size_c = r.attr(g, cls, "size");
    const char* fromto_c = r.attr(g, cls, "fromto");
    Pose3d pose = r.frame(g, cls);
    Shape shape;
    if (type == "box") {
      if (!size_c) r.fail(g, what + ": a box needs size=\"x y z\" (half sizes)");
      shape = Shape::box(name, 2.0 * Eigen::Vector3d(r.numbers(g, "size", size_c, 3)), pose);
    } else if (type == "sphere") {
      if (!size_c) r.fail(g, what + ": a sphere needs size=\"radius\"");
      shape = Shape::sphere(name, r.someNumbers(g, "size", size_c, 1, 3)[0], pose);
    } else if (type == "capsule" || type == "cylinder") {
      if (!size_c) r.fail(g, what + ": a " + type + " needs size=\"radius half-length\"");
      const Eigen::VectorXd sz = r.someNumbers(g, "size", size_c, fromto_c ? 1 : 2, 3);
      double half = fromto_c ? 0.0 : sz[1];
      if (fromto_c) {
        const Eigen::VectorXd ft = r.numbers(g, "fromto", fromto_c, 6);
        const Eigen::Vector3d a = ft.head<3>(), c = ft.tail<3>();
        pose = Pose3d();
        pose.p = 0.5 * (a + c);
        half = 0.5 * (c - a).norm();
        if (half > 0.0)
          pose.R = Eigen::Quaterniond::FromTwoVectors(Eigen::Vector3d::UnitZ(), (c - a).normalized()).toRotationMatrix();
      }
      shape = type == "capsule" ? Shape::capsule(name, sz[0], 2.0 * half, pose)
                                : Shape::cylinder(name, sz[0], 2.0 * half, pose);
    } else {
      r.fail(g, fmt::format("{}: geom type '{}' is not supported (expected box, sphere, capsule, cylinder or mesh)",
                            what, type));
    }
    const double size = shape.kind == ShapeKind::kBox ? shape.size.minCoeff() : shape.radius;
    if (!(size > 0.0) || !(shape.length >= 0.0))
      r.fail(g, what + ": sizes must be > 0");
    out->shapes.push_back({body, std::move(shape), false});
  }
  if (depth >= kMaxXmlNesting) r.fail(b, "bodies nested too deep");
  for (const TiXmlElement* c = b->FirstChildElement("body"); c; c = c->NextSiblingElement("body"))
    readBody(r, c, body, cls_inherited, out, depth + 1);
}

}  // namespace

UrdfModel loadMjcf(const std::string& path, const UrdfOptions& options) {
  return parseMjcf(readInputFile(path, "MJCF file"), path, options);
}

UrdfModel loadRobot(const std::string& path, const UrdfOptions& options, bool mjcf) {
  return mjcf ? loadMjcf(path, options) : loadUrdf(path, options);
}

UrdfModel parseMjcf(const std::string& xml, const std::string& source, const UrdfOptions& options) {
  TiXmlDocument doc;
  parseXml(xml, source, &doc);
  Reader r{source, options};
  r.meshdir = fs::path(source).parent_path().string();
  const TiXmlElement* root = doc.RootElement();
  if (!root) r.fail(nullptr, "empty file (expected a <mujoco> element)");
  if (std::string(root->Value()) != "mujoco")
    r.fail(root, fmt::format("expected the root element <mujoco>, found <{}>", root->Value()));
  if (options.floating_base) r.fail(root, "a floating base is not supported for MJCF models");
  // Elements MuJoCo expands at compile time, which this reader does not.
  std::vector<const TiXmlElement*> stack{root};
  while (!stack.empty()) {
    const TiXmlElement* e = stack.back();
    stack.pop_back();
    const std::string tag = e->Value();
    if (tag == "include" || tag == "frame" || tag == "attach" || tag == "replicate" || tag == "composite" ||
        tag == "flexcomp")
      r.fail(e, fmt::format("<{}> is not supported (expand the model, e.g. with MuJoCo's mj_saveLastXML)", tag));
    for (const TiXmlElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) stack.push_back(c);
  }
  for (const TiXmlElement* c = root->FirstChildElement("compiler"); c; c = c->NextSiblingElement("compiler")) {
    if (const char* a = c->Attribute("angle")) {
      const std::string s = a;
      if (s != "degree" && s != "radian") r.fail(c, fmt::format("<compiler angle=\"{}\">: expected degree or radian", s));
      r.degrees = s == "degree";
    }
    if (const char* e = c->Attribute("eulerseq")) {
      const std::string s = e;
      bool ok = s.size() == 3;
      for (char ch : s) ok = ok && std::string("xyzXYZ").find(ch) != std::string::npos;
      if (!ok) r.fail(c, fmt::format("<compiler eulerseq=\"{}\">: expected three of x, y, z, X, Y, Z", s));
      r.eulerseq = s;
    }
    if (const char* a = c->Attribute("autolimits")) r.autolimits = std::string(a) == "true";
    if (const char* a = c->Attribute("coordinate"); a && std::string(a) != "local")
      r.fail(c, "<compiler coordinate=\"global\"> is not supported");
    // Mesh files: under meshdir, else assetdir, relative to the model's file.
    const char* md = c->Attribute("meshdir");
    if (!md) md = c->Attribute("assetdir");
    if (md) {
      const fs::path dir(md);
      r.meshdir = dir.is_absolute() ? dir.string() : (fs::path(source).parent_path() / dir).string();
    }
    if (const char* sp = c->Attribute("strippath")) r.strippath = std::string(sp) == "true";
  }
  for (const TiXmlElement* d = root->FirstChildElement("default"); d; d = d->NextSiblingElement("default"))
    r.readDefaults(d, "");
  for (const TiXmlElement* a = root->FirstChildElement("asset"); a; a = a->NextSiblingElement("asset"))
    for (const TiXmlElement* m = a->FirstChildElement("mesh"); m; m = m->NextSiblingElement("mesh")) r.readMesh(m);
  const TiXmlElement* world = root->FirstChildElement("worldbody");
  if (!world) r.fail(root, "no <worldbody> (expected the bodies of the robot in one)");
  Built all;
  JointSpec w;
  w.name = "world";
  w.body_name = "world";
  w.type = JointType::kFixed;
  all.specs.push_back(w);
  all.joint_names.insert("world");
  for (const TiXmlElement* b = world->FirstChildElement("body"); b; b = b->NextSiblingElement("body"))
    readBody(r, b, 0, "", &all, 1);
  if (all.specs.size() > static_cast<size_t>(kMaxJoints)) r.fail(world, fmt::format("more than {} joints", kMaxJoints));

  // Select base / tip as for a URDF.
  std::map<std::string, int> by_name;
  for (size_t i = 0; i < all.specs.size(); ++i)
    if (!by_name.emplace(all.specs[i].body_name, static_cast<int>(i)).second)
      r.fail(world, fmt::format("two bodies or joint frames are named '{}'", all.specs[i].body_name));
  const std::string base = options.base.empty() ? "world" : options.base;
  if (!by_name.count(base)) r.fail(world, fmt::format("base body '{}' is not defined", base));
  const int b0 = by_name[base];
  std::vector<char> keep(all.specs.size(), 0);
  if (!options.tip.empty()) {
    if (!by_name.count(options.tip)) r.fail(world, fmt::format("tip body '{}' is not defined", options.tip));
    int i = by_name[options.tip];
    while (i != b0) {
      if (i < 0) r.fail(world, fmt::format("tip body '{}' is not below base body '{}'", options.tip, base));
      keep[static_cast<size_t>(i)] = 1;
      i = all.specs[static_cast<size_t>(i)].parent;
    }
  } else {
    for (size_t i = 0; i < all.specs.size(); ++i)
      for (int k = static_cast<int>(i); k >= 0; k = all.specs[static_cast<size_t>(k)].parent)
        if (k == b0 && static_cast<int>(i) != b0) keep[i] = 1;
  }
  std::vector<int> index(all.specs.size(), -1);
  std::vector<JointSpec> specs;
  JointSpec root_joint;
  root_joint.name = all.specs[static_cast<size_t>(b0)].name;
  root_joint.body_name = base;
  root_joint.type = JointType::kFixed;
  root_joint.body_mass = all.specs[static_cast<size_t>(b0)].body_mass;
  root_joint.body_com = all.specs[static_cast<size_t>(b0)].body_com;
  specs.push_back(root_joint);
  index[static_cast<size_t>(b0)] = 0;
  for (size_t i = 0; i < all.specs.size(); ++i) {
    if (!keep[i]) continue;
    JointSpec s = all.specs[i];
    s.parent = index[static_cast<size_t>(s.parent)];
    index[i] = static_cast<int>(specs.size());
    specs.push_back(std::move(s));
  }
  UrdfModel out;
  const char* model_name = root->Attribute("model");
  out.robot_name = model_name ? model_name : "mjcf";
  for (const JointSpec& s : all.specs) {
    out.names.links.insert(s.body_name);
    out.names.joints.insert(s.name);
  }
  try {
    out.model = std::make_shared<const Model>(std::move(specs), out.robot_name);
  } catch (const ModelError& e) {
    r.fail(nullptr, e.what());
  }
  for (LinkShape& l : all.shapes) {
    const int b = index[static_cast<size_t>(l.body)];
    if (b < 0) continue;
    l.body = b;
    out.collision.push_back(std::move(l));
  }
  return out;
}

}  // namespace ikbench
