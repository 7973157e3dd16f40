// Mesh files of robot descriptions: reading them (assimp: STL, COLLADA,
// OBJ, ...), finding them (package:// URIs) and their convex hulls (qhull).
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <string>
#include <vector>

#include "ikbench/collision/shapes.h"

namespace ikbench {

// The triangles of every mesh in the file, in the file's frame (node
// transforms applied; COLLADA's up axis ignored, as ROS tools read meshes:
// z is up in a robot description whatever the file says, its unit kept),
// multiplied by `scale` per axis. Throws std::runtime_error naming the file
// when it cannot be read, holds no triangles or more than max_triangles, or
// a coordinate that is not finite.
TriangleMesh readMeshFile(const std::string& path, const Eigen::Vector3d& scale, std::size_t max_triangles);

// The convex hull of the mesh's vertices (Barber, Dobkin and Huhdanpaa
// 1996, "The Quickhull algorithm for convex hulls", ACM TOMS 22(4); Debian's
// libqhull), triangulated, every face's normal pointing out. Throws
// std::runtime_error naming `what` for vertices that span no volume (a flat
// mesh).
TriangleMesh convexHull(const TriangleMesh& mesh, const std::string& what);

// A link's collision mesh named `name` at `pose` in its body frame: the
// triangles of `file` scaled per axis (a file of at most kMaxInputFileBytes),
// or their convex hull when `hull` (checked as a solid). *triangles counts
// the triangles read so far for one model, which stay within max_triangles.
// Throws std::runtime_error naming the file.
Shape meshShape(const std::string& name, const std::string& file, const Eigen::Vector3d& scale, bool hull,
                const Pose3d& pose, std::size_t max_triangles, std::size_t* triangles);

// The file a robot description's mesh reference names: package://NAME/PATH
// as PATH under package NAME, found in `package_path` and then in
// $ROS_PACKAGE_PATH's directories (a directory NAME in one of them or up to
// two levels below it, or the directory itself when it is named NAME);
// file:///ABS as ABS; a relative path against base_dir. Empty when no such
// regular file exists; `looked` (if given) receives the places tried.
std::string resolveMeshPath(const std::string& uri, const std::string& base_dir,
                            const std::vector<std::string>& package_path, std::vector<std::string>* looked = nullptr);

}  // namespace ikbench
