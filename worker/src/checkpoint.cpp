#include "rstorm/worker/checkpoint.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <system_error>

#include "rstorm/worker/topology_plan.hpp"

namespace rstorm::worker {
namespace {

constexpr char kMagic[8] = {'R', 'S', 'C', 'H', 'K', 'P', 'T', '1'};

// Appends `v` little endian, in its own width.
template <typename T>
void put_little_endian(std::string& out, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u64(std::string& out, std::uint64_t v) { put_little_endian(out, v); }
void put_u32(std::string& out, std::uint32_t v) { put_little_endian(out, v); }

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool u64(std::uint64_t& v) { return little_endian(v); }
  bool u32(std::uint32_t& v) { return little_endian(v); }
  bool bytes(std::size_t n, std::string& out) {
    if (bytes_.size() - pos_ < n) return false;
    out.assign(bytes_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  std::size_t left() const { return bytes_.size() - pos_; }

 private:
  template <typename T>
  bool little_endian(T& v) {
    if (bytes_.size() - pos_ < sizeof(T)) return false;
    v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      v |= static_cast<T>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    }
    pos_ += sizeof(T);
    return true;
  }

  std::string_view bytes_;
  std::size_t pos_ = 0;
};

std::string part_name(std::int64_t checkpoint, TaskId task) {
  return "part of task " + std::to_string(task.value) + " in checkpoint " +
         std::to_string(checkpoint);
}

}  // namespace

std::string encode_task_snapshot(std::int64_t checkpoint, TaskId task,
                                 const StateEntries& entries) {
  std::string out(kMagic, sizeof kMagic);
  put_u64(out, static_cast<std::uint64_t>(checkpoint));
  put_u32(out, static_cast<std::uint32_t>(task.value));
  put_u64(out, entries.size());
  for (const auto& [k, v] : entries) {
    put_u32(out, static_cast<std::uint32_t>(k.size()));
    out += k;
    put_u32(out, static_cast<std::uint32_t>(v.size()));
    out += v;
  }
  put_u64(out, XXH64(out.data(), out.size(), 0));
  return out;
}

api::Result<StateEntries> decode_task_snapshot(std::string_view bytes, std::int64_t checkpoint,
                                               TaskId task) {
  const std::string what = part_name(checkpoint, task);
  auto bad = [&](const std::string& why) {
    return api::Status::error("the " + what + " is corrupt: " + why);
  };
  if (bytes.size() < sizeof kMagic + 8 + 4 + 8 + 8) {
    return bad(std::to_string(bytes.size()) + " bytes, too short for a snapshot");
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    return bad("it does not start as an rstorm task snapshot");
  }
  const std::string_view body = bytes.substr(0, bytes.size() - 8);
  Reader trailer(bytes.substr(bytes.size() - 8));
  std::uint64_t sum = 0;
  (void)trailer.u64(sum);
  if (XXH64(body.data(), body.size(), 0) != sum) {
    return bad("its checksum does not match its " + std::to_string(bytes.size()) + " bytes");
  }
  Reader r(body.substr(sizeof kMagic));
  std::uint64_t id = 0;
  std::uint32_t owner = 0;
  std::uint64_t count = 0;
  if (!r.u64(id) || !r.u32(owner) || !r.u64(count)) return bad("truncated header");
  if (static_cast<std::int64_t>(id) != checkpoint ||
      static_cast<std::int32_t>(owner) != task.value) {
    return bad("it holds task " + std::to_string(owner) + "'s part of checkpoint " +
               std::to_string(id));
  }
  // Each entry takes at least 8 bytes: a count beyond that is damage.
  if (count > r.left() / 8) return bad("it claims " + std::to_string(count) + " entries");
  StateEntries out;
  out.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint32_t n = 0;
    std::string k, v;
    if (!r.u32(n) || !r.bytes(n, k) || !r.u32(n) || !r.bytes(n, v)) {
      return bad("entry " + std::to_string(i) + " of " + std::to_string(count) + " is truncated");
    }
    out.emplace_back(std::move(k), std::move(v));
  }
  if (r.left() != 0) return bad(std::to_string(r.left()) + " bytes after the last entry");
  return out;
}

CheckpointStore::~CheckpointStore() = default;

api::Result<std::optional<CheckpointRecord>> CheckpointStore::last_complete() {
  auto all = complete_checkpoints();
  if (!all.ok()) return all.status();
  if (all->empty()) return std::optional<CheckpointRecord>();
  return std::optional<CheckpointRecord>(all->back());
}

api::Result<std::optional<RestoredCheckpoint>> read_checkpoint(
    CheckpointStore& store, const std::vector<TaskId>& tasks, const std::vector<TaskId>& local,
    const std::function<void(const std::string&)>& warn) {
  auto records = store.complete_checkpoints();
  if (!records.ok()) return records.status();
  if (records->empty()) return std::optional<RestoredCheckpoint>();
  std::set<std::int32_t> here;
  for (TaskId t : local) here.insert(t.value);
  std::string last_problem;
  for (auto r = records->rbegin(); r != records->rend(); ++r) {
    RestoredCheckpoint out;
    out.record = *r;
    bool usable = true;
    for (TaskId t : tasks) {
      auto bytes = store.get(*r, t);
      api::Result<StateEntries> entries = bytes.ok() ? decode_task_snapshot(*bytes, r->id, t)
                                                     : api::Result<StateEntries>(bytes.status());
      if (!entries.ok()) {
        last_problem = entries.status().message();
        warn("checkpoint " + std::to_string(r->id) + " in " + store.describe() +
             " cannot be restored: " + last_problem +
             (r + 1 != records->rend() ? "; trying the one before" : ""));
        usable = false;
        break;
      }
      if (here.count(t.value) != 0) out.local[t.value] = std::move(entries).value();
    }
    if (usable) return std::optional<RestoredCheckpoint>(std::move(out));
  }
  return api::Status::error("no complete checkpoint in " + store.describe() +
                            " can be restored (the last problem: " + last_problem + ")");
}

// --- InMemoryCheckpointStore ---

api::Status InMemoryCheckpointStore::put(std::int64_t checkpoint, TaskId task,
                                         std::string_view bytes) {
  std::lock_guard lock(mutex_);
  parts_[checkpoint][task.value] = std::string(bytes);
  return api::Status::ok();
}

api::Result<std::string> InMemoryCheckpointStore::get(const CheckpointRecord& record, TaskId task) {
  const std::int64_t checkpoint = record.id;
  std::lock_guard lock(mutex_);
  auto c = parts_.find(checkpoint);
  if (c == parts_.end() || c->second.count(task.value) == 0) {
    return api::Status::error("the " + part_name(checkpoint, task) + " is missing from memory");
  }
  return c->second.at(task.value);
}

api::Status InMemoryCheckpointStore::complete(const CheckpointRecord& record, int retained) {
  std::lock_guard lock(mutex_);
  complete_.push_back(record);
  if (complete_.size() > static_cast<std::size_t>(std::max(1, retained))) {
    complete_.erase(complete_.begin(),
                    complete_.end() - static_cast<std::ptrdiff_t>(std::max(1, retained)));
  }
  std::set<std::int64_t> keep;
  for (const auto& r : complete_) keep.insert(r.id);
  for (auto it = parts_.begin(); it != parts_.end();) {
    // Checkpoints newer than this one may be in progress.
    if (it->first <= record.id && keep.count(it->first) == 0) {
      it = parts_.erase(it);
    } else {
      ++it;
    }
  }
  return api::Status::ok();
}

api::Result<std::vector<CheckpointRecord>> InMemoryCheckpointStore::complete_checkpoints() {
  std::lock_guard lock(mutex_);
  return complete_;
}

std::vector<std::int64_t> InMemoryCheckpointStore::checkpoints() const {
  std::lock_guard lock(mutex_);
  std::vector<std::int64_t> out;
  for (const auto& [id, parts] : parts_) out.push_back(id);
  return out;
}

void InMemoryCheckpointStore::corrupt(std::int64_t checkpoint, TaskId task, std::string bytes) {
  std::lock_guard lock(mutex_);
  parts_[checkpoint][task.value] = std::move(bytes);
}

// --- FolderCheckpointStore ---

namespace {

api::Status write_atomically(const std::filesystem::path& path, std::string_view bytes) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) {
    return api::Status::error("cannot create " + path.parent_path().string() + ": " + ec.message());
  }
  const std::filesystem::path tmp = path.string() + ".tmp";
  // POSIX calls, so that a failure says why (a full disk: "No space left on
  // device").
  auto failed = [&](const char* what) {
    return api::Status::error("cannot " + std::string(what) + " " + tmp.string() + ": " +
                              std::strerror(errno));
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return failed("create");
  for (std::size_t at = 0; at < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      api::Status s = failed("write");
      ::close(fd);
      return s;
    }
    at += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) return failed("close");
  std::filesystem::rename(tmp, path, ec);
  if (ec) return api::Status::error("cannot rename " + tmp.string() + ": " + ec.message());
  return api::Status::ok();
}

std::string record_text(const CheckpointRecord& r) {
  const nlohmann::json j = {
      {"id", r.id},       {"started_ms", r.started_ms}, {"completed_ms", r.completed_ms},
      {"bytes", r.bytes}, {"tasks", r.tasks},           {"epoch", r.epoch}};
  return j.dump() + "\n";
}

// One line record_text wrote; nullopt when it is not such a record.
std::optional<CheckpointRecord> parse_record(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    CheckpointRecord r;
    r.id = j.at("id").get<std::int64_t>();
    r.started_ms = j.at("started_ms").get<std::int64_t>();
    r.completed_ms = j.at("completed_ms").get<std::int64_t>();
    r.bytes = j.at("bytes").get<std::uint64_t>();
    r.tasks = j.at("tasks").get<std::int32_t>();
    r.epoch = j.value("epoch", std::int64_t{0});
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

FolderCheckpointStore::FolderCheckpointStore(std::filesystem::path dir, std::int64_t epoch)
    : dir_(std::move(dir)), epoch_(epoch) {}

std::filesystem::path FolderCheckpointStore::part_path(std::int64_t checkpoint, std::int64_t epoch,
                                                       TaskId task) const {
  return dir_ / ("chk-" + std::to_string(checkpoint) + "-e" + std::to_string(epoch)) /
         ("task-" + std::to_string(task.value));
}

std::int64_t FolderCheckpointStore::current_epoch() const {
  std::ifstream in(dir_ / "epoch");
  if (!in) return 0;
  std::int64_t e = -1;
  if (!(in >> e)) return -1;
  return e;
}

api::Result<std::int64_t> FolderCheckpointStore::read_epoch() {
  const std::int64_t e = current_epoch();
  if (e < 0) return api::Status::error("the epoch file in " + dir_.string() + " cannot be read");
  return e;
}

namespace {

// An exclusive lock on `<dir>/epoch.lock`, across processes (flock), for as
// long as it lives: moving the epoch and recording a checkpoint take it.
class FolderLock {
 public:
  explicit FolderLock(const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const std::string path = (dir / "epoch.lock").string();
    fd_ = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      error_ = "cannot open " + path + ": " + std::strerror(errno);
    } else if (::flock(fd_, LOCK_EX) != 0) {
      error_ = "cannot lock " + path + ": " + std::strerror(errno);
    }
  }
  ~FolderLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  // Empty when held.
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

}  // namespace

api::Result<std::int64_t> FolderCheckpointStore::bump_epoch() {
  FolderLock lock(dir_);
  if (!lock.error().empty()) return api::Status::error(lock.error());
  const std::int64_t now = std::max<std::int64_t>(0, current_epoch()) + 1;
  api::Status written = write_atomically(dir_ / "epoch", std::to_string(now) + "\n");
  if (!written) return written;
  return now;
}

api::Status FolderCheckpointStore::put(std::int64_t checkpoint, TaskId task,
                                       std::string_view bytes) {
  api::Status s = write_atomically(part_path(checkpoint, epoch_, task), bytes);
  if (!s) {
    return api::Status::error("cannot store the " + part_name(checkpoint, task) + " in " +
                              dir_.string() + ": " + s.message());
  }
  return s;
}

api::Result<std::string> FolderCheckpointStore::get(const CheckpointRecord& record, TaskId task) {
  const std::int64_t checkpoint = record.id;
  const auto path = part_path(checkpoint, record.epoch, task);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return api::Status::error("the " + part_name(checkpoint, task) + " is missing (" +
                              path.string() + ")");
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return api::Status::error("cannot read " + path.string());
  return bytes.str();
}

api::Status FolderCheckpointStore::complete(const CheckpointRecord& record, int retained) {
  std::lock_guard lock(mutex_);
  // Across processes: a coordinator of an epoch that was moved on (its
  // worker about to exit) must neither record nor remove anything.
  FolderLock folder(dir_);
  if (!folder.error().empty()) return api::Status::error(folder.error());
  if (const std::int64_t now = current_epoch(); now != epoch_) {
    return api::Status::error("checkpoint " + std::to_string(record.id) + " of recovery epoch " +
                              std::to_string(epoch_) +
                              " is not recorded: the topology is in epoch " + std::to_string(now));
  }
  auto kept = complete_checkpoints();
  std::vector<CheckpointRecord> records = kept.ok() ? *kept : std::vector<CheckpointRecord>();
  records.push_back(record);
  const auto keep_n = static_cast<std::size_t>(std::max(1, retained));
  if (records.size() > keep_n) {
    records.erase(records.begin(), records.end() - static_cast<std::ptrdiff_t>(keep_n));
  }
  std::string text;
  for (const auto& r : records) text += record_text(r);
  api::Status s = write_atomically(dir_ / "complete", text);
  if (!s) {
    return api::Status::error("cannot record checkpoint " + std::to_string(record.id) +
                              " as complete in " + dir_.string() + ": " + s.message());
  }
  // The folders of checkpoints no longer kept go (those that never
  // completed too); newer ones may be in progress.
  std::set<std::string> keep;
  for (const auto& r : records) {
    keep.insert(part_path(r.id, r.epoch, TaskId(0)).parent_path().filename().string());
  }
  std::error_code ec;
  std::vector<std::filesystem::path> old;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("chk-", 0) != 0 || keep.count(name) != 0) continue;
    try {
      // Newer ones may be in progress (in this epoch or, for a moment, the
      // one before).
      if (std::stoll(name.substr(4)) <= record.id) old.push_back(entry.path());
    } catch (...) {
    }
  }
  for (const auto& p : old) std::filesystem::remove_all(p, ec);
  return api::Status::ok();
}

api::Result<std::vector<CheckpointRecord>> FolderCheckpointStore::complete_checkpoints() {
  const auto path = dir_ / "complete";
  std::ifstream in(path);
  std::vector<CheckpointRecord> out;
  if (!in) return out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto record = parse_record(line);
    if (!record) {
      return api::Status::error("the checkpoint record " + path.string() +
                                " cannot be read: line '" + line + "'");
    }
    out.push_back(*record);
  }
  return out;
}

// --- settings ---

api::Result<CheckpointSettings> checkpoint_settings(const Config& config) {
  CheckpointSettings s;
  try {
    if (const Config::Entry* e = config.find(keys::kTopologyStateCheckpointing);
        e != nullptr && !e->value.is_null()) {
      s.enabled = config.get_bool(keys::kTopologyStateCheckpointing);
    }
    const std::int64_t interval =
        config_int(config, keys::kTopologyStateCheckpointIntervalMs, 1000);
    if (interval < 100) {
      return api::Status::error(std::string(keys::kTopologyStateCheckpointIntervalMs) +
                                " must be at least 100, got " + std::to_string(interval));
    }
    s.interval = std::chrono::milliseconds(interval);
    const std::int64_t retained = config_int(config, keys::kTopologyStateCheckpointRetained, 2);
    if (retained < 1) {
      return api::Status::error(std::string(keys::kTopologyStateCheckpointRetained) +
                                " must be at least 1, got " + std::to_string(retained));
    }
    s.retained = static_cast<int>(retained);
  } catch (const ConfigError& e) {
    return api::Status::error(e.what());
  }
  return s;
}

api::Result<std::shared_ptr<CheckpointStore>> make_checkpoint_store(
    const Config& config, const std::string& provider, const std::filesystem::path& default_dir,
    const std::string& topology) {
  std::string kind = provider;
  std::filesystem::path dir = default_dir;
  try {
    if (const Config::Entry* e = config.find(keys::kTopologyStateCheckpointStore);
        e != nullptr && !e->value.is_null()) {
      kind = config.get_string(keys::kTopologyStateCheckpointStore);
    }
    if (const Config::Entry* e = config.find(keys::kTopologyStateCheckpointDir);
        e != nullptr && !e->value.is_null()) {
      dir = config.get_string(keys::kTopologyStateCheckpointDir);
    }
  } catch (const ConfigError& e) {
    return api::Status::error(e.what());
  }
  if (kind == "memory")
    return std::shared_ptr<CheckpointStore>(std::make_shared<InMemoryCheckpointStore>());
  if (kind == "folder") {
    return std::shared_ptr<CheckpointStore>(
        std::make_shared<FolderCheckpointStore>(dir / topology));
  }
  if (kind == "nimbus") {
    return api::Status::error(std::string(keys::kTopologyStateCheckpointStore) +
                              " is 'nimbus', which keeps a cluster's checkpoints; in one process "
                              "use memory or folder");
  }
  return api::Status::error(std::string(keys::kTopologyStateCheckpointStore) + ": unknown store '" +
                            kind + "' (nimbus, folder or memory)");
}

}  // namespace rstorm::worker
