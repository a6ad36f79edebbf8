// YamlReader: typed access to one YAML map of a cluster file, with errors that name the file,
// the line and the dotted key (ConfigError). Internal to nodes/cluster.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>

#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cluster {

class YamlReader {
 public:
  /// `node` must be a map; otherwise throws ConfigError at `path`. `line` is the 1-based line of
  /// the key that names the map (0: the map's own, which yaml-cpp puts at its first key).
  YamlReader(YAML::Node node, std::string file, std::string path, int line = 0);

  /// Throws ConfigError on the first key that is not in `known`; keys that start with
  /// `free_prefix` (when it is not empty) are let through unread.
  void only_keys(std::initializer_list<const char*> known,
                 const std::string& free_prefix = "") const;

  bool has(const std::string& key) const;
  std::string string(const std::string& key) const;
  std::string string_or(const std::string& key, const std::string& fallback) const;
  long integer(const std::string& key, long min, long max) const;
  long integer_or(const std::string& key, long fallback, long min, long max) const;
  double number(const std::string& key) const;
  bool boolean_or(const std::string& key, bool fallback) const;
  std::chrono::nanoseconds duration(const std::string& key) const;
  std::uint16_t port_or(const std::string& key, std::uint16_t fallback) const;

  /// A reader for the map under `key` (which must exist and be a map).
  YamlReader map(const std::string& key) const;
  /// map() for an entry met while going through node(), without looking its key up again (a
  /// lookup goes through the map: one per entry of a map of thousands took quadratic time).
  YamlReader map_entry(const YAML::Node& key, const YAML::Node& value) const;
  YAML::Node raw(const std::string& key) const { return node_[key]; }
  const YAML::Node& node() const { return node_; }

  std::string path_of(const std::string& key) const;
  /// The line of `key`; for a key that is missing, the map's (own_line()).
  int line_of(const std::string& key) const;
  /// The line of the key that names this map, or the map's own when none does.
  int own_line() const;
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  /// Throws ConfigError about the map as a whole: at own_line() and its path.
  [[noreturn]] void fail_here(const std::string& message) const;
  /// fail(key, ...) for a required key the map lacks (at the map's line).
  [[noreturn]] void fail_missing(const std::string& key) const;

 private:
  YAML::Node node_;
  std::string file_;
  std::string path_;
  int line_ = 0;
};

/// An integer as YAML 1.2's core schema reads it: decimal digits with an optional sign (leading
/// zeros are decimal: `042` is 42), `0x` hexadecimal or `0o` octal, both unsigned (`-0x1` is not
/// an integer in that schema). nullopt when `text` is not
/// one; `out_of_range` then tells whether it was one too large for a long.
std::optional<long> parse_yaml_integer(const std::string& text, bool& out_of_range);

/// 1-based line of a node (0 when yaml-cpp has no mark for it).
int line_of(const YAML::Node& node);

/// Top-level keys that start with this are not read (nor refused as unknown): a place for maps
/// that other keys merge in (`x-defaults: &defaults {...}`, then `<<: *defaults`).
inline constexpr const char* kUnreadKeyPrefix = "x-";

/// Largest cluster file read (a cluster file is a few KiB; this bounds the parser's memory).
inline constexpr std::size_t kMaxClusterFileBytes = std::size_t{1} << 20;

/// Checks on the text before it is parsed: at most kMaxClusterFileBytes, no NUL byte.
/// Throws ConfigError naming `file` and the line.
void check_cluster_text(const std::string& text, const std::string& file);

/// Resolves YAML's merge keys, which yaml-cpp leaves as ordinary `<<` keys: in a map,
/// `<<: *defaults` (an alias of a map, or a map written there) or `<<: [*a, *b]` (a list of maps)
/// adds each key of those maps that the map does not have itself, an earlier map of the list
/// winning over a later one, then the `<<` key goes. Maps merged into others are resolved first,
/// so merges chain. A merged entry is shared with its source, and keeps the line where it is
/// written. Throws ConfigError naming `file`, the line and the key for a merge key given twice in
/// one map or naming anything but maps, and for a tree past check_cluster_tree's bounds.
void resolve_merge_keys(YAML::Node root, const std::string& file);

/// Checks on the parsed tree that yaml-cpp does not make: a key twice in one map (yaml-cpp keeps
/// the first silently), a NUL in a key or value (written "\0" in a quoted string), and more
/// nodes than a file of kMaxClusterFileBytes needs (aliases repeating a subtree), nesting more
/// than 100 levels deep (an alias inside its own anchor, which never ends), and any explicit
/// YAML tag (`!!str`, `!custom`: nothing here reads tags, so one would be ignored), and an empty
/// list item (a `-` with nothing after it, found at its own line in `text`, the file's text).
/// Throws ConfigError naming `file`, the line and the key.
void check_cluster_tree(const YAML::Node& root, const std::string& file, const std::string& text);

}  // namespace tagflow::cluster
