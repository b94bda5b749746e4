// Fields: the ordered names of a stream's values, e.g. Fields{"word", "count"}.
// A plain value: thread-compatible.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rstorm {

class Fields {
 public:
  Fields() = default;
  Fields(std::initializer_list<std::string> names) : names_(names) {}
  explicit Fields(std::vector<std::string> names) : names_(std::move(names)) {}

  std::size_t size() const { return names_.size(); }
  bool empty() const { return names_.empty(); }
  const std::string& operator[](std::size_t i) const { return names_[i]; }
  const std::vector<std::string>& names() const { return names_; }
  auto begin() const { return names_.begin(); }
  auto end() const { return names_.end(); }

  // Position of `name`, or nullopt when the stream has no such field.
  std::optional<std::size_t> index_of(std::string_view name) const;
  bool contains(std::string_view name) const { return index_of(name).has_value(); }
  // "word, count" (for messages).
  std::string to_string() const;

  friend bool operator==(const Fields&, const Fields&) = default;

 private:
  std::vector<std::string> names_;
};

}  // namespace rstorm
