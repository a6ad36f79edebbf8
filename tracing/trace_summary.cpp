#include "tracing/trace_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "nodes/message_text.hpp"

namespace tagflow::tracing {
namespace {

constexpr std::size_t kMaxLinks = 16;
const std::string kCoordinator = "coordinator";

/// The row an event's thread belongs to: its federate, or its process (the coordinator's, and
/// every thread of an actor-mode process).
const std::string& row_of(const ProcessTraceFile& file, const TraceEvent& event) {
  const std::string& federate = file.threads[event.thread].federate;
  return federate.empty() ? file.process : federate;
}

int category_of(Kind kind) {
  switch (kind) {
    case Kind::kReaction:
    case Kind::kHandler:
      return kComputing;
    case Kind::kSend:
    case Kind::kReceive:
      return kMessaging;
    case Kind::kWaitData:
      return kWaitingForData;
    case Kind::kWaitGrant:
      return kWaitingForGrant;
    case Kind::kWaitTime:
      return kWaitingForTime;
    default:
      return -1;  // instants, socket polls and checkpoints: the rest
  }
}

bool is_wait(Kind kind) {
  return kind == Kind::kWaitGrant || kind == Kind::kWaitData || kind == Kind::kWaitTime;
}

bool is_work(Kind kind) { return kind == Kind::kReaction || kind == Kind::kHandler; }

std::string ms(std::int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", static_cast<double>(ns) / 1e6);
  return text;
}

std::string tag_string(const Tag& tag) {
  return "(" + std::to_string(tag.time_ns()) + ", " + std::to_string(tag.microstep()) + ")";
}

std::string xml_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '"') {
      out += "&quot;";
    } else {
      out += c;
    }
  }
  return out;
}

using SendKey = std::tuple<std::string_view, std::string_view, std::uint32_t, Tag>;
using ControlKey = std::tuple<std::string_view, std::string_view, std::string_view, Tag>;

/// The run's events by row, and the sends of every message, to walk critical paths.
struct Index {
  std::map<std::string, std::vector<const TraceEvent*>> rows;  // each by start
  std::map<SendKey, const TraceEvent*> sends;                  // (sender, receiver, port, tag)
  std::map<ControlKey, std::vector<const TraceEvent*>> control_sends;  // by start
  std::int64_t tolerance_ns = 0;  // the clocks' error, twice: how far two hosts' times may be off

  [[nodiscard]] const std::vector<const TraceEvent*>* row(const std::string& name) const {
    const auto it = rows.find(name);
    return it == rows.end() ? nullptr : &it->second;
  }
  /// The control message's send: the latest of its key recorded before it was taken (within
  /// the clocks' error); null when the trace holds none.
  [[nodiscard]] const TraceEvent* control_send_of(const TraceEvent& receive,
                                                  std::string_view receiver) const {
    const auto it = control_sends.find({receive.peer, receiver, receive.name, receive.tag});
    if (it == control_sends.end()) return nullptr;
    const TraceEvent* found = nullptr;
    for (const TraceEvent* e : it->second) {
      if (e->start_ns > receive.start_ns + tolerance_ns) break;
      found = e;
    }
    return found;
  }
};

/// Walks one slow tag's critical path back in time (the header says how) and words its links.
class PathWalker {
 public:
  PathWalker(const Index& index, Tag slow, std::int64_t origin)
      : index_(index), slow_(slow), origin_(origin) {}

  /// From `last`, the event that ended the tag, on `row`.
  std::vector<std::string> walk(std::string row, const TraceEvent& last) {
    // What the row did up to `until`; the waits that count ended by `waits_by`.
    std::int64_t until = last.end_ns();
    std::int64_t waits_by = last.start_ns;
    while (chain_.size() < kMaxLinks) {
      const std::vector<const TraceEvent*>* events = index_.row(row);
      if (events == nullptr) break;

      // The wait that ended last by `waits_by`, and the waits before it since the row's work
      // before them (a grant, then data, say): one waiting period.
      const TraceEvent* ended = nullptr;
      for (const TraceEvent* e : *events) {
        if (e->start_ns > waits_by) break;
        if (is_wait(e->kind) && e->end_ns() <= waits_by &&
            (ended == nullptr || e->end_ns() >= ended->end_ns())) {
          ended = e;
        }
      }
      std::string link = row + ": " + work(*events, ended, until);
      if (ended == nullptr || ended->end_ns() < origin_) {
        // No wait since the tag's first event: the row's own work is where the path starts.
        if (work_found_) {
          chain_.push_back(link + ", without waiting since the tag's first event");
        } else if (ended == nullptr) {
          chain_.push_back(row + ": no reaction or wait recorded before " + at(until));
        } else {
          chain_.push_back(row + ": no reaction recorded from the end of its last wait, at " +
                           at(ended->end_ns()) + ", to " + at(until));
        }
        break;
      }
      std::int64_t work_before = std::numeric_limits<std::int64_t>::min();
      for (const TraceEvent* e : *events) {
        if (e->start_ns > ended->start_ns) break;
        if (is_work(e->kind) && e->end_ns() <= ended->start_ns) {
          work_before = std::max(work_before, e->end_ns());
        }
      }
      std::int64_t began = ended->start_ns;
      std::int64_t waited = 0;
      bool data = false, grant = false;
      for (const TraceEvent* e : *events) {
        if (e->start_ns > ended->start_ns) break;
        if (is_wait(e->kind) && e->end_ns() <= ended->end_ns() && e->end_ns() > work_before) {
          began = std::min(began, e->start_ns);
          waited += e->duration_ns;
          data = data || e->kind == Kind::kWaitData;
          grant = grant || e->kind == Kind::kWaitGrant;
        }
      }
      link += std::string(work_found_ ? ", after" : "; before it,") + " waiting " + ms(waited) +
              " for " +
              (ended->kind == Kind::kWaitTime ? "physical time"
               : data && grant                ? "data and a grant"
               : data                         ? "data"
                                              : "a grant") +
              tag_note(ended->tag) + " (" + at(began) + " to " + at(ended->end_ns()) + ")";
      if (ended->kind == Kind::kWaitTime) {
        chain_.push_back(link);
        break;
      }

      // What ended the wait: the last message the row took during it (in its last part if any).
      const TraceEvent* taken = last_taken(*events, ended->start_ns, ended->end_ns());
      if (taken == nullptr) taken = last_taken(*events, began, ended->end_ns());
      if (taken == nullptr) {
        // Nothing came to end the wait: what kept the row from the tag was its own work before
        // it (an earlier tag's long reaction, say), when it ran since the tag's first event.
        const std::string busy = work(*events, nullptr, began);
        chain_.push_back(link + "; it took no message while it waited" +
                         (work_found_ ? "; before the wait it " + busy : std::string()));
        break;
      }
      const TraceEvent* send = nullptr;
      if (taken->kind == Kind::kReceive) {
        const auto it = index_.sends.find({taken->peer, taken->name, taken->port, taken->tag});
        if (it != index_.sends.end()) send = it->second;
        link += "; the last message it took, " + std::string(taken->peer) + " → " + row + " " +
                nodes::wire_port_name(taken->port) + tag_note(taken->tag) + ",";
      } else {
        send = index_.control_send_of(*taken, row);
        link += "; the last message it took, " + std::string(taken->peer) + "'s " +
                std::string(taken->name) + tag_note(taken->tag) + ",";
      }
      if (send == nullptr) {
        chain_.push_back(link + " was taken at " + at(taken->start_ns) +
                         "; its send is not in the trace");
        break;
      }
      link += " was sent at " + at(send->start_ns) + " and taken at " + at(taken->start_ns);
      if (send->start_ns < began) {
        // Sent before the row began to wait: the row came late, and what comes before is its own
        // work before the wait.
        chain_.push_back(link + "; it was sent before the wait began");
        until = waits_by = began;
        continue;
      }
      chain_.push_back(link);
      // On to the sender, up to the send (the coordinator: on to what made it grant).
      if (send->start_ns > until + index_.tolerance_ns) break;  // the clocks are too far off
      row = std::string(taken->peer);
      until = waits_by = send->start_ns;
      if (row == kCoordinator && !coordinator_hop(*send, row, until)) break;
      waits_by = until;
    }
    return chain_;
  }

 private:
  /// The coordinator grants once it has heard what it waited for: the control message it took
  /// last before sending `grant`. Adds the link and moves `row` and `until` to that message's
  /// sender and its send; false when the walk ends here.
  bool coordinator_hop(const TraceEvent& grant, std::string& row, std::int64_t& until) {
    if (chain_.size() >= kMaxLinks) return false;
    const TraceEvent* heard = nullptr;
    if (const auto* events = index_.row(kCoordinator)) {
      for (const TraceEvent* e : *events) {
        if (e->start_ns > grant.start_ns) break;
        if (e->kind == Kind::kControlReceive && e->has_real_tag()) heard = e;
      }
    }
    if (heard == nullptr) {
      chain_.push_back("coordinator: sent " + std::string(grant.name) + " at " +
                       at(grant.start_ns) + ", having taken no control message with a tag before");
      return false;
    }
    const TraceEvent* sent = index_.control_send_of(*heard, kCoordinator);
    chain_.push_back("coordinator: sent " + std::string(grant.name) + " at " + at(grant.start_ns) +
                     ", after taking " + std::string(heard->peer) + "'s " +
                     std::string(heard->name) + tag_note(heard->tag) + " at " +
                     at(heard->start_ns) +
                     (sent == nullptr ? std::string("; its send is not in the trace")
                                      : ", sent at " + at(sent->start_ns)));
    if (sent == nullptr || heard->peer == kCoordinator) return false;
    row = std::string(heard->peer);
    until = sent->start_ns;
    return true;
  }

  /// The last message the row took (data, or a control message with a tag) whose taking
  /// overlaps [from, to].
  static const TraceEvent* last_taken(const std::vector<const TraceEvent*>& events,
                                      std::int64_t from, std::int64_t to) {
    const TraceEvent* taken = nullptr;
    for (const TraceEvent* e : events) {
      if (e->start_ns > to) break;
      if (e->end_ns() < from) continue;
      if (e->kind == Kind::kReceive || (e->kind == Kind::kControlReceive && e->has_real_tag())) {
        taken = e;
      }
    }
    return taken;
  }

  /// The row's reactions after `wait` (since the tag's first event without one) up to `until`,
  /// at the tag of the last of them: their span, that tag and the longest of them. Sets
  /// work_found_.
  std::string work(const std::vector<const TraceEvent*>& events, const TraceEvent* wait,
                   std::int64_t until) {
    const auto counts = [&](const TraceEvent* e) {
      return is_work(e->kind) && e->end_ns() <= until &&
             (wait != nullptr ? e->start_ns >= wait->end_ns() : e->end_ns() >= origin_);
    };
    const TraceEvent* latest = nullptr;
    for (const TraceEvent* e : events) {
      if (e->start_ns > until) break;
      if (counts(e) && (latest == nullptr || e->end_ns() > latest->end_ns())) latest = e;
    }
    work_found_ = latest != nullptr;
    if (latest == nullptr) return "at " + at(until);
    const TraceEvent* first = nullptr;
    const TraceEvent* longest = nullptr;
    for (const TraceEvent* e : events) {
      if (e->start_ns > until) break;
      if (!counts(e) || e->tag != latest->tag) continue;
      if (first == nullptr) first = e;
      if (longest == nullptr || e->duration_ns > longest->duration_ns) longest = e;
    }
    return "ran its reactions" + tag_note(latest->tag) + " from " + at(first->start_ns) + " to " +
           at(latest->end_ns()) + " (the longest, " + std::string(longest->name) + ", " +
           ms(longest->duration_ns) + ")";
  }

  /// `ns` relative to the slow tag's first event, signed.
  [[nodiscard]] std::string at(std::int64_t ns) const {
    const std::int64_t d = ns - origin_;
    return (d < 0 ? "-" : "+") + ms(d < 0 ? -d : d);
  }
  /// " at tag (t, m)" for a tag other than the slow one (nothing for a tag-less wait).
  [[nodiscard]] std::string tag_note(const Tag& tag) const {
    if (tag == slow_ || tag.is_never() || tag.is_forever()) return std::string();
    return " at tag " + tag_string(tag);
  }

  const Index& index_;
  Tag slow_;
  std::int64_t origin_;
  std::vector<std::string> chain_;
  bool work_found_ = false;
};

}  // namespace

const char* category_name(TimeCategory category) {
  switch (category) {
    case kComputing:
      return "computing";
    case kMessaging:
      return "messaging";
    case kWaitingForData:
      return "waiting for data";
    case kWaitingForGrant:
      return "waiting for a grant";
    case kWaitingForTime:
      return "waiting for time";
    case kOther:
      return "other";
    case kCategoryCount:
      break;
  }
  return "?";
}

double FederateTime::percent(TimeCategory category) const {
  if (wall_ns <= 0) return 0.0;
  return 100.0 * static_cast<double>(ns[category]) / static_cast<double>(wall_ns);
}

TraceSummary summarize_trace(const std::vector<ProcessTraceFile>& files, std::size_t top) {
  TraceSummary summary;
  Index index;
  std::int64_t max_error = 0;
  for (const ProcessTraceFile& file : files) {
    summary.dropped += file.dropped;
    max_error = std::max(max_error, file.clock_error_ns);
    for (const TraceEvent& e : file.events) {
      const std::string& row = row_of(file, e);
      index.rows[row].push_back(&e);
      if (e.kind == Kind::kSend) index.sends[{e.name, e.peer, e.port, e.tag}] = &e;
      if (e.kind == Kind::kControlSend) {
        index.control_sends[{file.party(e), e.peer, e.name, e.tag}].push_back(&e);
      }
      if (e.has_real_tag() && e.tag < summary.first_tag) summary.first_tag = e.tag;
    }
  }
  index.tolerance_ns = 2 * max_error;
  const auto by_start = [](const TraceEvent* a, const TraceEvent* b) {
    return a->start_ns < b->start_ns;
  };
  for (auto& [row, events] : index.rows) std::stable_sort(events.begin(), events.end(), by_start);
  for (auto& [key, sends] : index.control_sends) {
    std::stable_sort(sends.begin(), sends.end(), by_start);
  }

  // Per row, in the order of the rows' names (a process of several federates among them): each
  // instant of its wall time to the first category active then.
  for (const auto& [row, events] : index.rows) {
    FederateTime time;
    time.federate = row;
    std::vector<std::tuple<std::int64_t, int, int>> edges;  // time, -1/+1, category
    std::int64_t begin = events.front()->start_ns, end = events.front()->end_ns();
    std::vector<Tag> tags;
    for (const TraceEvent* e : events) {
      begin = std::min(begin, e->start_ns);
      end = std::max(end, e->end_ns());
      if (is_work(e->kind)) {
        ++time.reactions;
        if (e->has_real_tag()) tags.push_back(e->tag);
      }
      const int category = category_of(e->kind);
      if (category >= 0 && e->duration_ns > 0) {
        edges.emplace_back(e->start_ns, 1, category);
        edges.emplace_back(e->end_ns(), -1, category);
      }
    }
    std::sort(tags.begin(), tags.end());
    time.tags = static_cast<std::size_t>(std::unique(tags.begin(), tags.end()) - tags.begin());
    std::sort(edges.begin(), edges.end());
    std::array<int, kCategoryCount> active{};
    std::int64_t at = begin;
    for (const auto& [when, delta, category] : edges) {
      std::size_t current = kOther;
      for (std::size_t c = 0; c < kOther; ++c) {
        if (active[c] > 0) {
          current = c;
          break;
        }
      }
      time.ns[current] += when - at;
      at = when;
      active[static_cast<std::size_t>(category)] += delta;
    }
    time.ns[kOther] += end - at;
    time.wall_ns = end - begin;
    summary.federates.push_back(time);
  }

  // Per tag: the first start and the last end of work at it (reactions and data messages), over
  // every federate, and the row of the event that ended it.
  struct TagSpan {
    const TraceEvent* first = nullptr;
    const TraceEvent* last = nullptr;
    const std::string* last_row = nullptr;
  };
  std::map<Tag, TagSpan> spans;
  for (const auto& [row, events] : index.rows) {
    for (const TraceEvent* e : events) {
      if (!e->has_real_tag() ||
          (!is_work(e->kind) && e->kind != Kind::kSend && e->kind != Kind::kReceive)) {
        continue;
      }
      TagSpan& span = spans[e->tag];
      if (span.first == nullptr || e->start_ns < span.first->start_ns) span.first = e;
      if (span.last == nullptr || e->end_ns() > span.last->end_ns()) {
        span.last = e;
        span.last_row = &row;
      }
    }
  }
  std::vector<std::pair<std::int64_t, Tag>> lengths;
  lengths.reserve(spans.size());
  for (const auto& [tag, span] : spans) {
    lengths.emplace_back(span.last->end_ns() - span.first->start_ns, tag);
  }
  summary.tags = lengths.size();
  if (!lengths.empty()) {
    std::vector<std::int64_t> only;
    only.reserve(lengths.size());
    for (const auto& [length, tag] : lengths) only.push_back(length);
    std::nth_element(only.begin(), only.begin() + static_cast<std::ptrdiff_t>(only.size() / 2),
                     only.end());
    summary.median_tag_ns = only[only.size() / 2];
  }
  // Slowest first; among equally slow tags, the earlier first.
  std::sort(lengths.begin(), lengths.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  for (std::size_t i = 0; i < lengths.size() && i < top; ++i) {
    const Tag tag = lengths[i].second;
    const TagSpan& span = spans.at(tag);
    PathWalker walker(index, tag, span.first->start_ns);
    summary.slowest.push_back({tag, lengths[i].first, walker.walk(*span.last_row, *span.last)});
  }
  return summary;
}

std::string TraceSummary::table() const {
  std::size_t width = 16;
  for (const FederateTime& f : federates) width = std::max(width, f.federate.size());
  const int w = static_cast<int>(width);
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %9s %9s %9s %9s %9s %9s %9s %9s\n", w, "federate",
                "wall s", "compute", "messages", "data", "grant", "time", "other", "tags");
  out << line;
  for (const FederateTime& f : federates) {
    std::snprintf(line, sizeof line,
                  "%-*s %9.3f %8.1f%% %8.1f%% %8.1f%% %8.1f%% %8.1f%% %8.1f%% %9zu\n", w,
                  f.federate.c_str(), static_cast<double>(f.wall_ns) / 1e9, f.percent(kComputing),
                  f.percent(kMessaging), f.percent(kWaitingForData), f.percent(kWaitingForGrant),
                  f.percent(kWaitingForTime), f.percent(kOther), f.tags);
    out << line;
  }
  out << "\n(compute: reactions, or handlers in actor mode; messages: sending and taking data "
         "messages; data: a granted tag "
         "waiting for its messages, or nothing to run until one comes; grant: waiting for the "
         "coordinator's TAG/PTAG or an upstream's notice; time: waiting for physical time)\n";
  if (tags == 0) {
    // Actor mode: handlers run at no tag, so there are no tags to rank.
    out << "\nno tags: no event of this run has a logical tag (an actor-mode run's handlers run "
           "at none), so there are no slow tags to walk\n";
  } else {
    out << "\n"
        << tags << " tags; the median tag took " << ms(median_tag_ns)
        << " from its first reaction or message to its last, over every federate\n";
  }
  if (dropped != 0) {
    out << "(" << dropped << " events were dropped by the rings: raise trace.events to keep the "
        << "whole run)\n";
  }
  for (const SlowTag& slow : slowest) {
    out << "\ntag " << tag_string(slow.tag) << ", " << ms(slow.tag.time_ns() - first_tag.time_ns())
        << " of logical time in: took " << ms(slow.wall_ns) << "\n";
    for (const std::string& link : slow.chain) out << "  " << link << "\n";
  }
  return out.str();
}

std::string TraceSummary::svg(const std::string& title) const {
  static const char* const kColours[kCategoryCount] = {"#2e7d32", "#1565c0", "#ef6c00",
                                                       "#c62828", "#6a1b9a", "#9e9e9e"};
  const int left = 160, width = 600, bar = 22, gap = 8, top = 50, right = 90;
  const int bars_end = top + static_cast<int>(federates.size()) * (bar + gap);
  const int height = bars_end + 80;
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(2);
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + right
      << "\" height=\"" << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"10\" y=\"24\" font-size=\"15\">" << xml_escaped(title) << "</text>\n";
  // Grid lines and the axis: percent of each federate's wall time.
  for (int p = 0; p <= 100; p += 25) {
    const int x = left + width * p / 100;
    out << "<line x1=\"" << x << "\" y1=\"" << top - 6 << "\" x2=\"" << x << "\" y2=\"" << bars_end
        << "\" stroke=\"#dddddd\"/>\n"
        << "<text x=\"" << x << "\" y=\"" << bars_end + 14 << "\" text-anchor=\"middle\">" << p
        << "%</text>\n";
  }
  out << "<text x=\"" << left + width / 2 << "\" y=\"" << bars_end + 30
      << "\" text-anchor=\"middle\">share of each federate's wall time</text>\n";
  int y = top;
  for (const FederateTime& f : federates) {
    out << "<g class=\"federate\"><text x=\"" << left - 8 << "\" y=\"" << y + 15
        << "\" text-anchor=\"end\">" << xml_escaped(f.federate) << "</text>\n";
    double x = left;
    for (std::size_t c = 0; c < kCategoryCount; ++c) {
      const auto category = static_cast<TimeCategory>(c);
      const double w = width * f.percent(category) / 100.0;
      if (w <= 0) continue;
      out << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << bar
          << "\" fill=\"" << kColours[c] << "\"><title>" << xml_escaped(f.federate) << ", "
          << category_name(category) << ": " << f.percent(category) << "%</title></rect>\n";
      x += w;
    }
    out << "<text x=\"" << left + width + 6 << "\" y=\"" << y + 15 << "\">"
        << static_cast<double>(f.wall_ns) / 1e9 << " s</text></g>\n";
    y += bar + gap;
  }
  int lx = 10;
  for (std::size_t c = 0; c < kCategoryCount; ++c) {
    out << "<rect x=\"" << lx << "\" y=\"" << bars_end + 46
        << "\" width=\"12\" height=\"12\" fill=\"" << kColours[c] << "\"/><text x=\"" << lx + 16
        << "\" y=\"" << bars_end + 56 << "\">" << category_name(static_cast<TimeCategory>(c))
        << "</text>\n";
    lx += 140;
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace tagflow::tracing
