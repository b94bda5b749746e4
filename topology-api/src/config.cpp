// Config, ConfigValue and the `-c key=value` reader. The reader classifies a
// scalar the way YAML 1.2's core schema would, without depending on a YAML
// library: the public API library links nothing but the C++ runtime.
#include "rstorm/config.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace rstorm {
namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  out += '"';
  return out;
}

std::string render_double(double d) {
  if (std::isnan(d)) return ".nan";
  if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  std::string out(buf, end);
  // Keep a double recognisable as one when it is read back.
  if (out.find_first_of(".eE") == std::string::npos) out += ".0";
  return out;
}

// "an integer", "a string", "null".
std::string with_article(std::string_view type) {
  if (type == "null") return "null";
  if (type == "integer") return "an integer";
  return "a " + std::string(type);
}

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n";
  auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

[[noreturn]] void type_error(std::string_view key, const Config::Entry& e,
                             std::string_view expected) {
  throw ConfigError("config key '" + std::string(key) + "' (from " + e.origin + ") is " +
                    with_article(e.value.type_name()) +
                    (e.value.is_null() ? "" : " (" + e.value.to_string() + ")") +
                    ", expected " + std::string(expected));
}

[[noreturn]] void element_error(std::string_view key, const Config::Entry& e, std::size_t index,
                                const ConfigValue& element, std::string_view expected) {
  throw ConfigError("config key '" + std::string(key) + "' (from " + e.origin + ") has element " +
                    std::to_string(index) + " that is " + with_article(element.type_name()) +
                    " (" + element.to_string() + "), expected " + std::string(expected));
}

bool is_one_of(std::string_view s, std::initializer_list<std::string_view> options) {
  for (auto o : options)
    if (s == o) return true;
  return false;
}

// Parses a whole-token integer (decimal, or 0x hex); nullopt when `s` is not one.
// Throws when `s` is an integer that does not fit in 64 bits.
std::optional<std::int64_t> parse_int(std::string_view s, std::string_view arg) {
  std::string_view digits = s;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  if (digits.empty()) return std::nullopt;
  for (char c : digits) {
    bool ok = base == 10 ? (c >= '0' && c <= '9') : std::isxdigit(static_cast<unsigned char>(c));
    if (!ok) return std::nullopt;
  }
  std::uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  const std::uint64_t limit =
      negative ? std::uint64_t{1} << 63 : std::uint64_t(std::numeric_limits<std::int64_t>::max());
  if (ec == std::errc::result_out_of_range || magnitude > limit) {
    throw ConfigError("config override '" + std::string(arg) + "': integer " + std::string(s) +
                      " does not fit in 64 bits");
  }
  if (negative) return static_cast<std::int64_t>(0 - magnitude);
  return static_cast<std::int64_t>(magnitude);
}

std::optional<double> parse_double(std::string_view s) {
  if (is_one_of(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"}))
    return std::numeric_limits<double>::infinity();
  if (is_one_of(s, {"-.inf", "-.Inf", "-.INF"})) return -std::numeric_limits<double>::infinity();
  if (is_one_of(s, {".nan", ".NaN", ".NAN"})) return std::numeric_limits<double>::quiet_NaN();
  // YAML floats are digits with a point or an exponent; from_chars alone would
  // also take "inf" and "nan".
  bool has_digit = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      has_digit = true;
    } else if (!is_one_of(std::string_view(&c, 1), {".", "e", "E", "+", "-"})) {
      return std::nullopt;
    }
  }
  if (!has_digit) return std::nullopt;
  std::string_view body = s;
  if (!body.empty() && body[0] == '+') body.remove_prefix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (ec != std::errc() || end != body.data() + body.size()) return std::nullopt;
  return value;
}

std::string unquote(std::string_view s, std::string_view arg) {
  const char q = s.front();
  std::string out;
  for (std::size_t i = 1; i + 1 < s.size(); ++i) {
    char c = s[i];
    if (q == '\'' && c == '\'' && i + 2 < s.size() && s[i + 1] == '\'') {
      out += '\'';
      ++i;
    } else if (q == '"' && c == '\\' && i + 2 < s.size()) {
      char n = s[++i];
      out += n == 'n' ? '\n' : n == 't' ? '\t' : n;
    } else {
      out += c;
    }
  }
  return out;
}

ConfigValue parse_scalar_or_list(std::string_view text, std::string_view arg);

// Splits the inside of a flow list at top-level commas.
ConfigValue parse_list(std::string_view text, std::string_view arg) {
  std::string_view body = trim(text.substr(1, text.size() - 2));
  ConfigValue::List items;
  if (body.empty()) return items;
  int depth = 0;
  char in_quote = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= body.size(); ++i) {
    char c = i < body.size() ? body[i] : ',';
    if (in_quote) {
      if (c == '\\' && in_quote == '"') ++i;
      else if (c == in_quote) in_quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') in_quote = c;
    else if (c == '[') ++depth;
    else if (c == ']') --depth;
    else if (c == ',' && depth == 0) {
      std::string_view item = trim(body.substr(start, i - start));
      if (item.empty()) {
        throw ConfigError("config override '" + std::string(arg) + "': empty element in list " +
                          std::string(text));
      }
      items.push_back(parse_scalar_or_list(item, arg));
      start = i + 1;
    }
  }
  if (in_quote || depth != 0) {
    throw ConfigError("config override '" + std::string(arg) + "': unbalanced list " +
                      std::string(text));
  }
  return items;
}

ConfigValue parse_scalar_or_list(std::string_view text, std::string_view arg) {
  std::string_view s = trim(text);
  if (s.empty() || is_one_of(s, {"~", "null", "Null", "NULL"})) return nullptr;
  if (is_one_of(s, {"true", "True", "TRUE"})) return true;
  if (is_one_of(s, {"false", "False", "FALSE"})) return false;
  if (s.front() == '[') {
    if (s.size() < 2 || s.back() != ']') {
      throw ConfigError("config override '" + std::string(arg) + "': unbalanced list " +
                        std::string(s));
    }
    return parse_list(s, arg);
  }
  if (s.front() == '"' || s.front() == '\'') {
    if (s.size() < 2 || s.back() != s.front()) {
      throw ConfigError("config override '" + std::string(arg) + "': unterminated quoted string " +
                        std::string(s));
    }
    return unquote(s, arg);
  }
  if (auto i = parse_int(s, arg)) return *i;
  if (auto d = parse_double(s)) return *d;
  return std::string(s);
}

}  // namespace

std::string_view ConfigValue::type_name() const {
  static constexpr std::string_view kNames[] = {"null",   "bool",   "integer",
                                                "number", "string", "list"};
  return kNames[v_.index()];
}

std::string ConfigValue::to_string() const {
  switch (v_.index()) {
    case 0: return "null";
    case 1: return as_bool() ? "true" : "false";
    case 2: return std::to_string(as_int());
    case 3: return render_double(as_double());
    case 4: return quote(as_string());
    default: {
      std::string out = "[";
      for (const auto& item : as_list()) {
        if (out.size() > 1) out += ", ";
        out += item.to_string();
      }
      return out + "]";
    }
  }
}

void Config::set(std::string key, ConfigValue value, std::string origin) {
  entries_.insert_or_assign(std::move(key), Entry{std::move(value), std::move(origin)});
}

bool Config::contains(std::string_view key) const { return entries_.find(key) != entries_.end(); }

const Config::Entry* Config::find(std::string_view key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

void Config::erase(std::string_view key) {
  auto it = entries_.find(key);
  if (it != entries_.end()) entries_.erase(it);
}

const Config::Entry& Config::require(std::string_view key) const {
  const Entry* e = find(key);
  if (e == nullptr) throw ConfigError("config key '" + std::string(key) + "' is not set");
  return *e;
}

bool Config::get_bool(std::string_view key) const {
  const Entry& e = require(key);
  if (!e.value.is_bool()) type_error(key, e, "a bool");
  return e.value.as_bool();
}

bool Config::get_bool(std::string_view key, bool fallback) const {
  return contains(key) ? get_bool(key) : fallback;
}

std::int64_t Config::get_int(std::string_view key) const {
  const Entry& e = require(key);
  if (!e.value.is_int()) type_error(key, e, "an integer");
  return e.value.as_int();
}

std::int64_t Config::get_int(std::string_view key, std::int64_t fallback) const {
  return contains(key) ? get_int(key) : fallback;
}

double Config::get_double(std::string_view key) const {
  const Entry& e = require(key);
  if (e.value.is_int()) return static_cast<double>(e.value.as_int());
  if (!e.value.is_double()) type_error(key, e, "a number");
  return e.value.as_double();
}

double Config::get_double(std::string_view key, double fallback) const {
  return contains(key) ? get_double(key) : fallback;
}

std::string Config::get_string(std::string_view key) const {
  const Entry& e = require(key);
  if (!e.value.is_string()) type_error(key, e, "a string");
  return e.value.as_string();
}

std::string Config::get_string(std::string_view key, std::string_view fallback) const {
  return contains(key) ? get_string(key) : std::string(fallback);
}

std::vector<std::string> Config::get_string_list(std::string_view key) const {
  const Entry& e = require(key);
  if (!e.value.is_list()) type_error(key, e, "a list of strings");
  std::vector<std::string> out;
  const auto& list = e.value.as_list();
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) element_error(key, e, i, list[i], "a string");
    out.push_back(list[i].as_string());
  }
  return out;
}

std::vector<std::int64_t> Config::get_int_list(std::string_view key) const {
  const Entry& e = require(key);
  if (!e.value.is_list()) type_error(key, e, "a list of integers");
  std::vector<std::int64_t> out;
  const auto& list = e.value.as_list();
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_int()) element_error(key, e, i, list[i], "an integer");
    out.push_back(list[i].as_int());
  }
  return out;
}

void Config::merge(const Config& other) {
  for (const auto& [key, entry] : other.entries_) entries_.insert_or_assign(key, entry);
}

std::pair<std::string, ConfigValue> parse_config_override(std::string_view arg) {
  auto eq = arg.find('=');
  if (eq == std::string_view::npos) {
    throw ConfigError("config override '" + std::string(arg) +
                      "' has no '=': expected key=value, e.g. topology.workers=4");
  }
  std::string_view key = trim(arg.substr(0, eq));
  if (key.empty()) {
    throw ConfigError("config override '" + std::string(arg) + "' has an empty key");
  }
  return {std::string(key), parse_scalar_or_list(arg.substr(eq + 1), arg)};
}

}  // namespace rstorm
