// The seed library's search, included by seed_search_avx2.cpp and
// seed_search_portable.cpp inside their own namespaces, each after defining
//   V8         eight floats,
//   madd(a, b, c)  a * b + c (fused where the target has FMA),
//   vmin(a, b)     the lesser value of each lane,
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

// Each run's first block requested before any is ranked: the runs lie
// apart in memory, so their first misses overlap instead of each waiting in
// turn (the hardware prefetcher follows a run from there).
inline void prefetchRuns(const KeyBlock* blocks, const Runs& runs) {
  for (int i = 0; i < runs.count; ++i)
    if (runs.run[i][0] < runs.run[i][1])
      for (unsigned line = 0; line < sizeof(KeyBlock) / 64; ++line)
        __builtin_prefetch(reinterpret_cast<const char*>(blocks + runs.run[i][0] / kBlock) + 64 * line);
}

// k = 1: each lane's least distance and its entry kept in two registers,
// a compare and two blends per block and no branch, then the least of the
// lanes, the smaller entry of equal ones. Runs come in increasing order, so
// that is the first in scan order, as the ranking below would keep it; the
// lanes outside a run are set to +inf, NaN distances never win.
typedef int I8 __attribute__((vector_size(32)));

void searchOne(const KeyBlock* blocks, const Target& target, const Runs& runs, Best& best) {
  prefetchRuns(blocks, runs);
  V8 p2[3], r[4], w8;
  broadcast(target, p2, r, w8);
  const V8 inf = V8{} + __builtin_inff();
  const I8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
  V8 least = inf;
  I8 at = I8{} - 1;
  for (int i = 0; i < runs.count; ++i) {
    const int begin = runs.run[i][0], end = runs.run[i][1];
    if (begin >= end) continue;
    const int first = begin / kBlock, last = (end - 1) / kBlock;
    for (int blk = first; blk <= last; ++blk) {
      V8 d = blockDistances(blocks[blk], p2, r, w8);
      const I8 entry = lane + blk * kBlock;
      if (blk == first || blk == last) d = (entry >= begin) & (entry < end) ? d : inf;
      const I8 take = d < least;
      least = take ? d : least;
      at = take ? entry : at;
    }
  }
  float d0 = __builtin_inff();
  int e0 = -1;
  for (int j = 0; j < kBlock; ++j)
    if (least[j] < d0 || (least[j] == d0 && at[j] < e0)) {
      d0 = least[j];
      e0 = at[j];
    }
  if (e0 < 0 || !(d0 < best.worst)) return;
  best.d[0] = d0;
  best.out[0] = e0;
  best.found = 1;
  best.worst = d0;
}

// Ranks the entries of the runs into best, a block at a time; lanes outside
// a run (the neighbouring cells' entries, which another run may hold too,
// or the padding past the last entry) are masked out. Lanes that beat the
// k-th best go into `Top` (each copy's own: a sorted register of eight
// where the target has AVX2, the arrays of best otherwise), an entry that
// ties one already in after it.
void search(const KeyBlock* blocks, const Target& target, const Runs& runs, Best& best) {
  if (best.k == 1) return searchOne(blocks, target, runs, best);
  prefetchRuns(blocks, runs);
  V8 p2[3], r[4], w8;
  broadcast(target, p2, r, w8);
  const V8 zero = {};
  Top top(best);
  float worst_s = best.worst;
  V8 worst = zero + worst_s;
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
      while (bits != 0) {
        const int j = __builtin_ctz(bits);
        bits &= bits - 1;
        if (!(dist[j] < worst_s)) continue;
        top.insert(dist[j], blk * kBlock + j);
        if (best.found < best.k) ++best.found;
        if (best.found == best.k) worst_s = top.worst();
      }
      worst = zero + worst_s;
    }
  }
  top.store();
  best.worst = worst_s;
}

// Writes the ranked distances of the runs' entries to out, one after
// another in run order.
void distances(const KeyBlock* blocks, const Target& target, const Runs& runs, float* out) {
  V8 p2[3], r[4], w8;
  broadcast(target, p2, r, w8);
  for (int i = 0; i < runs.count; ++i) {
    const int begin = runs.run[i][0], end = runs.run[i][1];
    for (int blk = begin / kBlock; blk * kBlock < end; ++blk) {
      const V8 d = blockDistances(blocks[blk], p2, r, w8);
      const int lo = begin > blk * kBlock ? begin - blk * kBlock : 0;
      const int hi = end < (blk + 1) * kBlock ? end - blk * kBlock : kBlock;
      __builtin_memcpy(out, reinterpret_cast<const float*>(&d) + lo, sizeof(float) * static_cast<unsigned>(hi - lo));
      out += hi - lo;
    }
  }
}

// The position of the least of d[0..n), the first of equal ones; -1 when
// none is below +inf.
int least(const float* d, int n) {
  const V8 zero = {};
  V8 m[4] = {zero + __builtin_inff(), zero + __builtin_inff(), zero + __builtin_inff(), zero + __builtin_inff()};
  int i = 0;
  for (; i + 4 * kBlock <= n; i += 4 * kBlock)
    for (int a = 0; a < 4; ++a) m[a] = vmin(load(d + i + a * kBlock), m[a]);
  const V8 m4 = vmin(vmin(m[0], m[1]), vmin(m[2], m[3]));
  float best = __builtin_inff();
  for (int j = 0; j < kBlock; ++j) best = m4[j] < best ? m4[j] : best;
  for (; i < n; ++i) best = d[i] < best ? d[i] : best;
  if (!(best < __builtin_inff())) return -1;
  const V8 b = zero + best;
  int j = 0;
  for (; j + kBlock <= n; j += kBlock) {
    const unsigned above = lessMask(b, load(d + j));  // d > best; the rest equal it
    if (above != 0xffu) return j + __builtin_ctz(~above);
  }
  for (; j < n; ++j)
    if (!(best < d[j])) return j;
  return -1;
}

void block(const KeyBlock& K, const Target& target, float out[kBlock]) {
  V8 p2[3], r[4], w8;
  broadcast(target, p2, r, w8);
  const V8 d = blockDistances(K, p2, r, w8);
  __builtin_memcpy(out, &d, sizeof d);
}
