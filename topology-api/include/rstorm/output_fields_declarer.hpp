// OutputFieldsDeclarer: what a component tells the builder about the streams it
// emits (name, fields, direct or not). Single thread: used while building.
#pragma once

#include <string>
#include <vector>

#include "rstorm/fields.hpp"
#include "rstorm/ids.hpp"

namespace rstorm {

// One output stream of a component.
struct StreamSpec {
  std::string id;
  Fields fields;
  bool direct = false;  // emitted with emit_direct, consumed with direct grouping
  friend bool operator==(const StreamSpec&, const StreamSpec&) = default;
};

class OutputFieldsDeclarer {
 public:
  // The default stream.
  void declare(Fields fields) { declare_stream(std::string(kDefaultStream), std::move(fields)); }
  void declare(bool direct, Fields fields) {
    declare_stream(std::string(kDefaultStream), std::move(fields), direct);
  }
  // A stream declared twice is reported by TopologyBuilder::build().
  void declare_stream(std::string stream, Fields fields, bool direct = false) {
    streams_.push_back(StreamSpec{std::move(stream), std::move(fields), direct});
  }

  const std::vector<StreamSpec>& streams() const { return streams_; }

 private:
  std::vector<StreamSpec> streams_;
};

}  // namespace rstorm
