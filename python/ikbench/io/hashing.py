"""FNV-1a 64-bit hash of a byte string, as written in run.json's manifest.

FNV-1a: h = 0xcbf29ce484222325; for each byte b: h = (h XOR b) * 0x100000001b3 mod 2^64.
The recurrence is sequential, so a byte loop runs one interpreted step per byte, slow for the
large files of a run. `fnv1a64` computes the same value with numpy, in passes over whole arrays,
using two facts:

* the low 8 bits of h after a byte depend only on the low 8 bits before it and the byte
  (multiplication mod 2^8 only sees the low bits), and bit j of those low bits satisfies
  l'_j = l_j XOR b_j XOR c_j, where c_j is bit j of (low_j(l XOR b) * prime) and low_j keeps the
  bits below j. Given bits 0..j-1 of every state, bit j of every state is a prefix XOR, so the
  low bytes of all states follow from 8 vectorised passes (the prefix XOR 64 bits per word);
* with the low bytes known, h XOR b = h + d with d = (l XOR b) - l, so the final hash is
  h0 * P^N + sum_k d_k * P^(N-k) mod 2^64: a dot product in wrapping uint64 arithmetic.

`fnv1a64_reference` is the plain byte loop; the tests check that both agree.
"""

import numpy as np

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1
_CHUNK = 1 << 18
_POWERS = None  # P^CHUNK .. P^1 (uint64, wrapping), built on first use


def fnv1a64_reference(data, h=FNV_OFFSET):
    """The byte loop of the definition (slow; for tests and tiny inputs)."""
    for b in bytes(data):
        h = ((h ^ b) * FNV_PRIME) & _MASK
    return h


def _prefix_xor_bits(bits, first):
    """Inclusive prefix XOR of a 0/1 uint8 array (length a multiple of 64), XORed with `first`:
    64 bits per uint64 word (a shift cascade inside each word), a running XOR of the word
    parities across words."""
    w = np.packbits(bits, bitorder="little").view(np.uint64)
    for s in (1, 2, 4, 8, 16, 32):
        w ^= w << np.uint64(s)
    parity = (w >> np.uint64(63)).astype(np.uint8)
    carry = np.empty_like(parity)
    carry[0] = first
    if len(parity) > 1:
        carry[1:] = np.bitwise_xor.accumulate(parity[:-1]) ^ np.uint8(first)
    w ^= np.uint64(0) - carry.astype(np.uint64)  # all ones where the carry is 1
    return np.unpackbits(w.view(np.uint8), bitorder="little")


def fnv1a64(data, h=FNV_OFFSET):
    """FNV-1a 64-bit hash of `data` (bytes-like) as an int; `h` continues a previous hash."""
    global _POWERS
    buf = np.frombuffer(memoryview(data), dtype=np.uint8)
    body = len(buf) - len(buf) % 64
    if body == 0:
        return fnv1a64_reference(buf.tobytes(), h)
    if _POWERS is None:
        _POWERS = np.cumprod(np.full(_CHUNK, FNV_PRIME, dtype=np.uint64))[::-1].copy()
    low = np.empty(_CHUNK, np.uint8)
    x = np.empty(_CHUNK, np.uint8)
    e = np.empty(_CHUNK, np.uint8)
    with np.errstate(over="ignore"):
        for start in range(0, body, _CHUNK):
            b = buf[start:min(start + _CHUNK, body)]
            n = len(b)
            lo, xx, ee = low[:n], x[:n], e[:n]
            lo[:] = 0
            l0 = h & 0xFF
            for j in range(8):
                np.bitwise_xor(lo, b, out=xx)
                np.bitwise_and(xx, (1 << j) - 1, out=xx)
                np.multiply(xx, FNV_PRIME & 0xFF, out=xx)  # bit j: c_j (carries only move up)
                np.bitwise_xor(xx, b, out=xx)              # bit j: c_j ^ b_j
                np.right_shift(xx, j, out=xx)
                np.bitwise_and(xx, 1, out=xx)
                ee[0] = 0                                  # bit j of the state before byte k:
                ee[1:] = xx[:-1]                           # l0_j ^ XOR of xx[0..k-1]
                bit = _prefix_xor_bits(ee, (l0 >> j) & 1)
                np.left_shift(bit, j, out=bit)
                np.bitwise_or(lo, bit, out=lo)
            d = np.bitwise_xor(lo, b).astype(np.int64)
            d -= lo
            s = int((d.view(np.uint64) * _POWERS[_CHUNK - n:]).sum(dtype=np.uint64))
            h = (h * pow(FNV_PRIME, n, 1 << 64) + s) & _MASK
    return fnv1a64_reference(buf[body:].tobytes(), h)


def fnv1a64_hex(data):
    """The hash as run.json writes it: 16 lowercase hex digits."""
    return f"{fnv1a64(data):016x}"
