#include "nodes/cluster/yaml_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "common/log_text.hpp"

namespace tagflow::cluster {

namespace {

/// What a value that is not a scalar is, for an error message.
std::string what_is(const YAML::Node& value) {
  if (value.IsNull()) return "an empty value";
  return value.IsSequence() ? "a list" : "a map";
}

}  // namespace

int line_of(const YAML::Node& node) { return node.Mark().line + 1; }

YamlReader::YamlReader(YAML::Node node, std::string file, std::string path, int line)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)), line_(line) {
  if (!node_.IsMap()) fail_here("expected a map of keys");
}

std::string YamlReader::path_of(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

int YamlReader::line_of(const std::string& key) const {
  for (const auto& entry : node_) {
    if (entry.first.Scalar() == key) return cluster::line_of(entry.first);
  }
  return own_line();
}

int YamlReader::own_line() const { return line_ > 0 ? line_ : cluster::line_of(node_); }

void YamlReader::fail(const std::string& key, const std::string& message) const {
  throw ConfigError(file_, line_of(key), path_of(key), message);
}

void YamlReader::fail_missing(const std::string& key) const {
  // The line is the map's first key's: at the top level, say that the file as a whole lacks it.
  fail(key, path_.empty() ? "missing (required at the file's top level)" : "missing (required)");
}

void YamlReader::fail_here(const std::string& message) const {
  throw ConfigError(file_, own_line(), path_.empty() ? "(top level)" : path_, message);
}

void YamlReader::only_keys(std::initializer_list<const char*> known,
                           const std::string& free_prefix) const {
  const std::set<std::string> allowed(known.begin(), known.end());
  for (const auto& entry : node_) {
    const std::string key = entry.first.Scalar();
    if (!free_prefix.empty() && key.compare(0, free_prefix.size(), free_prefix) == 0) {
      continue;
    }
    if (allowed.count(key) == 0) {
      std::string list;
      for (const std::string& k : allowed) list += (list.empty() ? "" : ", ") + k;
      if (!free_prefix.empty()) list += ", and any key starting with " + free_prefix;
      fail(key, "unknown key (known here: " + list + ")");
    }
  }
}

bool YamlReader::has(const std::string& key) const { return static_cast<bool>(node_[key]); }

std::string YamlReader::string(const std::string& key) const {
  const YAML::Node value = node_[key];
  if (!value) fail_missing(key);
  if (!value.IsScalar()) fail(key, "expected a string, got " + what_is(value));
  return value.Scalar();
}

std::string YamlReader::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

std::optional<long> parse_yaml_integer(const std::string& text, bool& out_of_range) {
  out_of_range = false;
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  int base = 10;
  if (text.compare(i, 2, "0x") == 0) base = 16;
  if (text.compare(i, 2, "0o") == 0) base = 8;
  if (base != 10 && i != 0) return std::nullopt;  // the core schema signs decimal integers only
  if (base != 10) i += 2;
  const std::string digits = text.substr(i);
  if (digits.empty()) return std::nullopt;
  for (const char c : digits) {
    const bool ok = base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                               : c >= '0' && c < static_cast<char>('0' + base);
    if (!ok) return std::nullopt;
  }
  errno = 0;
  const unsigned long long magnitude = std::strtoull(digits.c_str(), nullptr, base);
  const unsigned long long limit = negative ? static_cast<unsigned long long>(LONG_MAX) + 1
                                            : static_cast<unsigned long long>(LONG_MAX);
  if (errno == ERANGE || magnitude > limit) {
    out_of_range = true;
    return std::nullopt;
  }
  if (negative) return magnitude == limit ? LONG_MIN : -static_cast<long>(magnitude);
  return static_cast<long>(magnitude);
}

long YamlReader::integer(const std::string& key, long min, long max) const {
  const YAML::Node value = node_[key];
  if (!value) fail_missing(key);
  if (!value.IsScalar()) fail(key, "expected an integer, got " + what_is(value));
  bool out_of_range = false;
  const std::optional<long> parsed = parse_yaml_integer(value.Scalar(), out_of_range);
  if (!parsed) {
    fail(key, out_of_range ? "'" + escape_for_log(value.Scalar()) + "' is outside " +
                                 std::to_string(min) + ".." + std::to_string(max)
                           : "expected an integer, got '" + escape_for_log(value.Scalar()) + "'");
  }
  const long result = *parsed;
  if (result < min || result > max) {
    fail(key, std::to_string(result) + " is outside " + std::to_string(min) + ".." +
                  std::to_string(max));
  }
  return result;
}

long YamlReader::integer_or(const std::string& key, long fallback, long min, long max) const {
  return has(key) ? integer(key, min, max) : fallback;
}

double YamlReader::number(const std::string& key) const {
  const YAML::Node value = node_[key];
  if (!value) fail_missing(key);
  double result = 0;
  if (!value.IsScalar()) fail(key, "expected a number, got " + what_is(value));
  if (!YAML::convert<double>::decode(value, result)) {
    // A number past what a double holds (1e400) is a number too large, not "not a number".
    const std::string& text = value.Scalar();
    char* end = nullptr;
    errno = 0;
    const double near = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size() && errno == ERANGE && near != 0.0) {
      fail(key, "'" + escape_for_log(text) + "' is beyond a number's range (about ±1.8e308)");
    }
    fail(key, "expected a number, got '" + escape_for_log(text) + "'");
  }
  return result;
}

bool YamlReader::boolean_or(const std::string& key, bool fallback) const {
  const YAML::Node value = node_[key];
  if (!value) return fallback;
  bool result = false;
  if (!value.IsScalar() || !YAML::convert<bool>::decode(value, result)) {
    fail(key, "expected true or false (yes/no and on/off are read as true/false too), got " +
                  (value.IsScalar() ? "'" + escape_for_log(value.Scalar()) + "'" : what_is(value)));
  }
  return result;
}

std::chrono::nanoseconds YamlReader::duration(const std::string& key) const {
  if (const YAML::Node value = node_[key]; value && !value.IsScalar()) {
    fail(key, "expected a duration such as 0, 250ms, 2s or 10us, got " + what_is(value));
  }
  const std::string text = string(key);
  bool too_long = false;
  const auto parsed = parse_duration(text, too_long);
  if (too_long) {
    fail(key, "'" + escape_for_log(text) + "' is longer than the longest duration, 2^62 ns " +
                  "(about 146 years)");
  }
  if (!parsed) {
    fail(key,
         "expected a duration such as 0, 250ms, 2s or 10us (a whole number of nanoseconds), got '" +
             escape_for_log(text) + "'");
  }
  return *parsed;
}

std::uint16_t YamlReader::port_or(const std::string& key, std::uint16_t fallback) const {
  return static_cast<std::uint16_t>(integer_or(key, fallback, 1, 65535));
}

void check_cluster_text(const std::string& text, const std::string& file) {
  if (text.size() > kMaxClusterFileBytes) {
    throw ConfigError(
        file, 0, "(file)",
        "larger than the cluster file limit of " + std::to_string(kMaxClusterFileBytes) + " bytes");
  }
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(nul), '\n');
    throw ConfigError(file, static_cast<int>(line), "(file)", "a NUL byte (the file is not text)");
  }
  // Lines ended by CR alone (classic Mac OS): YAML reads them as breaks, yaml-cpp as one line.
  if (text.find('\r') != std::string::npos && text.find('\n') == std::string::npos &&
      text.find_first_not_of("\r \t") != std::string::npos) {
    throw ConfigError(file, 0, "(file)",
                      "its lines end with a carriage return alone (CR, no LF): save it with LF "
                      "(or CR LF) line ends");
  }
}

namespace {

/// `path`, or "(top level)" for the root's empty one.
std::string shown(const std::string& path) { return path.empty() ? "(top level)" : path; }

/// How deep a tree may nest. A real cluster file nests fewer than ten levels; an alias inside its
/// own anchor (`&a [*a]`, which yaml-cpp reads as a value that contains itself) nests without end.
constexpr int kMaxClusterDepth = 100;

/// Counts one more node, `depth` levels down, against the tree's bounds: aliases may repeat a
/// subtree many times over, and merge keys copy entries; a real cluster file has a few hundred
/// nodes.
void count_node(const YAML::Node& node, const std::string& file, const std::string& path,
                std::size_t& visited, int depth) {
  if (++visited > kMaxClusterFileBytes) {
    throw ConfigError(file, line_of(node), shown(path),
                      "too many nodes (aliases repeating a subtree?)");
  }
  if (depth > kMaxClusterDepth) {
    throw ConfigError(file, line_of(node),
                      shown(path.size() > 200 ? path.substr(0, 200) + "..." : path),
                      "nested more than " + std::to_string(kMaxClusterDepth) +
                          " levels deep (an alias inside its own anchor, such as &a [*a]?)");
  }
}

/// Refuses an explicit tag on `node`. "?": no tag (a plain scalar, a map, a list); "!": a quoted
/// scalar. Any other tag (`!!str`, `!!int`, `!custom`) would say how to read the value, and
/// nothing here reads tags.
void refuse_tag(const YAML::Node& node, const std::string& file, const std::string& path) {
  const std::string& tag = node.Tag();
  if (tag == "?" || tag == "!" || tag.empty()) return;
  // As written: `!!int` is the core schema's tag:yaml.org,2002:int.
  const std::string core = "tag:yaml.org,2002:";
  const std::string written =
      tag.compare(0, core.size(), core) == 0 ? "!!" + tag.substr(core.size()) : tag;
  throw ConfigError(file, line_of(node), shown(path),
                    "the YAML tag '" + escape_for_log(written) +
                        "' is not supported: write the value without a tag");
}

/// Whether the null `node` is written as nothing at all (not `~` or `null`): yaml-cpp then marks
/// it at the next token.
bool implicit_null(const YAML::Node& node, const std::string& text) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null() || mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= text.size()) {
    return true;
  }
  for (const char* word : {"~", "null", "Null", "NULL"}) {
    if (text.compare(static_cast<std::size_t>(mark.pos), std::strlen(word), word) == 0)
      return false;
  }
  return true;
}

/// The 1-based line of a null `node` written as nothing at all (implicit_null) in `text`:
/// yaml-cpp marks such a value (a `-` or `key:` with nothing after it) at the next token, often a
/// line or more further down, so this is the last line with content before that mark.
int null_line(const YAML::Node& node, const std::string& text) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null() || mark.pos < 0 || static_cast<std::size_t>(mark.pos) > text.size()) {
    return line_of(node);
  }
  // From the mark's position, not its line and column (at the end of the text yaml-cpp's are not
  // where the position is): the line it is on when something is written before it there, else
  // the last line above with more than blanks or a comment.
  const auto pos = static_cast<std::size_t>(mark.pos);
  std::vector<std::string> lines;
  std::istringstream in(text.substr(0, pos));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  if (pos == 0 || text[pos - 1] == '\n') lines.emplace_back();  // the mark starts its line
  for (std::size_t l = lines.size(); l-- > 0;) {
    const std::size_t first = lines[l].find_first_not_of(" \t\r");
    if (first == std::string::npos || (l + 1 < lines.size() && lines[l][first] == '#')) continue;
    return static_cast<int>(l) + 1;
  }
  return mark.line + 1;
}

/// Whether `key` is a merge key: a plain `<<` (quoted, it is an ordinary key).
bool is_merge_key(const YAML::Node& key) {
  return key.IsScalar() && key.Tag() == "?" && key.Scalar() == "<<";
}

void check_node(const YAML::Node& node, const std::string& file, const std::string* text,
                const std::string& path, std::size_t& visited, int depth);

/// Resolves the merge keys of `node` and everything under it, depth first (see
/// resolve_merge_keys). The maps a merge key names are resolved before their entries are copied.
void merge_node(YAML::Node node, const std::string& file, const std::string& path,
                std::size_t& visited, int depth) {
  count_node(node, file, path, visited, depth);
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      merge_node(node[i], file, path + "[" + std::to_string(i) + "]", visited, depth + 1);
    }
    return;
  }
  if (!node.IsMap()) return;
  const std::string merge_path = path.empty() ? "<<" : path + ".<<";
  bool merges = false;  // (a default YAML::Node is a null node, which converts to true)
  YAML::Node merge_key;
  YAML::Node sources;
  for (const auto& entry : node) {
    if (!is_merge_key(entry.first)) continue;
    if (merges) {
      throw ConfigError(file, line_of(entry.first), merge_path,
                        "duplicate key (it appears earlier in the same map)");
    }
    merges = true;
    merge_key = entry.first;
    sources = entry.second;
  }
  if (merges) {
    // One map, or a list of maps of which an earlier one wins a key both have.
    std::vector<YAML::Node> maps;
    if (sources.IsMap()) {
      maps.push_back(sources);
    } else if (sources.IsSequence() && sources.size() > 0) {
      for (std::size_t i = 0; i < sources.size(); ++i) maps.push_back(sources[i]);
    }
    const bool all_maps = !maps.empty() && std::all_of(maps.begin(), maps.end(),
                                                       [](const auto& m) { return m.IsMap(); });
    if (!all_maps) {
      // At the `<<` itself: an alias's own mark is the line of the anchor it names.
      throw ConfigError(file, line_of(merge_key), merge_path,
                        "a merge key takes a map or a list of maps, such as *defaults or "
                        "[*a, *b] (an alias of a map marked &defaults)");
    }
    // What goes with the merge (a list, and maps written in place) is checked here: only the
    // maps' entries stay in the tree. (A merge key itself has no tag: is_merge_key().)
    if (sources.IsSequence()) refuse_tag(sources, file, merge_path);
    for (const YAML::Node& map : maps) refuse_tag(map, file, merge_path);
    for (std::size_t i = 0; i < maps.size(); ++i) {
      const std::string source =
          maps.size() == 1 ? merge_path : merge_path + "[" + std::to_string(i) + "]";
      merge_node(maps[i], file, source, visited, depth + 1);
      // A map written in place leaves the tree with the merge, and a key it gives twice or a
      // key the map wins would never be seen: the source is checked as the tree is.
      check_node(maps[i], file, nullptr, source, visited, depth + 1);
    }
    node.remove(merge_key);
    // The map's own keys win; a merged key keeps its line (where it is written).
    std::set<std::string> present;
    for (const auto& entry : node) {
      if (entry.first.IsScalar()) present.insert(entry.first.Scalar());
    }
    for (const YAML::Node& map : maps) {
      for (const auto& entry : map) {
        if (!entry.first.IsScalar() || !present.insert(entry.first.Scalar()).second) continue;
        count_node(entry.second, file, path, visited, depth + 1);
        node.force_insert(entry.first, entry.second);
      }
    }
  }
  for (const auto& entry : node) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "(a non-scalar key)";
    merge_node(entry.second, file, path.empty() ? key : path + "." + key, visited, depth + 1);
  }
}

/// Walks the tree depth first; `path` is the dotted key of `node`, `text` the file's text (null
/// for a map merged in, no longer in the tree).
void check_node(const YAML::Node& node, const std::string& file, const std::string* text,
                const std::string& path, std::size_t& visited, int depth) {
  count_node(node, file, path, visited, depth);
  refuse_tag(node, file, path);
  if (node.IsScalar() && node.Scalar().find('\0') != std::string::npos) {
    throw ConfigError(file, line_of(node), shown(path),
                      "a NUL character in '" + escape_for_log(node.Scalar()) + "'");
  }
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string item = path + "[" + std::to_string(i) + "]";
      // (`- ~` and `- null` are values, for the reader to refuse where it wants something else.)
      if (node[i].IsNull() && text != nullptr && implicit_null(node[i], *text)) {
        throw ConfigError(file, null_line(node[i], *text), item,
                          "an empty list item (a `-` with nothing after it): remove it");
      }
      check_node(node[i], file, text, item, visited, depth + 1);
    }
  }
  if (!node.IsMap()) return;
  std::set<std::string> keys;
  for (const auto& entry : node) {
    // A list or a map as a key (`? [a, b]`), or a null one (`~:`, `null:`), names nothing a
    // reader could look up.
    if (!entry.first.IsScalar()) {
      throw ConfigError(file, line_of(entry.first), shown(path),
                        entry.first.IsNull()
                            ? "a key must be a single value, not null (`~` or `null`)"
                            : "a key must be a single value, not a list or a map");
    }
    const std::string key = entry.first.Scalar();
    const std::string key_path = path.empty() ? key : path + "." + key;
    check_node(entry.first, file, text, key_path, visited, depth + 1);
    if (!keys.insert(key).second) {
      throw ConfigError(file, line_of(entry.first), key_path,
                        "duplicate key (it appears earlier in the same map)");
    }
    check_node(entry.second, file, text, key_path, visited, depth + 1);
  }
}

}  // namespace

void resolve_merge_keys(YAML::Node root, const std::string& file) {
  std::size_t visited = 0;
  merge_node(std::move(root), file, "", visited, 0);
}

void check_cluster_tree(const YAML::Node& root, const std::string& file, const std::string& text) {
  std::size_t visited = 0;
  check_node(root, file, &text, "", visited, 0);
}

YamlReader YamlReader::map_entry(const YAML::Node& key, const YAML::Node& value) const {
  const std::string name = key.Scalar();
  if (!value.IsMap()) fail(name, "expected a map of keys");
  return YamlReader(value, file_, path_of(name), cluster::line_of(key));
}

YamlReader YamlReader::map(const std::string& key) const {
  const YAML::Node value = node_[key];
  if (!value) fail_missing(key);
  if (!value.IsMap()) fail(key, "expected a map of keys");
  return YamlReader(value, file_, path_of(key), line_of(key));
}

}  // namespace tagflow::cluster
