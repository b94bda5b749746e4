// BlobStore: large immutable blobs (topology libraries) on a KeyValueStore,
// written and read in chunks, with a SHA-256 content check. An upload is
// staged chunk by chunk and becomes visible only when finish_upload() has
// verified the total size and the hash the uploader declared: a corrupt or
// truncated upload is rejected with an error naming the blob, and an existing
// blob of the same key stays as it was. Replacing a blob is atomic.
//
// Layout in the key-value store:
//   blob/meta/<key>            "<size> <sha256-hex> <chunks> <upload-id>"
//   blob/chunk/<upload-id>/<index, 8 digits>   chunk bytes
//   blob/next-upload-id        counter
//
// Thread contract: thread-safe. Uploads in progress live in memory: after a
// restart, collect_garbage() removes their staged chunks.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/key_value_store.hpp"
#include "common/sha256.hpp"

namespace rstorm {

struct BlobInfo {
  std::string key;
  std::uint64_t size = 0;
  std::string sha256;  // lowercase hex
  std::uint32_t chunk_count = 0;

  friend bool operator==(const BlobInfo&, const BlobInfo&) = default;
};

class BlobStore {
 public:
  struct Options {
    // Largest accepted chunk. Default 1 MiB (storm.blobstore.chunk.size.bytes).
    std::size_t max_chunk_bytes = 1 << 20;
  };

  // REQUIRES: `kv` outlives this.
  BlobStore(KeyValueStore& kv, Options options);

  // Starts an upload of `blob_key`; returns the upload id for the calls below.
  // kInvalidArgument for an empty key or one containing '/'.
  Result<std::string> begin_upload(std::string_view blob_key);
  // Appends the next chunk. kNotFound (unknown upload), kInvalidArgument
  // (chunk larger than max_chunk_bytes).
  Status upload_chunk(std::string_view upload_id, std::string_view bytes);
  // Verifies that the upload has `expected_size` bytes hashing to
  // `expected_sha256` (hex), then publishes it. kCorruption naming the blob
  // when either differs; the upload is discarded in every case but kNotFound.
  Result<BlobInfo> finish_upload(std::string_view upload_id, std::uint64_t expected_size,
                                 std::string_view expected_sha256);
  // Discards an upload in progress. Unknown ids are ignored.
  void abort_upload(std::string_view upload_id);

  // One-call upload of `bytes` in max_chunk_bytes pieces (hash computed here).
  Result<BlobInfo> put(std::string_view blob_key, std::string_view bytes);

  // kNotFound naming the blob.
  Result<BlobInfo> info(std::string_view blob_key);
  // Chunk `index` (0-based) as uploaded. kNotFound for a missing blob or an
  // index past the last chunk; kCorruption when the chunk is missing from storage.
  Result<std::string> read_chunk(std::string_view blob_key, std::uint32_t index);
  // The whole blob, hash checked (kCorruption naming the blob on mismatch).
  Result<std::string> read_all(std::string_view blob_key);
  Status remove(std::string_view blob_key);
  // Keys of every published blob, sorted.
  Result<std::vector<std::string>> list();
  // Deletes staged chunks that no published blob and no live upload refers to.
  // Returns how many chunks were deleted.
  Result<std::size_t> collect_garbage();

 private:
  struct Upload {
    std::string blob_key;
    std::uint32_t chunks = 0;
    std::uint64_t size = 0;
    Sha256 hash;
  };

  Result<std::string> next_upload_id();
  // Deletes of the chunks stored for `upload_id`, found in storage: a chunk
  // count read from metadata may be corrupt (none when the store fails to list).
  std::vector<KeyValueWrite> delete_chunks(std::string_view upload_id) const;

  KeyValueStore& kv_;
  const Options options_;
  std::mutex mutex_;
  std::map<std::string, Upload, std::less<>> uploads_;  // guarded by mutex_
};

}  // namespace rstorm
