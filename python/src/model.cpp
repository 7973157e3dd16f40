// ikbench.Model (URDF, BVH, random chains and trees), forward kinematics,
// configurations, and reachable targets from the scenario generators.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <filesystem>

#include "bindings.h"
#include "ikbench/kinematics/config.h"
#include "ikbench/kinematics/forward_kinematics.h"
#include "ikbench/kinematics/rng.h"
#include "ikbench/scenarios/bvh.h"
#include "ikbench/scenarios/generators.h"
#include "ikbench/scenarios/urdf.h"

namespace ikbench::python {
namespace {

// What a non-regular file is, for messages.
const char* fileKind(std::filesystem::file_type t) {
  switch (t) {
    case std::filesystem::file_type::directory:
      return "a directory";
    case std::filesystem::file_type::fifo:
      return "a FIFO";
    case std::filesystem::file_type::character:
      return "a character device";
    case std::filesystem::file_type::block:
      return "a block device";
    case std::filesystem::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";
  }
}

// os.fspath(path) as a string, which must name a regular file (a symbolic
// link is followed): FileNotFoundError when nothing is there,
// IsADirectoryError for a directory, OSError naming what it is for a FIFO,
// device or socket (never opened: a FIFO would block, /dev/zero never ends).
std::string existingFile(const py::object& path, const std::string& arg) {
  std::string p;
  try {
    p = py::module_::import("os").attr("fspath")(path).cast<std::string>();
  } catch (const py::error_already_set&) {
    throw py::type_error(fmt::format("{}: expected a path (str or os.PathLike), got {}", arg,
                                     py::str(py::type::handle_of(path).attr("__name__")).cast<std::string>()));
  } catch (const py::cast_error&) {
    throw py::type_error(fmt::format("{}: expected a path given as str, got bytes", arg));
  }
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(p, ec);
  if (st.type() == std::filesystem::file_type::not_found)
    raise(PyExc_FileNotFoundError, fmt::format("{}: no such file: '{}'", arg, p));
  if (ec) raise(PyExc_OSError, fmt::format("{}: cannot access '{}': {}", arg, p, ec.message()));
  if (st.type() == std::filesystem::file_type::directory)
    raise(PyExc_IsADirectoryError, fmt::format("{}: '{}' is a directory, expected a file", arg, p));
  if (st.type() != std::filesystem::file_type::regular)
    raise(PyExc_OSError, fmt::format("{}: '{}' is {}, not a regular file (expected a file)", arg, p, fileKind(st.type())));
  return p;
}

std::string optionalString(const py::object& o, const std::string& arg) {
  if (o.is_none()) return "";
  if (!py::isinstance<py::str>(o)) throw py::type_error(fmt::format("{}: expected a link name (str) or None", arg));
  return o.cast<std::string>();
}

// Names of the tangent DOFs (nv: a ball joint's rotation vector rx ry rz) or of the
// configuration entries (nq: its quaternion qx qy qz qw), one per coordinate.
std::vector<std::string> coordinateNames(const Model& m, bool configuration) {
  static const std::vector<const char*> kBallTangent{"rx", "ry", "rz"}, kBallConfig{"qx", "qy", "qz", "qw"};
  static const std::vector<const char*> kFreeTangent{"x", "y", "z", "rx", "ry", "rz"},
      kFreeConfig{"x", "y", "z", "qx", "qy", "qz", "qw"};
  std::vector<std::string> out;
  for (int j = 0; j < m.numJoints(); ++j) {
    const std::string& n = m.joint(j).name;
    const std::vector<const char*>* parts = nullptr;
    switch (m.type(j)) {
      case JointType::kRevolute:
      case JointType::kPrismatic:
        out.push_back(n);
        break;
      case JointType::kBall:
        parts = configuration ? &kBallConfig : &kBallTangent;
        break;
      case JointType::kFree:
        parts = configuration ? &kFreeConfig : &kFreeTangent;
        break;
      case JointType::kFixed:
        break;
    }
    if (parts)
      for (const char* s : *parts) out.push_back(n + ":" + s);
  }
  return out;
}

constexpr int kMaxChainJoints = 10000;  // as `ikbench run --chain`

ChainSpec chainSpec(int joints, double revolute, double ball, double prismatic, double min_length, double max_length,
                    const std::string& axes, double limit, double prismatic_range, const std::string& limit_style) {
  if (joints < 1 || joints > kMaxChainJoints)
    throw py::value_error(fmt::format("joints: {} is out of range: expected 1..{}", joints, kMaxChainJoints));
  ChainSpec s;
  s.joints = joints;
  s.revolute = revolute;
  s.ball = ball;
  s.prismatic = prismatic;
  s.min_length = min_length;
  s.max_length = max_length;
  try {
    s.axes = kAxisStyleNames.parse(axes);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(fmt::format("axes: {}", e.what()));
  }
  try {
    s.limit_style = kLimitStyleNames.parse(limit_style);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(fmt::format("limit_style: {}", e.what()));
  }
  s.limit = limit;
  s.prismatic_range = prismatic_range;
  return s;
}

std::shared_ptr<PyModel> wrap(std::shared_ptr<const Model> model, std::string source) {
  auto out = std::make_shared<PyModel>();
  out->model = std::move(model);
  out->source = std::move(source);
  return out;
}

// Forward kinematics of one body's point for q (nq,) or (N, nq); returns
// positions (3,) / (N, 3) and quaternions (4,) / (N, 4).
py::tuple fk(const PyModel& self, const py::object& q_obj, const py::object& body_obj, const py::object& point_obj) {
  const Model& model = *self.model;
  const int body = body_obj.is_none() ? defaultEffector(model, "body") : resolveBody(model, body_obj, "body");
  const Eigen::Vector3d point =
      point_obj.is_none() ? Eigen::Vector3d::Zero() : Eigen::Vector3d(vectorArg(point_obj, 3, "point"));
  const DoubleArray q = asDoubleArray(q_obj, "q");
  const int nq = model.nq();
  const bool batch = q.ndim() == 2;
  if (!((q.ndim() == 1 && q.shape(0) == nq) || (batch && q.shape(1) == nq)))
    throw py::value_error(fmt::format("q: expected shape ({},) or (N, {}) (nq of model '{}'), got shape {}", nq, nq,
                                      model.name(), shapeText(q)));
  const py::ssize_t n = batch ? q.shape(0) : 1;
  for (py::ssize_t i = 0; i < n; ++i) {
    std::string why;
    if (!isValidConfiguration(model, Eigen::Map<const Eigen::VectorXd>(q.data() + i * nq, nq), &why))
      throw py::value_error(batch ? fmt::format("q: row {}: {}", i, why) : fmt::format("q: {}", why));
  }
  py::array_t<double> pos = batch ? py::array_t<double>({n, py::ssize_t{3}}) : py::array_t<double>(3);
  py::array_t<double> quat = batch ? py::array_t<double>({n, py::ssize_t{4}}) : py::array_t<double>(4);
  double* p_out = pos.mutable_data();
  double* r_out = quat.mutable_data();
  const double* q_in = q.data();
  {
    py::gil_scoped_release release;
    std::vector<Pose3d> poses(model.numJoints());
    for (py::ssize_t i = 0; i < n; ++i) {
      forwardKinematics<double>(model, q_in + i * nq, poses.data());
      const Pose3d& T = poses[body];
      Eigen::Map<Eigen::Vector3d>(p_out + 3 * i) = T.act(point);
      Eigen::Map<Eigen::Vector4d>(r_out + 4 * i) = rotationToQuaternion(T.R);
    }
  }
  return py::make_tuple(pos, quat);
}

// Every body's world pose: (num_bodies, 3) positions and (num_bodies, 4) quaternions.
py::tuple bodyPoses(const PyModel& self, const py::object& q_obj) {
  const Model& model = *self.model;
  const Eigen::VectorXd q = configurationArg(model, q_obj, "q");
  const auto poses = forwardKinematics<double>(model, q.data());
  const py::ssize_t nb = model.numJoints();
  py::array_t<double> pos({nb, py::ssize_t{3}}), quat({nb, py::ssize_t{4}});
  for (py::ssize_t b = 0; b < nb; ++b) {
    Eigen::Map<Eigen::Vector3d>(pos.mutable_data() + 3 * b) = poses[b].p;
    Eigen::Map<Eigen::Vector4d>(quat.mutable_data() + 4 * b) = rotationToQuaternion(poses[b].R);
  }
  return py::make_tuple(pos, quat);
}

}  // namespace

void bindModel(py::module_& m) {
  const ChainSpec cd{};  // defaults, written once in the struct
  const TreeSpec td{};

  py::class_<PyModel, std::shared_ptr<PyModel>> cls(m, "Model", R"doc(
A kinematic model: an immutable tree of joints (revolute, prismatic, ball,
free root, fixed), each moving one body. Body i is the frame after joint i's
motion. Configurations q have nq entries (ball joints a quaternion x, y, z, w;
a free root position + quaternion), tangent vectors and limits nv entries.
Build one with Model.from_urdf, Model.from_bvh, ikbench.random_chain or
ikbench.random_tree. Models are shared, never copied.)doc");

  cls.def_static(
         "from_urdf",
         [](const py::object& path, const py::object& base, const py::object& tip, bool floating_base) {
           UrdfOptions o;
           o.base = optionalString(base, "base");
           o.tip = optionalString(tip, "tip");
           o.floating_base = floating_base;
           const std::string file = existingFile(path, "path");
           UrdfModel um;
           {
             py::gil_scoped_release release;
             um = loadUrdf(file, o);
           }
           auto out = wrap(um.model, file);
           out->warnings = um.warnings;
           return out;
         },
         py::arg("path"), py::arg("base") = py::none(), py::arg("tip") = py::none(), py::arg("floating_base") = false,
         R"doc(
Loads a URDF robot. Each URDF joint becomes a model joint whose body is named
after its child link. Give base and tip (link names) to keep one chain, or
neither to keep the whole tree below the root link. floating_base adds a free
root joint. Mimic joints are fixed at their offset (listed in .warnings).
Raises FileNotFoundError, or ValueError naming the file and line.)doc")
      .def_static(
          "from_bvh",
          [](const py::object& path, double scale) {
            BvhOptions o;
            o.scale = scale;
            const std::string file = existingFile(path, "path");
            BvhClip clip;
            {
              py::gil_scoped_release release;
              clip = loadBvh(file, o);
            }
            auto out = wrap(clip.model, file);
            out->warnings = clip.notes;
            out->frame_time = clip.frame_time;
            out->frames.resize(clip.numFrames(), clip.model->nq());
            for (int f = 0; f < clip.numFrames(); ++f) out->frames.row(f) = clip.frames[f].transpose();
            return out;
          },
          py::arg("path"), py::arg("scale") = 0.0,
          R"doc(
Loads a BVH motion-capture clip's skeleton: rotation channels become ball
joints, moving translation channels a free root; End Sites are fixed bodies
'<joint>_end' (the effectors). scale is metres per file unit (0 = guessed
from the skeleton's size). The clip's motion is in .frames, one configuration
per frame, and .frame_time. Raises FileNotFoundError, or ValueError naming the
file and line.)doc")
      .def_property_readonly("name", [](const PyModel& s) { return s.model->name(); })
      .def_property_readonly(
          "source", [](const PyModel& s) { return s.source; },
          "The file the model was loaded from, or the generator call.")
      .def_property_readonly(
          "warnings", [](const PyModel& s) { return s.warnings; },
          "Approximations the loader made (URDF mimic joints, BVH channel notes).")
      .def_property_readonly(
          "nq", [](const PyModel& s) { return s.model->nq(); }, "Configuration size.")
      .def_property_readonly(
          "nv", [](const PyModel& s) { return s.model->nv(); }, "Tangent size (DOF).")
      .def_property_readonly("num_bodies", [](const PyModel& s) { return s.model->numJoints(); })
      .def_property_readonly(
          "joint_names",
          [](const PyModel& s) {
            std::vector<std::string> out;
            for (int j = 0; j < s.model->numJoints(); ++j) out.push_back(s.model->joint(j).name);
            return out;
          },
          "Joint i moves body i; fixed joints included.")
      .def_property_readonly("body_names",
                             [](const PyModel& s) {
                               std::vector<std::string> out;
                               for (int j = 0; j < s.model->numJoints(); ++j) out.push_back(s.model->bodyName(j));
                               return out;
                             })
      .def_property_readonly("joint_types",
                             [](const PyModel& s) {
                               std::vector<std::string> out;
                               for (int j = 0; j < s.model->numJoints(); ++j)
                                 out.emplace_back(toString(s.model->type(j)));
                               return out;
                             })
      .def_property_readonly(
          "parents",
          [](const PyModel& s) {
            std::vector<int> out;
            for (int j = 0; j < s.model->numJoints(); ++j) out.push_back(s.model->parent(j));
            return out;
          },
          "Parent body of each body, -1 for a root.")
      .def_property_readonly(
          "dof_names", [](const PyModel& s) { return coordinateNames(*s.model, false); },
          "Names of the nv tangent DOFs (the entries of limits): the joint name, or "
          "'<joint>:rx' etc. for ball and free joints.")
      .def_property_readonly(
          "configuration_names", [](const PyModel& s) { return coordinateNames(*s.model, true); },
          "Names of the nq configuration entries ('<joint>:qx' etc. for quaternions).")
      .def_property_readonly(
          "limits",
          [](const PyModel& s) {
            return py::make_tuple(toNumpy(s.model->lowerLimits()), toNumpy(s.model->upperLimits()));
          },
          "(lower, upper): two arrays of nv limits (rad or m; +-inf where unlimited). Ball joints: bounds of the "
          "rotation-vector components.")
      .def_property_readonly("dof_weights", [](const PyModel& s) { return toNumpy(s.model->dofWeights()); })
      .def_property_readonly(
          "effectors",
          [](const PyModel& s) {
            std::vector<std::string> out;
            for (int b : effectorBodies(*s.model, {})) out.push_back(s.model->bodyName(b));
            return out;
          },
          "Leaf bodies moved by some joint: the default effectors of goal sets and solve_batch.")
      .def_property_readonly(
          "frames",
          [](py::object self) -> py::object {
            const PyModel& s = self.cast<const PyModel&>();
            if (s.frames.rows() == 0) return py::none();
            // A read-only view of the model's own storage, kept alive by the model.
            py::array_t<double> view({s.frames.rows(), s.frames.cols()},
                                     {s.frames.cols() * py::ssize_t(sizeof(double)), py::ssize_t(sizeof(double))},
                                     s.frames.data(), self);
            view.attr("setflags")(py::arg("write") = false);
            return std::move(view);
          },
          "BVH models: the clip's motion as an (F, nq) array, one configuration per frame (a read-only view, "
          "no copy); None for other models.")
      .def_property_readonly(
          "frame_time", [](const PyModel& s) { return s.frame_time; },
          "BVH models: seconds per frame; 0 for other models.")
      .def(
          "body_index", [](const PyModel& s, const py::object& body) { return resolveBody(*s.model, body, "body"); },
          py::arg("body"), "Index of a body given by name (or by the name of the joint that moves it).")
      .def("fk", &fk, py::arg("q"), py::arg("body") = py::none(), py::arg("point") = py::none(),
           R"doc(
Forward kinematics of a point (default: the origin) of one body (name or
index; default: the model's single effector). q is one configuration (nq,)
or a batch (N, nq). Returns (position, quaternion): (3,) and (4,) world
position [m] and orientation (x, y, z, w with w >= 0), or (N, 3) and (N, 4).)doc")
      .def("body_poses", &bodyPoses, py::arg("q"),
           "World pose of every body for one configuration: positions (num_bodies, 3) and quaternions "
           "(num_bodies, 4), x, y, z, w with w >= 0.")
      .def(
          "neutral", [](const PyModel& s) { return toNumpy(s.model->neutralConfiguration()); },
          "Zero angles and displacements, identity rotations, clamped into the limits (nq).")
      .def(
          "middle", [](const PyModel& s) { return toNumpy(s.model->middleConfiguration()); },
          "The middle of the limits where finite, neutral elsewhere (nq): the default start of a solve.")
      .def(
          "random_configuration",
          [](const PyModel& s, const py::object& seed) {
            Rng rng(seedArg(seed, "seed"));
            return toNumpy(randomConfiguration(*s.model, rng));
          },
          py::arg("seed"),
          "A uniform random configuration within the limits (nq), from ikbench.Rng(seed): the same numbers as "
          "the C++ randomConfiguration on every machine. Unlimited revolute joints draw from [-pi, pi].")
      .def(
          "within_limits",
          [](const PyModel& s, const py::object& q, double slack) {
            return withinLimits(*s.model, configurationArg(*s.model, q, "q"), slack);
          },
          py::arg("q"), py::arg("slack") = 1e-9, "True if q is inside the limits up to slack [rad or m].")
      .def("__repr__", [](const PyModel& s) {
        return fmt::format("<ikbench.Model '{}': {} bodies, nq={}, nv={}>", s.model->name(), s.model->numJoints(),
                           s.model->nq(), s.model->nv());
      });

  m.def(
      "random_chain",
      [](const py::object& joints_obj, const py::object& seed, double revolute, double ball, double prismatic,
         double min_length, double max_length, const std::string& axes, double limit, double prismatic_range,
         const std::string& limit_style) {
        const int joints = static_cast<int>(integerArg(joints_obj, "joints", 1, kMaxChainJoints));
        const ChainSpec spec = chainSpec(joints, revolute, ball, prismatic, min_length, max_length, axes, limit,
                                         prismatic_range, limit_style);
        const std::uint64_t s = seedArg(seed, "seed");
        return wrap(randomChain(spec, s), fmt::format("random_chain(joints={}, seed={})", joints, s));
      },
      py::arg("joints"), py::arg("seed"), py::kw_only(), py::arg("revolute") = cd.revolute, py::arg("ball") = cd.ball,
      py::arg("prismatic") = cd.prismatic, py::arg("min_length") = cd.min_length, py::arg("max_length") = cd.max_length,
      py::arg("axes") = std::string(toString(cd.axes)), py::arg("limit") = cd.limit,
      py::arg("prismatic_range") = cd.prismatic_range, py::arg("limit_style") = std::string(toString(cd.limit_style)),
      R"doc(
A seeded random serial chain along +z ending in a fixed body 'tip' (the C++
randomChain with ChainSpec's fields): revolute / ball / prismatic are joint-type
fractions; link lengths uniform in [min_length, max_length] m; axes 'random',
'alternating' (z, y) or 'planar' (all y); limit [rad] with limit_style
'symmetric' (+-limit; <= 0 means none), 'realistic' (asymmetric, within
+-limit) or 'none'; prismatic joints travel [0, prismatic_range] m. The same
seed gives the same chain as the C++ generators and the harness.)doc");

  m.def(
      "random_tree",
      [](const py::object& seed, int trunk, int branches, int branch_joints, int levels, double spread, double revolute,
         double ball, double prismatic, double min_length, double max_length, const std::string& axes, double limit,
         double prismatic_range, const std::string& limit_style) {
        TreeSpec spec;
        spec.joint =
            chainSpec(1, revolute, ball, prismatic, min_length, max_length, axes, limit, prismatic_range, limit_style);
        spec.trunk = trunk;
        spec.branches = branches;
        spec.branch_joints = branch_joints;
        spec.levels = levels;
        spec.spread = spread;
        const std::uint64_t s = seedArg(seed, "seed");
        return wrap(randomTree(spec, s), fmt::format("random_tree(seed={})", s));
      },
      py::arg("seed"), py::kw_only(), py::arg("trunk") = td.trunk, py::arg("branches") = td.branches,
      py::arg("branch_joints") = td.branch_joints, py::arg("levels") = td.levels, py::arg("spread") = td.spread,
      py::arg("revolute") = cd.revolute, py::arg("ball") = cd.ball, py::arg("prismatic") = cd.prismatic,
      py::arg("min_length") = cd.min_length, py::arg("max_length") = cd.max_length,
      py::arg("axes") = std::string(toString(cd.axes)), py::arg("limit") = cd.limit,
      py::arg("prismatic_range") = cd.prismatic_range, py::arg("limit_style") = std::string(toString(cd.limit_style)),
      R"doc(
A seeded random tree (the C++ randomTree): a trunk of `trunk` joints, then
`levels` forks into `branches` sub-chains of `branch_joints` joints, each
leaving its parent's axis at the angle `spread` [rad]; every final branch ends
in a fixed body 'tipK'. Joint fields as in random_chain.)doc");

  m.def(
      "reachable_targets",
      [](const std::shared_ptr<PyModel>& model, const py::object& count_obj, const py::object& seed,
         const py::object& body, const std::string& kind) {
        constexpr int kMaxCount = 100'000'000;
        const int count = static_cast<int>(integerArg(count_obj, "count", 0, kMaxCount));
        GoalSetSpec spec;
        spec.count = count;
        spec.type = GoalSetType::kReachable;
        spec.start = StartPolicy::kNominal;
        if (kind == "pose") {
          spec.kind = GoalKind::kPose;
        } else if (kind == "position") {
          spec.kind = GoalKind::kPosition;
        } else {
          throw py::value_error(fmt::format("kind: '{}' is not one of: pose, position", kind));
        }
        const Model& mdl = *model->model;
        const int b = body.is_none() ? defaultEffector(mdl, "body") : resolveBody(mdl, body, "body");
        spec.effectors = {mdl.bodyName(b)};
        const std::uint64_t s = seedArg(seed, "seed");
        const int cols = spec.kind == GoalKind::kPose ? 7 : 3;
        py::array_t<double> out({py::ssize_t{count}, py::ssize_t{cols}});
        double* o = out.mutable_data();
        {
          py::gil_scoped_release release;
          const std::vector<Problem> problems = makeGoals(model->model, spec, s, "");
          for (int i = 0; i < count; ++i) {
            const Goal& g = problems[i].goals.front();
            Eigen::Map<Eigen::Vector3d>(o + cols * i) = g.target_position;
            if (cols == 7) Eigen::Map<Eigen::Vector4d>(o + cols * i + 3) = rotationToQuaternion(g.target_orientation);
          }
        }
        return out;
      },
      py::arg("model"), py::arg("count"), py::arg("seed"), py::arg("body") = py::none(), py::arg("kind") = "pose",
      R"doc(
Reachable targets by the TRAC-IK protocol (the C++ makeGoals, 'reachable'):
target i is the pose (or position) of `body` under a uniform random
configuration within the limits drawn from Rng(Rng.mix(seed, i)). Returns an
(count, 7) array of position + quaternion (x, y, z, w), or (count, 3) for
kind='position', ready for solve_batch. For a URDF model loaded with neither
base nor tip, reachable_targets(model, N, S) are exactly the targets of
`ikbench run --urdf FILE --samples N --seed S`.)doc");

  m.def(
      "rng_mix", [](const py::object& a, const py::object& b) { return Rng::mix(seedArg(a, "a"), seedArg(b, "b")); },
      py::arg("a"), py::arg("b"), "Rng::mix(a, b): the seed-derivation function of the harness (64-bit integers).");
  m.def(
      "rng_hash", [](const std::string& text) { return Rng::hash(text); }, py::arg("text"),
      "Rng::hash(text): FNV-1a (64 bit) of a string, as the harness uses for names in seeds.");
}

}  // namespace ikbench::python
