// gzip (RFC 1952) through zlib, for the files of a results directory
// (docs/results-format.md, "Compression"): a run writes its CSV and JSON
// files as NAME.gz, and every reader takes NAME.gz or NAME alike.
//
// Reading is bounded: a stream that would expand to more than its limit
// (kMaxGzipRatio times its compressed size, at least kGzipFloorBytes, and at
// most what the reader takes of the file) is refused as soon as it does, so a
// gzip bomb costs at most the limit, never a hang or an allocation sized by
// the stream's claims. A truncated stream (a file cut by a kill or a full
// disk) or a corrupt one is an error naming the file. Several members one
// after the other (as `cat a.gz b.gz` makes) read as their concatenation.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "ikbench/format/schema.h"

namespace ikbench::harness {

// The suffix of a compressed file of a run, and the two bytes every gzip
// member starts with.
inline constexpr std::string_view kGzipSuffix = results_schema::kGzipSuffix;
// Largest expansion a reader accepts: real files of a run expand 3 to 15
// times, gzip at most about 1032 times (a stream of zeros).
inline constexpr std::size_t kMaxGzipRatio = results_schema::kMaxGzipRatio;
// A small file may expand to this much whatever its ratio.
inline constexpr std::size_t kGzipFloorBytes = results_schema::kGzipFloorBytes;

bool hasGzipSuffix(std::string_view name);
// The expansion limit of a compressed file of `compressed_bytes` bytes.
std::size_t gzipExpansionLimit(std::size_t compressed_bytes);

// Decompresses a gzip file fed to it in blocks, handing the decompressed
// bytes to `sink` in blocks. Errors (ResultsError) name `path`.
class GzipReader {
 public:
  using Sink = std::function<void(const char* data, std::size_t size)>;
  // `limit`: most decompressed bytes accepted; `limit_text` says why (for the message).
  GzipReader(std::string path, std::size_t limit, std::string limit_text, Sink sink);
  ~GzipReader();
  GzipReader(const GzipReader&) = delete;
  GzipReader& operator=(const GzipReader&) = delete;

  void feed(const char* data, std::size_t size);
  // The end of the file: ResultsError if it ends inside a member (or is empty).
  void finish();
  std::size_t decompressedBytes() const { return out_bytes_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::string path_;
  std::size_t limit_;
  std::string limit_text_;
  Sink sink_;
  std::size_t in_bytes_ = 0, out_bytes_ = 0;
  bool in_member_ = false;  // between a member's first byte and its end
};

// Compresses what is written to it into one gzip member (zlib level 6),
// handing the compressed bytes to `sink` in blocks.
class GzipWriter {
 public:
  using Sink = std::function<void(const char* data, std::size_t size)>;
  explicit GzipWriter(Sink sink);
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  void write(std::string_view data);
  void finish();  // writes the member's trailer

 private:
  void pump(int flush);
  struct State;
  std::unique_ptr<State> state_;
  Sink sink_;
};

// One gzip member of `data` (tests, small files).
std::string gzipCompress(std::string_view data);

}  // namespace ikbench::harness
