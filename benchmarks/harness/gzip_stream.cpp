#include "harness/gzip_stream.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <limits>

#include "harness/results_format.h"

namespace ikbench::harness {

namespace {

constexpr std::size_t kBlock = std::size_t{1} << 16;
// zlib counts in uInt: larger inputs are handed over in pieces.
constexpr std::size_t kMaxPiece = std::size_t{1} << 30;
constexpr int kGzipWindowBits = 15 + 16;  // a gzip wrapper, not zlib's

}  // namespace

bool hasGzipSuffix(std::string_view name) {
  return name.size() > kGzipSuffix.size() && name.substr(name.size() - kGzipSuffix.size()) == kGzipSuffix;
}

std::size_t gzipExpansionLimit(std::size_t compressed_bytes) {
  const std::size_t ratio = compressed_bytes > std::numeric_limits<std::size_t>::max() / kMaxGzipRatio
                                ? std::numeric_limits<std::size_t>::max()
                                : compressed_bytes * kMaxGzipRatio;
  return std::max(kGzipFloorBytes, ratio);
}

// ---- reading ----------------------------------------------------------------------

struct GzipReader::State {
  z_stream zs{};
};

GzipReader::GzipReader(std::string path, std::size_t limit, std::string limit_text, Sink sink)
    : state_(std::make_unique<State>()),
      path_(std::move(path)),
      limit_(limit),
      limit_text_(std::move(limit_text)),
      sink_(std::move(sink)) {
  if (inflateInit2(&state_->zs, kGzipWindowBits) != Z_OK)
    throw ResultsError(fmt::format("{}: cannot start decompressing (zlib: out of memory)", path_));
}

GzipReader::~GzipReader() { inflateEnd(&state_->zs); }

void GzipReader::feed(const char* data, std::size_t size) {
  z_stream& zs = state_->zs;
  while (size > 0) {
    const std::size_t piece = std::min(size, kMaxPiece);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    zs.avail_in = static_cast<uInt>(piece);
    in_bytes_ += piece;
    data += piece;
    size -= piece;
    char out[kBlock];
    for (;;) {
      if (zs.avail_in > 0) in_member_ = true;
      zs.next_out = reinterpret_cast<Bytef*>(out);
      zs.avail_out = static_cast<uInt>(sizeof out);
      const int rc = inflate(&zs, Z_NO_FLUSH);
      const std::size_t produced = sizeof out - zs.avail_out;
      if (produced > 0) {
        if (produced > limit_ - out_bytes_)
          throw ResultsError(fmt::format("{}: decompresses to more than {} bytes ({}): not a file ikbench wrote "
                                         "(a gzip bomb?)",
                                         path_, limit_, limit_text_));
        out_bytes_ += produced;
        sink_(out, produced);
      }
      if (rc == Z_STREAM_END) {
        // A member ends; another may follow (concatenated gzip files).
        in_member_ = false;
        inflateReset(&zs);
        if (zs.avail_in == 0) break;
        continue;
      }
      if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR || rc == Z_STREAM_ERROR)
        throw ResultsError(fmt::format("{}: not a valid gzip stream ({}, after {} compressed bytes)", path_,
                                       zs.msg ? zs.msg : "corrupt data", in_bytes_ - zs.avail_in));
      if (rc == Z_MEM_ERROR) throw ResultsError(fmt::format("{}: not enough memory to decompress it", path_));
      if (zs.avail_in == 0 && zs.avail_out > 0) break;  // all input taken, all output handed on
    }
  }
}

void GzipReader::finish() {
  if (in_bytes_ == 0) throw ResultsError(fmt::format("{}: empty, not a gzip stream", path_));
  if (in_member_)
    throw ResultsError(fmt::format("{}: the gzip stream is truncated (the file ends inside compressed data after {} "
                                   "bytes: cut short by a kill or a full disk?)",
                                   path_, in_bytes_));
}

// ---- writing ----------------------------------------------------------------------

struct GzipWriter::State {
  z_stream zs{};
};

GzipWriter::GzipWriter(Sink sink) : state_(std::make_unique<State>()), sink_(std::move(sink)) {
  if (deflateInit2(&state_->zs, 6, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw ResultsError("cannot start compressing (zlib: out of memory)");
}

GzipWriter::~GzipWriter() { deflateEnd(&state_->zs); }

void GzipWriter::pump(int flush) {
  z_stream& zs = state_->zs;
  char out[kBlock];
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(out);
    zs.avail_out = static_cast<uInt>(sizeof out);
    const int rc = deflate(&zs, flush);
    if (rc == Z_STREAM_ERROR) throw ResultsError("gzip compression failed (zlib: stream error)");
    const std::size_t produced = sizeof out - zs.avail_out;
    if (produced > 0) sink_(out, produced);
    if (flush == Z_FINISH ? rc == Z_STREAM_END : (zs.avail_in == 0 && zs.avail_out > 0)) break;
  }
}

void GzipWriter::write(std::string_view data) {
  while (!data.empty()) {
    const std::size_t piece = std::min(data.size(), kMaxPiece);
    state_->zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    state_->zs.avail_in = static_cast<uInt>(piece);
    pump(Z_NO_FLUSH);
    data.remove_prefix(piece);
  }
}

void GzipWriter::finish() {
  state_->zs.next_in = nullptr;
  state_->zs.avail_in = 0;
  pump(Z_FINISH);
}

std::string gzipCompress(std::string_view data) {
  std::string out;
  GzipWriter w([&](const char* p, std::size_t n) { out.append(p, n); });
  w.write(data);
  w.finish();
  return out;
}

}  // namespace ikbench::harness
