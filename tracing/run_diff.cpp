#include "tracing/run_diff.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/fnv1a.hpp"
#include "common/log_text.hpp"
#include "nodes/message_text.hpp"
#include "tracing/trace_files.hpp"

namespace tagflow::tracing {
namespace {

namespace fs = std::filesystem;

const std::string kSuffix = ".values.tsv";

/// Every sender's value log of a run, by federate, each in (tag, receiver, port) order.
std::map<std::string, std::vector<SentValue>> read_run(const std::string& run) {
  require_run_directory(run);
  std::error_code ec;
  std::map<std::string, std::vector<SentValue>> logs;
  for (const auto& entry : fs::directory_iterator(fs::path(run) / "trace", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= kSuffix.size() ||
        name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
      continue;
    }
    logs[name.substr(0, name.size() - kSuffix.size())] = read_value_log(entry.path().string());
  }
  if (logs.empty()) {
    throw TraceError("no value logs in " + run + " (no " + (fs::path(run) / "trace").string() +
                     "/FEDERATE.values.tsv): record both runs with `trace: {digests: true}` in "
                     "the cluster file, in reactor mode (actor mode records no value logs)");
  }
  for (auto& [sender, values] : logs) {
    std::stable_sort(values.begin(), values.end(), [](const SentValue& x, const SentValue& y) {
      return std::tie(x.tag, x.receiver, x.port) < std::tie(y.tag, y.receiver, y.port);
    });
  }
  return logs;
}

/// The run's cutoff (nodes/README.md: the earliest stop proposal) from the result files of
/// `senders` in the run directory (LOG_DIR/FEDERATE.json, written at each process's normal end;
/// every one names the same cutoff), or std::nullopt when none is there or none names one (the
/// caller then uses the run's last arrival tag). Throws TraceError for a result file that cannot
/// be read, is not JSON, names a cutoff that is no tag of a run, or another cutoff than the rest.
std::optional<Tag> run_cutoff(const std::string& run, const std::set<std::string>& senders) {
  std::optional<Tag> found;
  std::string found_in;
  for (const std::string& sender : senders) {
    const std::string path = (fs::path(run) / (sender + ".json")).string();
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path, ec))) continue;  // no result written
    require_regular_file(path, "result file");
    std::ifstream in(path);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      throw TraceError("the result file " + path + " is not JSON: " + json_error_text(e));
    }
    const auto cutoff = j.is_object() ? j.find("cutoff") : j.end();
    if (!j.is_object() || cutoff == j.end() || cutoff->is_null()) continue;
    const auto field = [&](const char* name) {
      const auto it = cutoff->is_object() ? cutoff->find(name) : cutoff->end();
      return it != cutoff->end() && it->is_number_integer() ? std::optional(*it) : std::nullopt;
    };
    const auto time = field("time_ns");
    const auto micro = field("microstep");
    // A run's tags start at a time >= 0; FOREVER is no cutoff.
    const bool tag = time && micro && !time->is_number_float() &&
                     (time->is_number_unsigned()
                          ? time->get<std::uint64_t>() <
                                static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                          : time->get<std::int64_t>() >= 0) &&
                     (micro->is_number_unsigned() &&
                      micro->get<std::uint64_t>() <= std::numeric_limits<std::uint32_t>::max());
    if (!tag) {
      throw TraceError("the result file " + path +
                       " names a cutoff that is no tag of a run: " + cutoff->dump().substr(0, 200));
    }
    const Tag at(time->get<std::int64_t>(), micro->get<std::uint32_t>());
    if (found && *found != at) {
      throw TraceError("the result files " + found_in + " and " + path +
                       " name different cutoffs (a damaged run directory, or files of two runs)");
    }
    found = at;
    found_in = path;
  }
  return found;
}

/// A payload's bytes from the run's .values.bin, or why there are none to show.
struct KeptBytes {
  std::string bytes;
  std::string why_not;   // empty when `bytes` are the payload
  bool damaged = false;  // kept, but unreadable or not matching the logged hash
};

KeptBytes bytes_of(const std::string& run, const std::string& sender, const SentValue& value) {
  KeptBytes kept;
  if (value.bytes == 0) return kept;  // an ABSENT: nothing to keep
  if (!value.offset) {
    kept.why_not = "not kept (" + std::to_string(value.bytes) +
                   " bytes; each federate keeps the payloads that still fit in trace.values_mb "
                   "MiB: a larger trace.values_mb keeps more)";
    return kept;
  }
  const std::string path = (fs::path(run) / "trace" / (sender + ".values.bin")).string();
  // Nothing is allocated for bytes the file cannot hold (a damaged log's size or offset).
  std::error_code ec;
  const bool regular = fs::is_regular_file(path, ec);
  const std::uintmax_t size = regular ? fs::file_size(path, ec) : 0;
  const bool inside =
      regular && !ec && *value.offset <= size && value.bytes <= size - *value.offset;
  std::ifstream in;
  if (inside) {
    in.open(path, std::ios::binary);
    kept.bytes.assign(value.bytes, '\0');
    in.seekg(static_cast<std::streamoff>(*value.offset));
    in.read(kept.bytes.data(), static_cast<std::streamsize>(value.bytes));
  }
  if (!inside || !in) {
    kept.bytes.clear();
    kept.damaged = true;
    kept.why_not = "kept at byte " + std::to_string(*value.offset) + " of " + path +
                   ", which cannot be read there";
    return kept;
  }
  char hash[20];
  std::snprintf(hash, sizeof hash, "%016" PRIx64,
                fnv1a64_wide(kept.bytes.data(), kept.bytes.size()));
  if (value.hash != hash) {
    kept.bytes.clear();
    kept.damaged = true;
    kept.why_not = "the bytes kept at byte " + std::to_string(*value.offset) + " of " + path +
                   " do not have the logged hash (" + hash + ")";
  }
  return kept;
}

std::string tag_text(const Tag& tag, const Tag& first) {
  std::string text =
      "(" + std::to_string(tag.time_ns()) + ", " + std::to_string(tag.microstep()) + ")";
  if (!first.is_forever() && !tag.is_never() && !tag.is_forever()) {
    // A run resumed from a checkpoint starts later: a tag before its first is "before".
    const std::int64_t apart = tag.time_ns() - first.time_ns();
    char relative[64];
    std::snprintf(relative, sizeof relative, ", %.3f ms %s the run's first tag",
                  static_cast<double>(apart < 0 ? -apart : apart) / 1e6,
                  apart < 0 ? "before" : "after");
    text += relative;
  }
  return text;
}

struct SendingReactions {
  Tag tag = Tag::never();
  std::vector<std::string> names;
  bool from_send = false;  // found by the send's own trace event
};

/// The reactions of `federate` that sent the value arriving at `receiver`'s `port` at `arrival`,
/// and their tag, in run `run`'s traces: the tag of the latest reaction of `federate` begun before
/// that send (the trace records each send with its arrival tag); when the rings no longer hold
/// the send, the latest tag at or before `arrival` (a link's delay puts the sending tag before
/// it, by as much as the delay). None when the run was not traced or its rings no longer hold
/// that tag.
SendingReactions sending_reactions(const std::string& run, const std::string& federate,
                                   const std::string& receiver, std::uint32_t port,
                                   const Tag& arrival) {
  SendingReactions found;
  std::vector<ProcessTraceFile> files;
  try {
    files = read_trace_dir(run);
  } catch (const TraceError&) {
    return found;  // without a process trace the difference is still named, only not its reactions
  }
  const auto of_sender = [&federate](const ProcessTraceFile& file, const TraceEvent& e) {
    return file.threads[e.thread].federate == federate;
  };
  std::optional<std::int64_t> sent_at;
  for (const ProcessTraceFile& file : files) {
    for (const TraceEvent& e : file.events) {
      if (e.kind == Kind::kSend && e.tag == arrival && e.port == port && e.peer == receiver &&
          of_sender(file, e)) {
        sent_at = e.start_ns;
        break;
      }
    }
    if (sent_at) break;
  }
  // The latest reaction begun at or before the send, else at or before the arrival tag.
  std::int64_t latest_start = std::numeric_limits<std::int64_t>::min();
  for (const ProcessTraceFile& file : files) {
    for (const TraceEvent& e : file.events) {
      if (e.kind != Kind::kReaction || !of_sender(file, e)) continue;
      if (sent_at ? e.start_ns > *sent_at || e.start_ns < latest_start
                  : arrival < e.tag || e.tag < found.tag) {
        continue;
      }
      if (sent_at) latest_start = e.start_ns;
      found.tag = e.tag;
    }
  }
  found.from_send = sent_at.has_value() && !found.tag.is_never();
  for (const ProcessTraceFile& file : files) {
    for (const TraceEvent& e : file.events) {
      if (e.kind == Kind::kReaction && e.tag == found.tag && of_sender(file, e) &&
          std::find(found.names.begin(), found.names.end(), e.name) == found.names.end()) {
        found.names.emplace_back(e.name);
      }
    }
  }
  return found;
}

}  // namespace

std::vector<SentValue> read_value_log(const std::string& path) {
  require_regular_file(path, "value log");
  std::ifstream in(path);
  if (!in) throw TraceError("cannot read the value log " + path);
  static const char* const kFields[] = {"tag time", "microstep", "receiver", "port",
                                        "bytes",    "hash",      "offset"};
  std::vector<SentValue> values;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const std::string where = "the value log " + path + " line " + std::to_string(number);
    std::istringstream split(line);
    std::vector<std::string> f;
    for (std::string field; split >> field;) f.push_back(field);
    if (f.size() != 7) {
      throw TraceError(where + " is not 7 fields (tag time, microstep, receiver, port, bytes, " +
                       "hash, offset) but " + std::to_string(f.size()));
    }
    // Each field read whole as its type; the first that does not read is named.
    const auto bad = [&](std::size_t i, const std::string& what) {
      return TraceError(where + ": field " + std::to_string(i + 1) + " (" + kFields[i] + ") '" +
                        f[i] + "' is not " + what);
    };
    const auto read = [&](std::size_t i, auto& out, const char* what) {
      std::istringstream field(f[i]);
      char rest = 0;
      if (f[i][0] == '-' && i != 0) throw bad(i, what);  // no negative counts
      if (!(field >> out) || (field >> rest)) throw bad(i, what);
    };
    SentValue v;
    std::int64_t time = 0;
    std::uint32_t microstep = 0;
    read(0, time, "a whole number of nanoseconds");
    read(1, microstep, "a microstep (a 32-bit whole number)");
    v.receiver = f[2];
    read(3, v.port, "a wire port (a 32-bit whole number)");
    read(4, v.bytes, "a byte count");
    v.hash = f[5];
    if (v.hash.size() != 16 || v.hash.find_first_not_of("0123456789abcdef") != std::string::npos) {
      throw bad(5, "16 lower-case hex digits");
    }
    const std::string& offset = f[6];
    if (offset != "-") {
      std::uint64_t at = 0;
      read(6, at, "- or a byte offset");
      v.offset = at;
    }
    v.tag = Tag(time, microstep);
    values.push_back(std::move(v));
  }
  if (in.bad()) throw TraceError("cannot read the value log " + path);
  return values;
}

DiffResult diff_runs(const std::string& run_a, const std::string& run_b) {
  // Both directories before either's logs: a mistyped second one is named as such.
  require_run_directory(run_a);
  require_run_directory(run_b);
  const auto a = read_run(run_a);
  const auto b = read_run(run_b);
  // A federate logs every message it sends, none included: a log in one run and not in the other
  // is a damaged or partial run directory, not a difference.
  for (const auto& [one, other, other_run] :
       {std::tuple{&a, &b, &run_b}, std::tuple{&b, &a, &run_a}}) {
    for (const auto& entry : *one) {
      if (other->count(entry.first) == 0) {
        throw TraceError("no value log of " + entry.first + " in " + *other_run + " (" +
                         (fs::path(*other_run) / "trace" / (entry.first + kSuffix)).string() +
                         ") while the other run has one: both runs need every federate's log");
      }
    }
  }
  DiffResult result;
  std::set<std::string> senders;
  for (const auto& [sender, values] : a) {
    senders.insert(sender);
    result.a_messages += values.size();
    if (!values.empty()) {
      result.first_tag = std::min(result.first_tag, values.front().tag);
      result.a_last = std::max(result.a_last, values.back().tag);
    }
  }
  for (const auto& [sender, values] : b) {
    senders.insert(sender);
    result.b_messages += values.size();
    if (!values.empty()) result.b_last = std::max(result.b_last, values.back().tag);
  }
  // Each run ends at its cutoff (messages sent at later tags are not the run's), or, when its
  // results do not say, at its last arrival tag. A message sent `after` a delay arrives past the
  // cutoff of its sending tag, and the other senders of that run stopped at the cutoff: so when
  // the runs end at different tags, the messages arriving after the earlier end are not compared,
  // in either run, nor counted as matched. (A run that sent nothing at all has no end to speak
  // of: everything the other sent counts.)
  result.a_end = run_cutoff(run_a, senders).value_or(result.a_last);
  result.b_end = run_cutoff(run_b, senders).value_or(result.b_last);
  const Tag shorter_end = std::min(result.a_end, result.b_end);
  const Tag horizon = result.a_end == result.b_end || shorter_end.is_never() ||
                              result.a_last.is_never() || result.b_last.is_never()
                          ? Tag::forever()
                          : shorter_end;

  // Per sender: its first difference; the run's is the smallest.
  using Key = std::tuple<Tag, std::string, std::string, std::uint32_t>;
  std::optional<Key> first;
  std::optional<RunDifference> found;
  std::vector<Key> firsts;  // each sender's first difference
  static const std::vector<SentValue> kNone;
  for (const std::string& sender : senders) {
    const auto ia = a.find(sender);
    const auto ib = b.find(sender);
    const std::vector<SentValue>& va = ia == a.end() ? kNone : ia->second;
    const std::vector<SentValue>& vb = ib == b.end() ? kNone : ib->second;
    const auto key_of = [&sender](const SentValue& v) {
      return Key{v.tag, sender, v.receiver, v.port};
    };
    std::size_t i = 0, j = 0;
    while (i < va.size() || j < vb.size()) {
      const SentValue* x = i < va.size() ? &va[i] : nullptr;
      const SentValue* y = j < vb.size() ? &vb[j] : nullptr;
      RunDifference d;
      d.sender = sender;
      if (x != nullptr && y != nullptr && key_of(*x) == key_of(*y)) {
        if (x->hash == y->hash && x->bytes == y->bytes) {
          ++i;
          ++j;
          continue;
        }
        d.a = *x;
        d.b = *y;
      } else if (y == nullptr || (x != nullptr && key_of(*x) < key_of(*y))) {
        d.a = *x;
      } else {
        d.b = *y;
      }
      const SentValue& at = d.a ? *d.a : *d.b;
      if (horizon < at.tag) break;  // past the earlier end: not compared
      d.tag = at.tag;
      d.receiver = at.receiver;
      d.port = at.port;
      const Key key = key_of(at);
      firsts.push_back(key);
      if (!first || key < *first) {
        first = key;
        found = d;
      }
      break;
    }
  }

  // The messages both runs sent alike before the first difference (all up to the earlier end,
  // when there is none), and those of the run that ends later arriving after the earlier end.
  for (const std::string& sender : senders) {
    const auto ia = a.find(sender);
    const auto ib = b.find(sender);
    const std::vector<SentValue>& va = ia == a.end() ? kNone : ia->second;
    const std::vector<SentValue>& vb = ib == b.end() ? kNone : ib->second;
    const std::size_t n = std::min(va.size(), vb.size());
    for (std::size_t k = 0; k < n; ++k) {
      const SentValue& x = va[k];
      const SentValue& y = vb[k];
      if (std::tie(x.tag, x.receiver, x.port, x.hash) !=
          std::tie(y.tag, y.receiver, y.port, y.hash)) {
        break;
      }
      if (first && Key{x.tag, sender, x.receiver, x.port} >= *first) break;
      if (horizon < x.tag) break;
      ++result.matched;
    }
    const std::vector<SentValue>& longer = result.a_end < result.b_end ? vb : va;
    for (const SentValue& v : longer) result.past_shorter += horizon < v.tag ? 1 : 0;
  }

  if (found) {
    RunDifference& d = *found;
    const KeptBytes kept_a = d.a ? bytes_of(run_a, d.sender, *d.a) : KeptBytes{};
    const KeptBytes kept_b = d.b ? bytes_of(run_b, d.sender, *d.b) : KeptBytes{};
    const auto describe = [](const std::optional<SentValue>& v, const KeptBytes& kept) {
      if (!v) return std::string("not sent in this run");
      if (v->bytes == 0) return std::string("ABSENT (no value at this tag)");
      if (!kept.why_not.empty()) return kept.why_not;
      return nodes::describe_payload(reinterpret_cast<const std::uint8_t*>(kept.bytes.data()),
                                     kept.bytes.size());
    };
    d.a_value = describe(d.a, kept_a);
    d.b_value = describe(d.b, kept_b);
    if (d.a && d.b) {
      if (kept_a.damaged || kept_b.damaged) {
        d.difference =
            "the hashes differ; the kept bytes of a run are damaged (above), so they cannot say "
            "where";
      } else if (!kept_a.why_not.empty() || !kept_b.why_not.empty()) {
        d.difference =
            "the hashes differ; the bytes were not kept to say where (raise "
            "trace.values_mb to keep them)";
      } else {
        d.difference = nodes::first_difference(
            reinterpret_cast<const std::uint8_t*>(kept_a.bytes.data()), kept_a.bytes.size(),
            reinterpret_cast<const std::uint8_t*>(kept_b.bytes.data()), kept_b.bytes.size());
      }
    } else {
      d.difference = d.a ? "only the first run sent it" : "only the second run sent it";
    }
    SendingReactions sent =
        sending_reactions(d.a ? run_a : run_b, d.sender, d.receiver, d.port, d.tag);
    if (sent.names.empty() && d.a && d.b) {  // run A's trace is gone: run B's sent it as well
      sent = sending_reactions(run_b, d.sender, d.receiver, d.port, d.tag);
    }
    d.reactions = std::move(sent.names);
    d.reactions_tag = sent.tag;
    d.reactions_from_send = sent.from_send;
    std::sort(firsts.begin(), firsts.end());
    for (const auto& [tag, sender, receiver, port] : firsts) {
      if (tag == d.tag && Key{tag, sender, receiver, port} != *first) {
        d.also_at_tag.push_back(sender + " → " + receiver + " " + nodes::wire_port_name(port));
      }
    }
    result.difference = std::move(d);
  }
  return result;
}

std::string DiffResult::text() const {
  std::ostringstream out;
  const bool same_length = a_end == b_end || a_last.is_never() || b_last.is_never();
  const std::string shorter = a_end < b_end ? "A" : "B";
  const std::string longer = a_end < b_end ? "B" : "A";
  if (!difference) {
    out << "the runs match: " << matched << " data messages, each with the same bytes";
    if (!same_length) {
      out << ", up to tag " << tag_text(std::min(a_end, b_end), first_tag) << " where run "
          << shorter << " ends; run " << longer << " sent " << past_shorter
          << " more arriving after it";
    }
    out << "\n";
    return out.str();
  }
  const RunDifference& d = *difference;
  out << "the runs part at tag " << tag_text(d.tag, first_tag) << "\n"
      << "  connection: " << d.sender << " → " << d.receiver << " " << nodes::wire_port_name(d.port)
      << " (wire port " << d.port << ")\n"
      << "  before it: " << matched << " data messages the same in both runs\n";
  if (!d.reactions.empty()) {
    out << "  sent by " << d.sender << "'s reactions at "
        << (d.reactions_tag == d.tag ? std::string("that tag")
                                     : "tag " + tag_text(d.reactions_tag, first_tag))
        << (d.reactions_from_send
                ? ""
                : " (the latest at or before the arrival tag: the trace no longer holds the send)")
        << ":";
    for (const std::string& r : d.reactions) out << " " << r;
    out << "\n";
  }
  const auto side = [&](const char* label, const std::optional<SentValue>& v,
                        const std::string& value) {
    out << "  " << label << ": ";
    if (v) out << v->bytes << " bytes, hash " << v->hash << "\n      ";
    // The decoded fields' lines under the value's first line.
    for (const char c : value) {
      out << c;
      if (c == '\n') out << "    ";
    }
    out << "\n";
  };
  side("run A", d.a, d.a_value);
  side("run B", d.b, d.b_value);
  out << "  first difference: " << d.difference << "\n";
  if (!d.also_at_tag.empty()) {
    out << "  also differing at that tag (the first by name is named above, not by cause):";
    for (std::size_t i = 0; i < d.also_at_tag.size(); ++i) {
      out << (i == 0 ? " " : ", ") << d.also_at_tag[i];
    }
    out << "\n";
  }
  if (!same_length) {
    out << "  (run A's messages end at tag " << tag_text(a_last, first_tag) << ", run B's at "
        << tag_text(b_last, first_tag) << ")\n";
  }
  return out.str();
}

}  // namespace tagflow::tracing
