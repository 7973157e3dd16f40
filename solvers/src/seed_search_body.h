// The seed library's search, included by seed_search_avx2.cpp and
// seed_search_portable.cpp inside their own namespaces, each after defining
//   V8         eight floats,
//   madd(a, b, c)  a * b + c (fused where the target has FMA),
//   lessMask(a, b) the lanes with a < b, as bits.
// Everything here is internal to the including file.

// The ranked distances of a block (see seed_search.h): |p|^2 - 2 p . p_t -
// w8 (q . q_t)^2.
inline V8 load(const float* x) {
  V8 v;
  __builtin_memcpy(&v, x, sizeof v);
  return v;
}

inline V8 blockDistances(const KeyBlock& K, const V8 p2[3], const V8 r[4], V8 w8) {
  const V8 pp = madd(load(K.row[kZ]), p2[2], madd(load(K.row[kY]), p2[1], load(K.row[kX]) * p2[0]));
  const V8 dot =
      madd(load(K.row[kQz]), r[3], madd(load(K.row[kQy]), r[2], madd(load(K.row[kQx]), r[1], load(K.row[kQw]) * r[0])));
  return madd(-(w8 * dot), dot, load(K.row[kNorm2]) - pp);
}

// Broadcasts by adding to a zero vector.
inline void broadcast(const Target& t, V8 p2[3], V8 r[4], V8& w8) {
  const V8 zero = {};
  for (int a = 0; a < 3; ++a) p2[a] = zero + t.p2[a];
  for (int a = 0; a < 4; ++a) r[a] = zero + t.r[a];
  w8 = zero + t.w8;
}

// Inserts the lanes `bits` of block `block` (distances dist) that still beat
// the k-th best.
inline void insertLanes(Best& best, const float* dist, unsigned bits, int block) {
  while (bits != 0) {
    const int j = __builtin_ctz(bits);
    bits &= bits - 1;
    const float dj = dist[j];
    if (!(dj < best.worst)) continue;
    int at = best.found < best.k ? best.found++ : best.k - 1;
    while (at > 0 && dj < best.d[at - 1]) {
      best.d[at] = best.d[at - 1];
      best.out[at] = best.out[at - 1];
      --at;
    }
    best.d[at] = dj;
    best.out[at] = block * kBlock + j;
    if (best.found == best.k) best.worst = best.d[best.k - 1];
  }
}

// Ranks the entries of the runs into best, a block at a time; lanes outside
// a run (the neighbouring cells' entries, which another run may hold too,
// or the padding past the last entry) are masked out.
void search(const KeyBlock* blocks, const Target& target, const Runs& runs, Best& best) {
  V8 p2[3], r[4], w8;
  broadcast(target, p2, r, w8);
  const V8 zero = {};
  V8 worst = zero + best.worst;
  for (int i = 0; i < runs.count; ++i) {
    const int begin = runs.run[i][0], end = runs.run[i][1];
    if (begin >= end) continue;
    const int first = begin / kBlock, last = (end - 1) / kBlock;
    for (int blk = first; blk <= last; ++blk) {
      const V8 d = blockDistances(blocks[blk], p2, r, w8);
      unsigned bits = lessMask(d, worst);
      if (blk == first) bits &= ~0u << (begin - first * kBlock);
      if (blk == last) bits &= (1u << (end - last * kBlock)) - 1u;
      if (__builtin_expect(bits == 0, 1)) continue;
      float dist[kBlock];
      __builtin_memcpy(dist, &d, sizeof dist);
      insertLanes(best, dist, bits, blk);
      worst = zero + best.worst;
    }
  }
}

void block(const KeyBlock& K, const Target& target, float out[kBlock]) {
  V8 p2[3], r[4], w8;
  broadcast(target, p2, r, w8);
  const V8 d = blockDistances(K, p2, r, w8);
  __builtin_memcpy(out, &d, sizeof d);
}
