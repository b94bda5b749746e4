#include "common/blob_store.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <set>
#include <sstream>

namespace rstorm {
namespace {

constexpr std::string_view kMetaPrefix = "blob/meta/";
constexpr std::string_view kChunkPrefix = "blob/chunk/";
constexpr std::string_view kCounterKey = "blob/next-upload-id";

struct Meta {
  BlobInfo info;
  std::string upload_id;
};

std::string meta_key(std::string_view blob_key) { return std::string(kMetaPrefix).append(blob_key); }

std::string chunk_key(std::string_view upload_id, std::uint32_t index) {
  char suffix[16];
  std::snprintf(suffix, sizeof(suffix), "/%08u", index);
  return std::string(kChunkPrefix).append(upload_id).append(suffix);
}

std::string encode(const Meta& m) {
  return std::to_string(m.info.size) + " " + m.info.sha256 + " " +
         std::to_string(m.info.chunk_count) + " " + m.upload_id;
}

Result<Meta> decode(std::string_view blob_key, const std::string& text) {
  Meta m;
  m.info.key = std::string(blob_key);
  std::istringstream in(text);
  if (!(in >> m.info.size >> m.info.sha256 >> m.info.chunk_count >> m.upload_id)) {
    return Status(ErrorCode::kCorruption,
                  "metadata of blob '" + std::string(blob_key) + "' is unreadable: '" + text + "'");
  }
  return m;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

BlobStore::BlobStore(KeyValueStore& kv, Options options) : kv_(kv), options_(options) {}

Result<std::string> BlobStore::next_upload_id() {
  std::uint64_t next = 1;
  auto stored = kv_.get(kCounterKey);
  if (stored) {
    const char* end = stored->data() + stored->size();
    auto [stop, ec] = std::from_chars(stored->data(), end, next);
    if (ec != std::errc() || stop != end) {
      return Status(ErrorCode::kCorruption, "blob upload counter " + std::string(kCounterKey) +
                                                " holds '" + *stored + "', not a number");
    }
  } else if (stored.code() != ErrorCode::kNotFound) {
    return stored.status();
  }
  if (Status s = kv_.put(kCounterKey, std::to_string(next + 1)); !s) return s;
  return "u" + std::to_string(next);
}

Result<std::string> BlobStore::begin_upload(std::string_view blob_key) {
  if (blob_key.empty() || blob_key.find('/') != std::string_view::npos) {
    return Status(ErrorCode::kInvalidArgument,
                  "invalid blob key '" + std::string(blob_key) + "': must be non-empty, no '/'");
  }
  std::lock_guard lock(mutex_);
  auto id = next_upload_id();
  if (!id) return id.status();
  Upload upload;
  upload.blob_key = std::string(blob_key);
  uploads_.emplace(*id, std::move(upload));
  return *id;
}

Status BlobStore::upload_chunk(std::string_view upload_id, std::string_view bytes) {
  std::lock_guard lock(mutex_);
  auto it = uploads_.find(upload_id);
  if (it == uploads_.end()) {
    return Status(ErrorCode::kNotFound, "no upload '" + std::string(upload_id) + "' in progress");
  }
  Upload& upload = it->second;
  if (bytes.size() > options_.max_chunk_bytes) {
    return Status(ErrorCode::kInvalidArgument,
                  "chunk " + std::to_string(upload.chunks) + " of blob '" + upload.blob_key +
                      "' has " + std::to_string(bytes.size()) + " bytes; the limit is " +
                      std::to_string(options_.max_chunk_bytes));
  }
  if (Status s = kv_.put(chunk_key(upload_id, upload.chunks), bytes); !s) return s;
  upload.hash.update(bytes);
  upload.size += bytes.size();
  ++upload.chunks;
  return Status::ok();
}

std::vector<KeyValueWrite> BlobStore::delete_chunks(std::string_view upload_id) const {
  std::vector<KeyValueWrite> writes;
  auto keys = kv_.keys_with_prefix(std::string(kChunkPrefix).append(upload_id).append("/"));
  if (keys) {
    for (std::string& key : *keys) writes.push_back({std::move(key), {}});
  }
  return writes;
}

Result<BlobInfo> BlobStore::finish_upload(std::string_view upload_id, std::uint64_t expected_size,
                                          std::string_view expected_sha256) {
  std::lock_guard lock(mutex_);
  auto it = uploads_.find(upload_id);
  if (it == uploads_.end()) {
    return Status(ErrorCode::kNotFound, "no upload '" + std::string(upload_id) + "' in progress");
  }
  Upload upload = std::move(it->second);
  uploads_.erase(it);
  const std::string digest = upload.hash.hex_digest();
  std::string problem;
  if (upload.size < expected_size) {
    problem = "upload of blob '" + upload.blob_key + "' is truncated: received " +
              std::to_string(upload.size) + " of " + std::to_string(expected_size) + " bytes";
  } else if (upload.size > expected_size) {
    problem = "upload of blob '" + upload.blob_key + "' has " + std::to_string(upload.size) +
              " bytes, more than the " + std::to_string(expected_size) + " declared";
  } else if (digest != lowercase(expected_sha256)) {
    problem = "upload of blob '" + upload.blob_key + "' is corrupt: its " +
              std::to_string(upload.size) + " bytes have SHA-256 " + digest + ", expected " +
              std::string(expected_sha256);
  }
  if (!problem.empty()) {
    (void)kv_.apply(delete_chunks(upload_id));
    return Status(ErrorCode::kCorruption, problem);
  }
  Meta meta{{upload.blob_key, upload.size, digest, upload.chunks}, std::string(upload_id)};
  std::vector<KeyValueWrite> writes;
  auto old = kv_.get(meta_key(upload.blob_key));
  if (old) {
    auto old_meta = decode(upload.blob_key, *old);
    // Metadata that names this very upload (it is corrupt, or the counter
    // went back) must not take the chunks just written with it.
    if (old_meta && old_meta->upload_id != upload_id) {
      writes = delete_chunks(old_meta->upload_id);
    }
  }
  writes.push_back({meta_key(upload.blob_key), encode(meta)});
  if (Status s = kv_.apply(writes); !s) return s;
  return meta.info;
}

void BlobStore::abort_upload(std::string_view upload_id) {
  std::lock_guard lock(mutex_);
  auto it = uploads_.find(upload_id);
  if (it == uploads_.end()) return;
  (void)kv_.apply(delete_chunks(upload_id));
  uploads_.erase(it);
}

Result<BlobInfo> BlobStore::put(std::string_view blob_key, std::string_view bytes) {
  auto id = begin_upload(blob_key);
  if (!id) return id.status();
  for (std::size_t offset = 0; offset < bytes.size(); offset += options_.max_chunk_bytes) {
    if (Status s = upload_chunk(*id, bytes.substr(offset, options_.max_chunk_bytes)); !s) {
      abort_upload(*id);
      return s;
    }
  }
  return finish_upload(*id, bytes.size(), Sha256::hex_of(bytes));
}

Result<BlobInfo> BlobStore::info(std::string_view blob_key) {
  auto text = kv_.get(meta_key(blob_key));
  if (!text) {
    if (text.code() == ErrorCode::kNotFound) {
      return Status(ErrorCode::kNotFound, "blob '" + std::string(blob_key) + "' does not exist");
    }
    return text.status();
  }
  auto meta = decode(blob_key, *text);
  if (!meta) return meta.status();
  return meta->info;
}

Result<std::string> BlobStore::read_chunk(std::string_view blob_key, std::uint32_t index) {
  auto text = kv_.get(meta_key(blob_key));
  if (!text) {
    if (text.code() != ErrorCode::kNotFound) return text.status();
    return Status(ErrorCode::kNotFound, "blob '" + std::string(blob_key) + "' does not exist");
  }
  auto meta = decode(blob_key, *text);
  if (!meta) return meta.status();
  if (index >= meta->info.chunk_count) {
    return Status(ErrorCode::kNotFound, "blob '" + std::string(blob_key) + "' has " +
                                            std::to_string(meta->info.chunk_count) +
                                            " chunks; there is no chunk " + std::to_string(index));
  }
  auto chunk = kv_.get(chunk_key(meta->upload_id, index));
  if (!chunk && chunk.code() == ErrorCode::kNotFound) {
    return Status(ErrorCode::kCorruption, "blob '" + std::string(blob_key) + "' is missing chunk " +
                                              std::to_string(index) + " in storage");
  }
  return chunk;
}

Result<std::string> BlobStore::read_all(std::string_view blob_key) {
  auto blob = info(blob_key);
  if (!blob) return blob.status();
  std::string bytes;  // not reserved: the recorded size may be corrupt
  for (std::uint32_t i = 0; i < blob->chunk_count; ++i) {
    auto chunk = read_chunk(blob_key, i);
    if (!chunk) return chunk.status();
    bytes += *chunk;
  }
  const std::string digest = Sha256::hex_of(bytes);
  if (bytes.size() != blob->size || digest != blob->sha256) {
    return Status(ErrorCode::kCorruption,
                  "blob '" + std::string(blob_key) + "' is corrupt in storage: " +
                      std::to_string(bytes.size()) + " bytes with SHA-256 " + digest +
                      ", recorded " + std::to_string(blob->size) + " bytes with " + blob->sha256);
  }
  return bytes;
}

Status BlobStore::remove(std::string_view blob_key) {
  std::lock_guard lock(mutex_);
  auto text = kv_.get(meta_key(blob_key));
  if (!text) {
    if (text.code() != ErrorCode::kNotFound) return text.status();
    return Status(ErrorCode::kNotFound, "blob '" + std::string(blob_key) + "' does not exist");
  }
  std::vector<KeyValueWrite> writes;
  if (auto meta = decode(blob_key, *text)) {
    writes = delete_chunks(meta->upload_id);
  }
  writes.push_back({meta_key(blob_key), {}});
  return kv_.apply(writes);
}

Result<std::vector<std::string>> BlobStore::list() {
  auto keys = kv_.keys_with_prefix(kMetaPrefix);
  if (!keys) return keys.status();
  std::vector<std::string> out;
  for (const auto& k : *keys) out.push_back(k.substr(kMetaPrefix.size()));
  return out;
}

Result<std::size_t> BlobStore::collect_garbage() {
  std::lock_guard lock(mutex_);
  std::set<std::string> live;
  for (const auto& [id, upload] : uploads_) live.insert(id);
  auto metas = kv_.scan_prefix(kMetaPrefix);
  if (!metas) return metas.status();
  for (const auto& [key, text] : *metas) {
    if (auto meta = decode(std::string_view(key).substr(kMetaPrefix.size()), text)) {
      live.insert(meta->upload_id);
    }
  }
  auto chunks = kv_.keys_with_prefix(kChunkPrefix);
  if (!chunks) return chunks.status();
  std::vector<KeyValueWrite> writes;
  for (const auto& key : *chunks) {
    std::string_view rest = std::string_view(key).substr(kChunkPrefix.size());
    std::string id(rest.substr(0, rest.find('/')));
    if (!live.contains(id)) writes.push_back({key, {}});
  }
  if (Status s = kv_.apply(writes); !s) return s;
  return writes.size();
}

}  // namespace rstorm
