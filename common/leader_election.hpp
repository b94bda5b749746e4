// LeaderElection: ZooKeeper's leader-election recipe on any CoordinationStore.
// Each candidate creates an ephemeral sequential node "n_<seq>" under the
// election path; the lowest sequence leads; every other candidate watches only
// its predecessor (no herd effect) and re-evaluates when it goes away.
//
// Leadership is given up (callback with false) as soon as the connection is
// lost or the session expires: a leader that cannot prove it holds its node
// stops acting as leader. On reconnection it re-evaluates; after an expiry it
// re-creates its node (kNewSession) and contests again.
//
// Thread contract: thread-safe. The callback runs on the store's dispatch
// thread (or on the caller of start()/stop()), one call at a time, and may
// call is_leader(), leader() and stop(). REQUIRES: the store outlives this.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/coordination_store.hpp"
#include "common/logger.hpp"

namespace rstorm {

class LeaderElection {
 public:
  using LeadershipCallback = std::function<void(bool is_leader)>;

  struct Options {
    // The parent of the candidates' nodes, e.g. ClusterPaths::nimbus_leader().
    // Created if missing.
    std::string election_path;
    // Stored as the candidate's node data; leader() returns the winner's.
    std::string candidate_id;
  };

  LeaderElection(CoordinationStore& store, Options options, LeadershipCallback on_change,
                 Logger logger);
  ~LeaderElection();  // stop()
  LeaderElection(const LeaderElection&) = delete;
  LeaderElection& operator=(const LeaderElection&) = delete;

  // Joins the election. The callback reports true when this candidate leads.
  Status start();
  // Leaves the election (deletes this candidate's node); reports false if it
  // was leading. No callback after it returns. Idempotent.
  void stop();

  bool is_leader() const;
  // The candidate id of the current leader; kNotFound when there is none.
  Result<std::string> leader() const;
  // This candidate's node, "" when it has none.
  std::string node_path() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace rstorm
