"""Batched rotations in numpy (unit quaternions x, y, z, w; axis-angle; rotation vectors) for the
independent forward kinematics of verify and the distances of collision."""

import numpy as np


def quat_to_matrix(q):
    """(..., 4) quaternions x, y, z, w (normalised here) -> (..., 3, 3) rotation matrices."""
    q = np.asarray(q, dtype=float)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    q = q / np.where(n > 0, n, 1.0)
    x, y, z, w = np.moveaxis(q, -1, 0)
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - z * w)
    R[..., 0, 2] = 2 * (x * z + y * w)
    R[..., 1, 0] = 2 * (x * y + z * w)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - x * w)
    R[..., 2, 0] = 2 * (x * z - y * w)
    R[..., 2, 1] = 2 * (y * z + x * w)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def axis_angle_matrix(axis, angle):
    """Rotation by `angle` (n,) about the unit `axis` (3,): Rodrigues' formula, (n, 3, 3)."""
    k = np.asarray(axis, dtype=float)
    k = k / np.linalg.norm(k)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3) + s * K + (1 - c) * (K @ K)


def rotation_angle(R):
    """Angle of rotation matrices (..., 3, 3) in [0, pi], accurate near 0 and near pi:
    atan2(|vee(R - R^T)| / 2, (trace - 1) / 2)."""
    v = np.stack([R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0], R[..., 1, 0] - R[..., 0, 1]], axis=-1)
    s = np.linalg.norm(v, axis=-1) / 2
    c = (np.trace(R, axis1=-2, axis2=-1) - 1) / 2
    return np.arctan2(s, c)


def quat_to_rotvec(q):
    """(..., 4) x, y, z, w -> rotation vectors (..., 3) with angle in [0, pi] (w made >= 0)."""
    q = np.asarray(q, dtype=float)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    q = np.where(q[..., 3:4] < 0, -q, q)
    v = q[..., :3]
    s = np.linalg.norm(v, axis=-1)
    angle = 2 * np.arctan2(s, q[..., 3])
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(s > 1e-12, angle / np.where(s > 0, s, 1), 2.0)  # small angles: 2 v
    return v * scale[..., None]
