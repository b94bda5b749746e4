#include "common/leader_election.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>

namespace rstorm {
namespace {

constexpr std::string_view kCandidatePrefix = "n_";

// Sequence suffixes are fixed-width, so names sort by sequence.
std::vector<std::string> candidates(std::vector<std::string> names) {
  std::erase_if(names, [](const std::string& n) { return !n.starts_with(kCandidatePrefix); });
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

struct LeaderElection::Impl : std::enable_shared_from_this<Impl> {
  Impl(CoordinationStore& s, Options o, LeadershipCallback cb, Logger l)
      : store(s), options(std::move(o)), on_change(std::move(cb)), logger(std::move(l)) {}

  CoordinationStore& store;
  const Options options;
  const LeadershipCallback on_change;
  const Logger logger;

  // Held for a whole evaluation, callback included, so that callbacks are
  // serialised; recursive so that the callback may call stop().
  std::recursive_mutex eval_mutex;
  std::string node;              // guarded by eval_mutex
  bool started = false;          // guarded by eval_mutex
  bool stopped = false;          // guarded by eval_mutex
  std::atomic<std::uint64_t> listener{0};
  std::atomic<bool> leading{false};

  void set_leading(bool now) {
    if (leading.exchange(now) == now) return;
    logger.info("{} leadership of {} ({})", now ? "took" : "lost", options.election_path,
                node.empty() ? "no node" : node);
    if (on_change) on_change(now);
  }

  Status create_node() {
    auto created = store.create(join_path(options.election_path, kCandidatePrefix),
                                options.candidate_id, CreateMode::kEphemeralSequential);
    if (!created) return created.status();
    node = *created;
    return Status::ok();
  }

  // REQUIRES: eval_mutex held.
  void evaluate() {
    if (stopped || node.empty()) return;
    const std::string mine = node.substr(node.rfind('/') + 1);
    for (;;) {
      auto kids = store.children(options.election_path);
      if (!kids) {
        logger.warn("leader election on {}: {}", options.election_path, kids.status().to_string());
        return set_leading(false);  // re-evaluated on the next session event
      }
      auto names = candidates(std::move(*kids));
      auto it = std::find(names.begin(), names.end(), mine);
      if (it == names.end()) {
        // Our node is gone (removed by hand, or with an old session): re-join.
        set_leading(false);
        if (Status s = create_node(); !s) {
          logger.warn("cannot re-join election {}: {}", options.election_path, s.to_string());
          return;
        }
        return evaluate();
      }
      if (it == names.begin()) return set_leading(true);
      set_leading(false);
      std::weak_ptr<Impl> weak = weak_from_this();
      auto watched = store.exists(join_path(options.election_path, *(it - 1)),
                                  [weak](const WatchEvent&) {
                                    if (auto self = weak.lock()) self->reevaluate();
                                  });
      if (watched && *watched) return;  // wait for the predecessor to go
      if (!watched) {
        logger.warn("leader election on {}: {}", options.election_path,
                    watched.status().to_string());
        return;
      }
      // The predecessor vanished between the two reads: look again.
    }
  }

  void reevaluate() {
    std::lock_guard lock(eval_mutex);
    evaluate();
  }

  void on_session(SessionEvent event) {
    std::lock_guard lock(eval_mutex);
    if (stopped || !started) return;
    switch (event) {
      case SessionEvent::kDisconnected: return set_leading(false);
      case SessionEvent::kConnected: return evaluate();
      case SessionEvent::kExpired:
        node.clear();  // the server deleted it with the session
        return set_leading(false);
      case SessionEvent::kNewSession:
        if (Status s = create_node(); !s) {
          logger.warn("cannot re-join election {} after session expiry: {}",
                      options.election_path, s.to_string());
          return;
        }
        return evaluate();
    }
  }
};

LeaderElection::LeaderElection(CoordinationStore& store, Options options,
                               LeadershipCallback on_change, Logger logger)
    : impl_(std::make_shared<Impl>(store, std::move(options), std::move(on_change),
                                   std::move(logger))) {}

LeaderElection::~LeaderElection() { stop(); }

Status LeaderElection::start() {
  // Register before taking eval_mutex: the dispatch thread holds the listener
  // registry while it waits for eval_mutex in on_session(). Events before
  // `started` is set are ignored; start() itself creates the node.
  if (impl_->listener.load() == 0) {
    std::weak_ptr<Impl> weak = impl_;
    impl_->listener = impl_->store.add_session_listener([weak](SessionEvent event) {
      if (auto self = weak.lock()) self->on_session(event);
    });
  }
  std::lock_guard lock(impl_->eval_mutex);
  if (impl_->stopped || impl_->started) return Status::ok();
  if (Status s = impl_->store.ensure_path(impl_->options.election_path); !s) return s;
  if (Status s = impl_->create_node(); !s) return s;
  impl_->started = true;
  impl_->evaluate();
  return Status::ok();
}

void LeaderElection::stop() {
  // Unregister before taking eval_mutex: the dispatch thread holds the
  // listener registry while it waits for eval_mutex in on_session().
  if (auto id = impl_->listener.exchange(0); id != 0) impl_->store.remove_session_listener(id);
  std::lock_guard lock(impl_->eval_mutex);
  if (impl_->stopped) return;
  impl_->stopped = true;
  if (!impl_->node.empty()) {
    Status s = impl_->store.remove(impl_->node);
    if (!s && s.code() != ErrorCode::kNotFound) {
      impl_->logger.warn("cannot remove election node {}: {}", impl_->node, s.to_string());
    }
  }
  impl_->set_leading(false);
  impl_->node.clear();
}

bool LeaderElection::is_leader() const { return impl_->leading.load(); }

std::string LeaderElection::node_path() const {
  std::lock_guard lock(impl_->eval_mutex);
  return impl_->node;
}

Result<std::string> LeaderElection::leader() const {
  auto kids = impl_->store.children(impl_->options.election_path);
  if (!kids) return kids.status();
  for (const auto& name : candidates(std::move(*kids))) {
    auto data = impl_->store.get(join_path(impl_->options.election_path, name));
    if (data) return data->data;  // else it vanished meanwhile: try the next
  }
  return Status(ErrorCode::kNotFound, "no leader under " + impl_->options.election_path);
}

}  // namespace rstorm
