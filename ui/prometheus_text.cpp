#include "ui/prometheus_text.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>

namespace rstorm::ui {

namespace {

bool name_char(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

std::optional<double> parse_value(std::string_view text) {
  if (text == "+Inf") return HUGE_VAL;
  if (text == "-Inf") return -HUGE_VAL;
  if (text == "NaN") return std::nan("");
  const std::string copy(text);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str() || *end != '\0') return std::nullopt;
  return v;
}

// name{labels} value [timestamp]
std::optional<PromSample> parse_line(std::string_view line) {
  PromSample s;
  std::size_t i = 0;
  while (i < line.size() && name_char(line[i], i == 0)) ++i;
  if (i == 0) return std::nullopt;
  s.name = std::string(line.substr(0, i));
  if (i < line.size() && line[i] == '{') {
    ++i;
    for (;;) {
      while (i < line.size() && (line[i] == ' ' || line[i] == ',')) ++i;
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      const std::size_t key_start = i;
      while (i < line.size() && name_char(line[i], i == key_start)) ++i;
      if (i == key_start || i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') {
        return std::nullopt;
      }
      std::string key(line.substr(key_start, i - key_start));
      i += 2;
      std::string value;
      bool closed = false;
      while (i < line.size()) {
        const char c = line[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\' && i < line.size()) {
          const char e = line[i++];
          value += e == 'n' ? '\n' : e;
        } else {
          value += c;
        }
      }
      if (!closed) return std::nullopt;
      s.labels.emplace(std::move(key), std::move(value));
    }
  }
  while (i < line.size() && line[i] == ' ') ++i;
  std::size_t end = line.find(' ', i);
  auto value = parse_value(line.substr(i, end == std::string_view::npos ? end : end - i));
  if (!value) return std::nullopt;
  s.value = *value;
  return s;
}

}  // namespace

PromParse parse_prometheus_text(std::string_view text) {
  PromParse out;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty()) continue;
    if (line.front() == '#') {
      constexpr std::string_view kType = "# TYPE ";
      if (line.substr(0, kType.size()) == kType) {
        const std::string_view rest = line.substr(kType.size());
        const std::size_t space = rest.find(' ');
        if (space != std::string_view::npos) {
          out.types[std::string(rest.substr(0, space))] = std::string(rest.substr(space + 1));
        }
      }
      continue;
    }
    if (auto s = parse_line(line)) {
      out.samples.push_back(std::move(*s));
    } else {
      ++out.malformed_lines;
    }
  }
  return out;
}

}  // namespace rstorm::ui
