#include "rstorm/tuple.hpp"

namespace rstorm {
namespace {
const std::string kEmpty;
const Fields kNoFields;

std::string describe_source(const StreamInfo* s) {
  if (s == nullptr) return "of a tuple with no source";
  return "of stream '" + s->stream + "' from component '" + s->component + "'";
}
}  // namespace

const Fields& Tuple::fields() const { return source_ ? source_->fields : kNoFields; }
const std::string& Tuple::source_component() const { return source_ ? source_->component : kEmpty; }
const std::string& Tuple::source_stream() const { return source_ ? source_->stream : kEmpty; }

const Value& Tuple::get(std::size_t index) const {
  if (index >= values_.size()) {
    throw TupleError("value " + std::to_string(index) + " " + describe_source(source_) +
                     " does not exist: the tuple has " + std::to_string(values_.size()) +
                     " values");
  }
  return values_[index];
}

// Why a look-up of `field` failed: the stream has no such field, or
// (`missing`) the tuple has fewer values than fields.
[[noreturn, gnu::noinline, gnu::cold]] static void throw_field_error(const StreamInfo* source,
                                                                     const Fields& fields,
                                                                     std::size_t num_values,
                                                                     std::string_view field,
                                                                     bool missing) {
  if (missing) {
    throw TupleError("field '" + std::string(field) + "' " + describe_source(source) +
                     " is missing: the tuple has " + std::to_string(num_values) + " values");
  }
  throw TupleError("no field '" + std::string(field) + "' " + describe_source(source) +
                   " (fields: " + fields.to_string() + ")");
}

std::size_t Tuple::field_index(std::string_view field) const {
  // Its own loop, not Fields::index_of: the optional that returns was built
  // in memory (eight bytes and a byte stored, then read back as one word
  // that no store could forward), and every look-up by name waited on it
  // (perf: 83 % of index_of's samples on the instruction after that load,
  // in the word count's report and count bolts).
  if (source_ != nullptr) {
    const std::vector<std::string>& names = source_->fields.names();
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] != field) continue;
      if (i >= values_.size()) [[unlikely]] {
        throw_field_error(source_, fields(), values_.size(), field, true);
      }
      return i;
    }
  }
  throw_field_error(source_, fields(), values_.size(), field, false);
}

const Value& Tuple::get(std::string_view field) const { return values_[field_index(field)]; }

void Tuple::throw_bad_access(std::size_t index, ValueType want) const {
  get(index);  // throws when out of range
  std::string what = index < fields().size() ? "field '" + fields()[index] + "'"
                                             : "value " + std::to_string(index);
  throw TupleError(what + " " + describe_source(source_) + " holds " +
                   (values_[index].type() == ValueType::kInt ? "an " : "a ") +
                   std::string(type_name(values_[index].type())) + ", not " +
                   (want == ValueType::kInt ? "an " : "a ") + std::string(type_name(want)));
}

std::int64_t Tuple::get_int(std::string_view field) const { return get_int(field_index(field)); }
double Tuple::get_double(std::string_view field) const { return get_double(field_index(field)); }
bool Tuple::get_bool(std::string_view field) const { return get_bool(field_index(field)); }
const std::string& Tuple::get_string(std::string_view field) const {
  return get_string(field_index(field));
}
const Bytes& Tuple::get_bytes(std::string_view field) const { return get_bytes(field_index(field)); }

std::string Tuple::to_string() const {
  std::string out = source_component() + ":" + std::to_string(source_task_.value) + " " +
                    source_stream() + " [";
  for (std::size_t i = 0; i < values_.size(); ++i) {
    if (i) out += ", ";
    out += values_[i].to_string();
  }
  return out + "]";
}

}  // namespace rstorm
