#include "federation/federation_spec.hpp"

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace tagflow::coordinator {
namespace {

[[noreturn]] void fail(const std::string& file, const YAML::Node& node, const std::string& key,
                       const std::string& what) {
  std::ostringstream message;
  message << file;
  if (node.IsDefined() && node.Mark().line >= 0) message << ":" << node.Mark().line + 1;
  message << ": federation." << key << ": " << what;
  throw FederationConfigError(message.str());
}

/// Refuses a YAML merge key (a plain `<<`) anywhere under `node` (at `key`): yaml-cpp reads it as
/// an ordinary key, which under `federates` would be a federate called `<<`. Cluster files resolve
/// merge keys (nodes/cluster/yaml_reader.hpp); this loader sits below them and does not.
void refuse_merge_keys(const std::string& file, const YAML::Node& node, const std::string& key,
                       int depth = 0) {
  if (depth > 16) return;  // deeper than a federation section goes; aliases may nest for ever
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      refuse_merge_keys(file, node[i], key + "[" + std::to_string(i) + "]", depth + 1);
    }
  }
  if (!node.IsMap()) return;
  for (const auto& entry : node) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "";
    const std::string path = key.empty() ? name : key + "." + name;
    if (name == "<<" && entry.first.Tag() == "?") {
      fail(file, entry.first, path,
           "merge keys are not read in a federation section: write the keys out");
    }
    refuse_merge_keys(file, entry.second, path, depth + 1);
  }
}

/// Refuses the first key of the map `node` (at `key`; "" for the section itself) that is not in
/// `known`: a misspelt key would otherwise be a default taken in silence.
void only_keys(const std::string& file, const YAML::Node& node, const std::string& key,
               std::initializer_list<const char*> known) {
  for (const auto& entry : node) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "(a non-scalar key)";
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return name == k; })) {
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      fail(file, entry.first, key.empty() ? name : key + "." + name,
           "unknown key (expected " + list + ")");
    }
  }
}

std::string scalar(const std::string& file, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) fail(file, node, key, "expected a single value");
  return node.Scalar();
}

std::int64_t duration(const std::string& file, const YAML::Node& node, const std::string& key) {
  try {
    return parse_duration_ns(scalar(file, node, key));
  } catch (const std::invalid_argument& e) {
    fail(file, node, key, e.what());
  }
}

std::vector<UpstreamLink> upstreams(const std::string& file, const YAML::Node& list,
                                    const std::string& key) {
  std::vector<UpstreamLink> links;
  if (!list.IsDefined() || list.IsNull()) return links;
  if (!list.IsSequence()) fail(file, list, key, "expected a list of {id, after}");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string item_key = key + "[" + std::to_string(i) + "]";
    UpstreamLink link;
    if (item.IsScalar()) {
      link.federate = item.Scalar();
    } else if (item.IsMap()) {
      only_keys(file, item, item_key, {"id", "after"});
      link.federate = scalar(file, item["id"], item_key + ".id");
      if (item["after"]) link.delay = duration(file, item["after"], item_key + ".after");
    } else {
      fail(file, item, item_key, "expected an id or {id, after}");
    }
    links.push_back(std::move(link));
  }
  return links;
}

std::vector<std::string> ids(const std::string& file, const YAML::Node& list,
                             const std::string& key) {
  std::vector<std::string> out;
  if (!list.IsDefined() || list.IsNull()) return out;
  if (!list.IsSequence()) fail(file, list, key, "expected a list of federate ids");
  for (std::size_t i = 0; i < list.size(); ++i) {
    out.push_back(scalar(file, list[i], key + "[" + std::to_string(i) + "]"));
  }
  return out;
}

}  // namespace

std::int64_t parse_duration_ns(const std::string& text) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("'" + text + "' is not a duration (e.g. 250ms, 1s, 0)");
  }
  const std::string unit = text.substr(used);
  std::int64_t scale = 0;
  if (unit.empty() || unit == "ns") scale = 1;
  if (unit == "us") scale = 1'000;
  if (unit == "ms") scale = 1'000'000;
  if (unit == "s") scale = 1'000'000'000;
  if (scale == 0 || value < 0 || value > INT64_MAX / scale) {
    throw std::invalid_argument("'" + text + "' is not a non-negative duration in ns, us, ms or s");
  }
  return value * scale;
}

const FederateSpec* FederationSpec::find(const std::string& id) const {
  for (const FederateSpec& federate : federates) {
    if (federate.id == id) return &federate;
  }
  return nullptr;
}

bool FederationSpec::zero_delay_cycle_link(const std::string& from, const std::string& to) const {
  const auto undelayed = [this](const std::string& up, const std::string& down) {
    const FederateSpec* target = find(down);
    if (target == nullptr) return false;
    for (const UpstreamLink& link : target->upstreams) {
      if (link.federate == up && !link.delay.has_value()) return true;
    }
    return false;
  };
  if (!undelayed(from, to)) return false;
  // Depth-first search from `to` along undelayed links, looking for `from`.
  std::vector<std::string> stack{to};
  std::vector<std::string> seen{to};
  while (!stack.empty()) {
    const std::string at = stack.back();
    stack.pop_back();
    if (at == from) return true;
    const FederateSpec* here = find(at);
    if (here == nullptr) continue;
    for (const std::string& down : here->downstreams) {
      if (!undelayed(at, down) || std::find(seen.begin(), seen.end(), down) != seen.end()) continue;
      seen.push_back(down);
      stack.push_back(down);
    }
  }
  return false;
}

bool FederationSpec::on_zero_delay_cycle(const std::string& id) const {
  const FederateSpec* me = find(id);
  if (me == nullptr) return false;
  return std::any_of(me->upstreams.begin(), me->upstreams.end(), [&](const UpstreamLink& link) {
    return zero_delay_cycle_link(link.federate, id);
  });
}

void FederationSpec::validate() const {
  if (federates.empty()) throw FederationConfigError("federation: no federates listed");
  std::set<std::string> seen;
  for (const FederateSpec& f : federates) {
    if (f.id.empty() || f.id.size() > 64 || f.id.find('#') != std::string::npos) {
      throw FederationConfigError("federation: federate id '" + f.id +
                                  "' must be 1-64 bytes without '#'");
    }
    if (!seen.insert(f.id).second) {
      throw FederationConfigError("federation: federate '" + f.id + "' is listed twice");
    }
  }
  for (const FederateSpec& f : federates) {
    for (const UpstreamLink& up : f.upstreams) {
      const FederateSpec* u = find(up.federate);
      if (u == nullptr) {
        throw FederationConfigError("federation: '" + f.id + "' names unknown upstream '" +
                                    up.federate + "'");
      }
      if (std::count(u->downstreams.begin(), u->downstreams.end(), f.id) == 0) {
        throw FederationConfigError("federation: '" + f.id + "' lists '" + u->id +
                                    "' upstream, but '" + u->id + "' does not list '" + f.id +
                                    "' downstream");
      }
    }
    for (const std::string& down : f.downstreams) {
      const FederateSpec* d = find(down);
      if (d == nullptr) {
        throw FederationConfigError("federation: '" + f.id + "' names unknown downstream '" + down +
                                    "'");
      }
      const bool listed = std::any_of(d->upstreams.begin(), d->upstreams.end(),
                                      [&](const UpstreamLink& l) { return l.federate == f.id; });
      if (!listed) {
        throw FederationConfigError("federation: '" + f.id + "' lists '" + down +
                                    "' downstream, but '" + down + "' does not list '" + f.id +
                                    "' upstream");
      }
    }
  }
}

FederationSpec parse_federation_spec(const std::string& yaml_text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw FederationConfigError(file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  const YAML::Node section = root["federation"];
  if (!section || !section.IsMap()) {
    throw FederationConfigError(file + ": no 'federation:' section");
  }
  refuse_merge_keys(file, section, "");
  only_keys(file, section, "",
            {"coordinator", "heartbeat_timeout", "join_timeout", "security", "federates"});
  FederationSpec spec;
  if (section["coordinator"]) spec.address = scalar(file, section["coordinator"], "coordinator");
  if (section["heartbeat_timeout"]) {
    spec.heartbeat_timeout = std::chrono::milliseconds(
        duration(file, section["heartbeat_timeout"], "heartbeat_timeout") / 1'000'000);
  }
  if (section["join_timeout"]) {
    spec.join_timeout = std::chrono::milliseconds(
        duration(file, section["join_timeout"], "join_timeout") / 1'000'000);
  }
  if (spec.heartbeat_timeout.count() <= 0) {
    fail(file, section["heartbeat_timeout"], "heartbeat_timeout", "must be at least 1ms");
  }
  if (spec.join_timeout.count() <= 0) {  // 0 failed every run at once: "never joined within 0 ms"
    fail(file, section["join_timeout"], "join_timeout", "must be at least 1ms");
  }
  if (section["security"]) {
    // Spelled as in a cluster file (configs/README.md): {curve: true, keys_dir: DIR}.
    const YAML::Node security = section["security"];
    if (!security.IsMap()) fail(file, security, "security", "expected {curve, keys_dir}");
    only_keys(file, security, "security", {"curve", "keys_dir"});
    const std::string curve =
        security["curve"] ? scalar(file, security["curve"], "security.curve") : "false";
    if (curve != "true" && curve != "false") {
      fail(file, security["curve"], "security.curve", "expected true or false");
    }
    if (curve == "true") {
      if (!security["keys_dir"]) {
        fail(file, security, "security.keys_dir",
             "curve: true needs keys_dir (make one with tagflow keys generate)");
      }
      spec.keys_dir = scalar(file, security["keys_dir"], "security.keys_dir");
    }
  }
  const YAML::Node federates = section["federates"];
  if (!federates || !federates.IsMap()) fail(file, section, "federates", "expected a map");
  for (const auto& entry : federates) {
    FederateSpec federate;
    federate.id = scalar(file, entry.first, "federates");
    const std::string key = "federates." + federate.id;
    if (!entry.second.IsNull() && !entry.second.IsMap()) {
      fail(file, entry.second, key, "expected {upstreams, downstreams}");
    }
    if (entry.second.IsMap()) only_keys(file, entry.second, key, {"upstreams", "downstreams"});
    federate.upstreams = upstreams(file, entry.second["upstreams"], key + ".upstreams");
    federate.downstreams = ids(file, entry.second["downstreams"], key + ".downstreams");
    spec.federates.push_back(std::move(federate));
  }
  try {
    spec.validate();
  } catch (const FederationConfigError& e) {
    throw FederationConfigError(file + ": " + e.what());
  }
  return spec;
}

FederationSpec load_federation_spec(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw FederationConfigError("cannot read cluster file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_federation_spec(text.str(), path);
}

}  // namespace tagflow::coordinator
