#include "rstorm/fields.hpp"

namespace rstorm {

std::optional<std::size_t> Fields::index_of(std::string_view name) const {
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return i;
  }
  return std::nullopt;
}

std::string Fields::to_string() const {
  std::string out;
  for (const auto& n : names_) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

}  // namespace rstorm
