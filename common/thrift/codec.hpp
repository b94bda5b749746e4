// Codecs between Thrift structs and bytes (compact protocol, in memory), used
// for ZooKeeper node values and stored records; and between Config and its
// Thrift form. Decoding never trusts its input: garbage, truncated bytes,
// missing required fields or trailing bytes give an error naming the type,
// never a crash or an unbounded allocation.
//
// Free functions, thread-safe.
#pragma once

#include <thrift/TApplicationException.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/coordination_store.hpp"
#include "common/status.hpp"
#include "rstorm/config.hpp"
#include "rstorm_thrift/rstorm_types.h"

namespace rstorm {

template <typename T>
std::string encode_thrift(const T& value) {
  auto buffer = std::make_shared<apache::thrift::transport::TMemoryBuffer>();
  apache::thrift::protocol::TCompactProtocol protocol(buffer);
  value.write(&protocol);
  return buffer->getBufferAsString();
}

// `type_name` names T in errors ("SupervisorInfo").
template <typename T>
Result<T> decode_thrift(std::string_view bytes, std::string_view type_name) {
  using apache::thrift::transport::TMemoryBuffer;
  auto buffer = std::make_shared<TMemoryBuffer>(
      reinterpret_cast<std::uint8_t*>(const_cast<char*>(bytes.data())),
      static_cast<std::uint32_t>(bytes.size()), TMemoryBuffer::OBSERVE);
  // No string or container can be longer than the input itself.
  const auto limit = static_cast<std::int32_t>(std::min<std::size_t>(bytes.size(), INT32_MAX));
  apache::thrift::protocol::TCompactProtocol protocol(buffer, limit, limit);
  T value;
  try {
    value.read(&protocol);
  } catch (const std::exception& e) {
    return Status(ErrorCode::kInvalidArgument, "cannot decode " + std::string(type_name) + " from " +
                                                   std::to_string(bytes.size()) +
                                                   " bytes: " + e.what());
  }
  if (buffer->available_read() != 0) {
    return Status(ErrorCode::kInvalidArgument,
                  "cannot decode " + std::string(type_name) + ": " +
                      std::to_string(buffer->available_read()) + " trailing bytes after " +
                      std::to_string(bytes.size() - buffer->available_read()));
  }
  return value;
}

// A decoded node value and the version to pass back for compare-and-set.
template <typename T>
struct VersionedNode {
  T value;
  std::int32_t version = 0;
};

// Reads and decodes the node at `path`. A value that does not decode is
// kCorruption naming the path and the type.
template <typename T>
Result<VersionedNode<T>> read_thrift_node(CoordinationStore& store, std::string_view path,
                                          std::string_view type_name,
                                          WatchCallback watch = nullptr) {
  auto node = store.get(path, std::move(watch));
  if (!node) return node.status();
  auto value = decode_thrift<T>(node->data, type_name);
  if (!value) {
    return Status(ErrorCode::kCorruption,
                  "node " + std::string(path) + " does not hold a valid " +
                      std::string(type_name) + ": " + value.status().message());
  }
  return VersionedNode<T>{std::move(*value), node->version};
}

// Creates the node at `path` holding `value`; returns the created path.
template <typename T>
Result<std::string> create_thrift_node(CoordinationStore& store, std::string_view path,
                                       const T& value, CreateMode mode = CreateMode::kPersistent) {
  return store.create(path, encode_thrift(value), mode);
}

// Replaces the node's value (compare-and-set with `expected_version`);
// returns the new version.
template <typename T>
Result<std::int32_t> write_thrift_node(CoordinationStore& store, std::string_view path,
                                       const T& value,
                                       std::int32_t expected_version = kAnyVersion) {
  return store.set(path, encode_thrift(value), expected_version);
}

// Config <-> map of YAML-rendered values with origins.
std::map<std::string, thrift::ConfigEntry> config_to_thrift(const Config& config);
// kInvalidArgument naming the key when a value does not parse or the schema
// rejects it (check_config in common/config_loader.hpp).
Result<Config> config_from_thrift(const std::map<std::string, thrift::ConfigEntry>& entries);
// The integer `key` of such a config; `fallback` when it is not set, null,
// not an integer, or the config does not parse.
std::int64_t config_int_or(const std::map<std::string, thrift::ConfigEntry>& entries,
                           std::string_view key, std::int64_t fallback);

}  // namespace rstorm
