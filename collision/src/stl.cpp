// STL files (binary and ASCII), the mesh format of obstacles in scene files.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "ikbench/collision/world.h"

namespace ikbench {

namespace {

Eigen::Vector3d finiteVertex(double x, double y, double z, const std::string& path, std::size_t tri) {
  if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z))
    throw std::runtime_error(fmt::format("{}: triangle {}: a vertex coordinate is not finite", path, tri));
  return {x, y, z};
}

}  // namespace

TriangleMesh readStl(const std::string& path, std::size_t max_triangles) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open the STL file", path));
  std::ostringstream buf;
  buf << in.rdbuf();
  const std::string data = buf.str();
  TriangleMesh mesh;
  auto add = [&](const Eigen::Vector3d& a, const Eigen::Vector3d& b, const Eigen::Vector3d& c) {
    const int n = static_cast<int>(mesh.vertices.size());
    mesh.vertices.push_back(a);
    mesh.vertices.push_back(b);
    mesh.vertices.push_back(c);
    mesh.triangles.emplace_back(n, n + 1, n + 2);
  };
  // Binary: 80-byte header, uint32 count, 50 bytes per triangle. A file whose
  // size matches that layout is binary even if its header says "solid".
  if (data.size() >= 84) {
    std::uint32_t count = 0;
    std::memcpy(&count, data.data() + 80, 4);
    if (data.size() == 84 + 50 * static_cast<std::size_t>(count)) {
      if (count > max_triangles)
        throw std::runtime_error(
            fmt::format("{}: {} triangles, more than the {} a scene takes", path, count, max_triangles));
      for (std::uint32_t t = 0; t < count; ++t) {
        float v[9];
        std::memcpy(v, data.data() + 84 + 50 * static_cast<std::size_t>(t) + 12, sizeof v);
        add(finiteVertex(v[0], v[1], v[2], path, t), finiteVertex(v[3], v[4], v[5], path, t),
            finiteVertex(v[6], v[7], v[8], path, t));
      }
      return mesh;
    }
  }
  if (data.compare(0, 5, "solid") != 0)
    throw std::runtime_error(fmt::format(
        "{}: not an STL file (neither 'solid ...' text nor a binary STL of 84 + 50 x count bytes)", path));
  std::istringstream text(data);
  std::string word;
  std::vector<Eigen::Vector3d> facet;
  while (text >> word) {
    if (word == "vertex") {
      double x, y, z;
      if (!(text >> x >> y >> z))
        throw std::runtime_error(fmt::format("{}: facet {}: 'vertex' needs three numbers", path, mesh.triangles.size()));
      facet.push_back(finiteVertex(x, y, z, path, mesh.triangles.size()));
    } else if (word == "endfacet") {
      if (facet.size() != 3)
        throw std::runtime_error(
            fmt::format("{}: facet {}: {} vertices (expected 3)", path, mesh.triangles.size(), facet.size()));
      if (mesh.triangles.size() >= max_triangles)
        throw std::runtime_error(fmt::format("{}: more than the {} triangles a scene takes", path, max_triangles));
      add(facet[0], facet[1], facet[2]);
      facet.clear();
    }
  }
  if (mesh.triangles.empty()) throw std::runtime_error(fmt::format("{}: the STL file has no triangles", path));
  return mesh;
}

}  // namespace ikbench
