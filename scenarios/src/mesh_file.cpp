// Mesh files (mesh_file.h): assimp reads them, qhull makes their hulls.
#include "ikbench/scenarios/mesh_file.h"

#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <fmt/format.h>

extern "C" {
#include <libqhull_r/qhull_ra.h>
}

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "ikbench/scenarios/input_limits.h"

namespace ikbench {
namespace fs = std::filesystem;

namespace {

void addNode(const aiScene* scene, const aiNode* node, const aiMatrix4x4& parent, const Eigen::Vector3d& scale,
             std::size_t max_triangles, const std::string& path, TriangleMesh* out) {
  const aiMatrix4x4 T = parent * node->mTransformation;
  for (unsigned k = 0; k < node->mNumMeshes; ++k) {
    const aiMesh* m = scene->mMeshes[node->mMeshes[k]];
    const int first = static_cast<int>(out->vertices.size());
    for (unsigned v = 0; v < m->mNumVertices; ++v) {
      const aiVector3D p = T * m->mVertices[v];
      const Eigen::Vector3d x(p.x * scale.x(), p.y * scale.y(), p.z * scale.z());
      if (!x.allFinite()) throw std::runtime_error(fmt::format("{}: a vertex coordinate is not finite", path));
      out->vertices.push_back(x);
    }
    for (unsigned f = 0; f < m->mNumFaces; ++f) {
      const aiFace& face = m->mFaces[f];
      if (face.mNumIndices != 3) continue;  // points and lines of a mixed mesh
      if (out->triangles.size() >= max_triangles)
        throw std::runtime_error(fmt::format("{}: more than {} triangles (the limit)", path, max_triangles));
      out->triangles.emplace_back(first + static_cast<int>(face.mIndices[0]), first + static_cast<int>(face.mIndices[1]),
                                  first + static_cast<int>(face.mIndices[2]));
    }
  }
  for (unsigned c = 0; c < node->mNumChildren; ++c)
    addNode(scene, node->mChildren[c], T, scale, max_triangles, path, out);
}

}  // namespace

TriangleMesh readMeshFile(const std::string& path, const Eigen::Vector3d& scale, std::size_t max_triangles) {
  Assimp::Importer importer;
  // A robot description's meshes are z-up, whatever a COLLADA file's
  // <up_axis> says (assimp would turn them y-up).
  importer.SetPropertyBool(AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, true);
  const aiScene* scene =
      importer.ReadFile(path, aiProcess_Triangulate | aiProcess_JoinIdenticalVertices | aiProcess_SortByPType);
  if (!scene || !scene->mRootNode)
    throw std::runtime_error(fmt::format("{}: cannot read the mesh file: {}", path, importer.GetErrorString()));
  TriangleMesh out;
  addNode(scene, scene->mRootNode, aiMatrix4x4(), scale, max_triangles, path, &out);
  if (out.triangles.empty()) throw std::runtime_error(fmt::format("{}: the mesh file has no triangles", path));
  return out;
}

TriangleMesh convexHull(const TriangleMesh& mesh, const std::string& what) {
  std::vector<coordT> points;
  points.reserve(3 * mesh.vertices.size());
  for (const Eigen::Vector3d& v : mesh.vertices) points.insert(points.end(), {v.x(), v.y(), v.z()});
  qhT qh_storage;
  qhT* qh = &qh_storage;
  // qhull reports its errors to a stream: a temporary file keeps them for the message.
  FILE* err = std::tmpfile();
  qh_zero(qh, err);
  char options[] = "qhull Qt";
  const int code = qh_new_qhull(qh, 3, static_cast<int>(mesh.vertices.size()), points.data(), False, options,
                                nullptr, err);
  TriangleMesh hull;
  if (code == 0) {
    std::vector<int> index(mesh.vertices.size(), -1);
    Eigen::Vector3d centre = Eigen::Vector3d::Zero();
    vertexT* vertex;
    FORALLvertices {
      const int id = qh_pointid(qh, vertex->point);
      index[static_cast<size_t>(id)] = static_cast<int>(hull.vertices.size());
      hull.vertices.push_back(mesh.vertices[static_cast<size_t>(id)]);
      centre += hull.vertices.back();
    }
    centre /= static_cast<double>(hull.vertices.size());
    facetT* facet;
    FORALLfacets {
      int tri[3], n = 0;
      vertexT** vertexp;
      FOREACHvertex_(facet->vertices) if (n < 3) tri[n++] = index[static_cast<size_t>(qh_pointid(qh, vertex->point))];
      if (n != 3) continue;
      const Eigen::Vector3d& a = hull.vertices[static_cast<size_t>(tri[0])];
      const Eigen::Vector3d normal = (hull.vertices[static_cast<size_t>(tri[1])] - a)
                                         .cross(hull.vertices[static_cast<size_t>(tri[2])] - a);
      if (normal.dot(a - centre) < 0.0) std::swap(tri[1], tri[2]);
      hull.triangles.emplace_back(tri[0], tri[1], tri[2]);
    }
  }
  std::string message;
  if (code != 0) {
    std::rewind(err);
    char buf[512];
    const size_t n = std::fread(buf, 1, sizeof buf - 1, err);
    message.assign(buf, n);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    if (const size_t nl = message.find('\n'); nl != std::string::npos) message.resize(nl);
  }
  qh_freeqhull(qh, !qh_ALL);
  int curlong = 0, totlong = 0;
  qh_memfreeshort(qh, &curlong, &totlong);
  std::fclose(err);
  if (code != 0 || hull.triangles.size() < 4)
    throw std::runtime_error(
        fmt::format("{}: no convex hull: the vertices span no volume (a flat mesh?): {}", what, message));
  return hull;
}

Shape meshShape(const std::string& name, const std::string& file, const Eigen::Vector3d& scale, bool hull,
                const Pose3d& pose, std::size_t max_triangles, std::size_t* triangles) {
  if (!scale.allFinite() || !(scale.minCoeff() > 0.0))
    throw std::runtime_error(fmt::format("{}: scale must be three finite numbers > 0", file));
  if (std::error_code ec; fs::file_size(file, ec) > kMaxInputFileBytes || ec)
    throw std::runtime_error(fmt::format("{}: not a readable file of at most {} bytes", file, kMaxInputFileBytes));
  const std::size_t left = max_triangles > *triangles ? max_triangles - *triangles : 0;
  auto mesh = std::make_shared<TriangleMesh>(readMeshFile(file, scale, left));
  *triangles += mesh->triangles.size();
  if (hull) *mesh = convexHull(*mesh, file);
  Shape shape;
  shape.kind = ShapeKind::kMesh;
  shape.name = name;
  shape.pose = pose;
  shape.file = file;
  shape.convex = hull;
  shape.mesh = std::move(mesh);
  return shape;
}

std::string resolveMeshPath(const std::string& uri, const std::string& base_dir,
                            const std::vector<std::string>& package_path, std::vector<std::string>* looked) {
  auto found = [&](const fs::path& p) {
    if (looked) looked->push_back(p.string());
    std::error_code ec;
    return fs::is_regular_file(p, ec);
  };
  const std::string kPackage = "package://", kFile = "file://";
  if (uri.compare(0, kPackage.size(), kPackage) == 0) {
    const std::string rest = uri.substr(kPackage.size());
    const size_t slash = rest.find('/');
    if (slash == std::string::npos || slash == 0) return "";
    const std::string name = rest.substr(0, slash), inner = rest.substr(slash + 1);
    std::vector<std::string> dirs = package_path;
    if (const char* ros = std::getenv("ROS_PACKAGE_PATH")) {
      std::string s(ros);
      for (size_t i = 0; i <= s.size();) {
        const size_t j = std::min(s.find(':', i), s.size());
        if (j > i) dirs.push_back(s.substr(i, j - i));
        i = j + 1;
      }
    }
    for (const std::string& d : dirs) {
      const fs::path dir(d);
      if (dir.filename() == name && found(dir / inner)) return (dir / inner).string();
      if (found(dir / name / inner)) return (dir / name / inner).string();
      // A workspace: the package a level or two below (src/NAME, src/group/NAME).
      std::error_code ec;
      for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
           !ec && it != end; it.increment(ec)) {
        if (it.depth() >= 1) it.disable_recursion_pending();
        if (it->is_directory(ec) && it->path().filename() == name && found(it->path() / inner))
          return (it->path() / inner).string();
      }
    }
    return "";
  }
  fs::path p = uri.compare(0, kFile.size(), kFile) == 0 ? fs::path(uri.substr(kFile.size())) : fs::path(uri);
  if (p.is_relative()) p = fs::path(base_dir) / p;
  return found(p) ? p.string() : "";
}

}  // namespace ikbench
