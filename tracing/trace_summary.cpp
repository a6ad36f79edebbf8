#include "tracing/trace_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "nodes/message_text.hpp"

namespace tagflow::tracing {
namespace {

/// The row an event's thread belongs to: its federate, or its process (the coordinator).
std::string row_of(const ProcessTraceFile& file, const TraceEvent& event) {
  const std::string& federate = file.threads[event.thread].federate;
  return federate.empty() ? file.process : federate;
}

int category_of(const std::string& kind) {
  if (kind == "reaction" || kind == "handler") return kComputing;
  if (kind == "send" || kind == "receive") return kMessaging;
  if (kind == "wait_data") return kWaitingForData;
  if (kind == "wait_grant") return kWaitingForGrant;
  if (kind == "wait_time") return kWaitingForTime;
  return -1;  // instants and socket polls: the rest
}

bool real(const Tag& tag) { return !tag.is_never() && !tag.is_forever(); }

std::string ms(std::int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", static_cast<double>(ns) / 1e6);
  return text;
}

/// A federate's events, and the data sends of the run by (sender, receiver, port, tag).
struct Index {
  std::map<std::string, std::vector<const TraceEvent*>> rows;  // by start
  std::map<std::tuple<std::string, std::string, std::uint32_t, Tag>, const TraceEvent*> sends;
};

const char* wait_name(const std::string& kind) { return kind == "wait_data" ? "data" : "a grant"; }

/// The critical path of `tag`, walked back from `last` on row `row` (see the header).
std::vector<std::string> chain_of(const Index& index, std::string row, const TraceEvent* last,
                                  Tag tag, std::int64_t origin) {
  std::vector<std::string> chain;
  for (int link = 0; link < 12; ++link) {
    const std::vector<const TraceEvent*>& events = index.rows.at(row);
    const TraceEvent* wait = nullptr;
    for (const TraceEvent* e : events) {
      if ((e->kind == "wait_data" || e->kind == "wait_grant") && e->tag == tag &&
          e->start_ns <= last->start_ns && (wait == nullptr || e->end_ns() > wait->end_ns())) {
        wait = e;
      }
    }
    if (wait == nullptr) {
      chain.push_back(row + " had tag (" + std::to_string(tag.time_ns()) + ", " +
                      std::to_string(tag.microstep()) +
                      ") without waiting; its work there ended at +" + ms(last->end_ns() - origin));
      break;
    }
    // What ended the wait: the last data message at that tag that arrived by its end.
    const TraceEvent* input = nullptr;
    for (const TraceEvent* e : events) {
      if (e->kind == "receive" && e->tag == tag && e->start_ns <= wait->end_ns() + 1'000'000 &&
          (input == nullptr || e->start_ns > input->start_ns)) {
        input = e;
      }
    }
    const auto sent = input == nullptr
                          ? index.sends.end()
                          : index.sends.find({input->peer, row, input->port, input->tag});
    if (input == nullptr || sent == index.sends.end()) {
      chain.push_back(row + " waited " + ms(wait->duration_ns) + " for " + wait_name(wait->kind) +
                      " from the coordinator (until +" + ms(wait->end_ns() - origin) + ")");
      break;
    }
    const TraceEvent* send = sent->second;
    chain.push_back(row + " waited " + ms(wait->duration_ns) + " for " + wait_name(wait->kind) +
                    "; the last input, " + input->peer + " → " + row + " " +
                    nodes::wire_port_name(input->port) + ", was sent at +" +
                    ms(send->start_ns - origin) + " and taken at +" + ms(input->start_ns - origin));
    // On to the sender, at the tag of its reaction that sent it.
    row = input->peer;
    const auto sender = index.rows.find(row);
    if (sender == index.rows.end()) break;
    const TraceEvent* reaction = nullptr;
    for (const TraceEvent* e : sender->second) {
      if (e->kind == "reaction" && e->start_ns <= send->start_ns) reaction = e;
    }
    if (reaction == nullptr) break;
    tag = reaction->tag;
    last = reaction;
  }
  return chain;
}

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

TraceSummary summarize_trace(const std::vector<ProcessTraceFile>& files, std::size_t top) {
  TraceSummary summary;
  Index index;
  std::vector<std::string> order;
  for (const ProcessTraceFile& file : files) {
    summary.dropped += file.dropped;
    for (const TraceEvent& e : file.events) {
      const std::string row = row_of(file, e);
      auto [it, inserted] = index.rows.try_emplace(row);
      if (inserted) order.push_back(row);
      it->second.push_back(&e);
      if (e.kind == "send") index.sends[{e.name, e.peer, e.port, e.tag}] = &e;
      if (real(e.tag) && e.tag < summary.first_tag) summary.first_tag = e.tag;
    }
  }
  for (auto& [row, events] : index.rows) {
    std::stable_sort(events.begin(), events.end(), [](const TraceEvent* a, const TraceEvent* b) {
      return a->start_ns < b->start_ns;
    });
  }

  // Per row: each instant of its wall time to the first category active then.
  for (const std::string& row : order) {
    const std::vector<const TraceEvent*>& events = index.rows.at(row);
    FederateTime time;
    time.federate = row;
    std::vector<std::tuple<std::int64_t, int, int>> edges;  // time, +1/-1, category
    std::int64_t begin = events.front()->start_ns, end = events.front()->end_ns();
    std::vector<Tag> tags;
    for (const TraceEvent* e : events) {
      begin = std::min(begin, e->start_ns);
      end = std::max(end, e->end_ns());
      if (e->kind == "reaction") {
        ++time.reactions;
        tags.push_back(e->tag);
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

  // Per tag: the first and last moment of work at it, over every federate.
  std::map<Tag, std::pair<const TraceEvent*, const TraceEvent*>> spans;  // first start, last end
  std::map<const TraceEvent*, std::string> row_of_event;
  for (const auto& [row, events] : index.rows) {
    for (const TraceEvent* e : events) {
      if (!real(e->tag) || (e->kind != "reaction" && e->kind != "send" && e->kind != "receive")) {
        continue;
      }
      auto& span = spans[e->tag];
      if (span.first == nullptr || e->start_ns < span.first->start_ns) span.first = e;
      if (span.second == nullptr || e->end_ns() > span.second->end_ns()) {
        span.second = e;
        row_of_event[e] = row;
      }
    }
  }
  std::vector<std::pair<std::int64_t, Tag>> lengths;
  lengths.reserve(spans.size());
  for (const auto& [tag, span] : spans) {
    lengths.emplace_back(span.second->end_ns() - span.first->start_ns, tag);
  }
  summary.tags = lengths.size();
  if (!lengths.empty()) {
    std::vector<std::int64_t> only;
    for (const auto& [length, tag] : lengths) only.push_back(length);
    std::nth_element(only.begin(), only.begin() + static_cast<std::ptrdiff_t>(only.size() / 2),
                     only.end());
    summary.median_tag_ns = only[only.size() / 2];
  }
  std::sort(lengths.begin(), lengths.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < lengths.size() && i < top; ++i) {
    const Tag tag = lengths[i].second;
    const auto& span = spans.at(tag);
    SlowTag slow{
        tag, lengths[i].first,
        chain_of(index, row_of_event.at(span.second), span.second, tag, span.first->start_ns)};
    summary.slowest.push_back(std::move(slow));
  }
  return summary;
}

std::string TraceSummary::table() const {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "%-16s %9s %9s %9s %9s %9s %9s %9s %9s\n", "federate", "wall s",
                "compute", "messages", "data", "grant", "time", "other", "tags");
  out << line;
  for (const FederateTime& f : federates) {
    const double wall = static_cast<double>(std::max<std::int64_t>(f.wall_ns, 1));
    const auto share = [&](TimeCategory c) { return 100.0 * static_cast<double>(f.ns[c]) / wall; };
    std::snprintf(line, sizeof line,
                  "%-16s %9.3f %8.1f%% %8.1f%% %8.1f%% %8.1f%% %8.1f%% %8.1f%% %9zu\n",
                  f.federate.c_str(), static_cast<double>(f.wall_ns) / 1e9, share(kComputing),
                  share(kMessaging), share(kWaitingForData), share(kWaitingForGrant),
                  share(kWaitingForTime), share(kOther), f.tags);
    out << line;
  }
  out << "\n(compute: reactions; messages: sending and taking data messages; data: a granted tag "
         "waiting for its messages, or nothing to run until one comes; grant: waiting for the "
         "coordinator's TAG/PTAG or an upstream's notice; time: waiting for physical time)\n";
  out << "\n"
      << tags << " tags; the median tag took " << ms(median_tag_ns)
      << " from its first reaction or message to its last, over every federate\n";
  if (dropped != 0) {
    out << "(" << dropped << " events were dropped by the rings: raise trace.events to keep the "
        << "whole run)\n";
  }
  for (const SlowTag& slow : slowest) {
    out << "\ntag (" << slow.tag.time_ns() << ", " << slow.tag.microstep() << "), "
        << ms(slow.tag.time_ns() - first_tag.time_ns()) << " of logical time in: took "
        << ms(slow.wall_ns) << "\n";
    for (const std::string& link : slow.chain) out << "  " << link << "\n";
  }
  return out.str();
}

std::string TraceSummary::svg(const std::string& title) const {
  static const char* const kColours[kCategoryCount] = {"#2e7d32", "#1565c0", "#ef6c00",
                                                       "#c62828", "#6a1b9a", "#9e9e9e"};
  const int left = 150, width = 600, bar = 22, gap = 8, top = 50;
  const int height = top + static_cast<int>(federates.size()) * (bar + gap) + 80;
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 40 << "\" height=\""
      << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"10\" y=\"24\" font-size=\"15\">";
  for (const char c : title) {
    if (c == '<')
      out << "&lt;";
    else if (c == '&')
      out << "&amp;";
    else
      out << c;
  }
  out << "</text>\n";
  int y = top;
  for (const FederateTime& f : federates) {
    out << "<g class=\"federate\"><text x=\"" << left - 8 << "\" y=\"" << y + 15
        << "\" text-anchor=\"end\">" << f.federate << "</text>\n";
    double x = left;
    const double wall = static_cast<double>(std::max<std::int64_t>(f.wall_ns, 1));
    for (std::size_t c = 0; c < kCategoryCount; ++c) {
      const double w = width * static_cast<double>(f.ns[c]) / wall;
      if (w <= 0) continue;
      out << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << bar
          << "\" fill=\"" << kColours[c] << "\"><title>"
          << category_name(static_cast<TimeCategory>(c)) << ": "
          << 100.0 * static_cast<double>(f.ns[c]) / wall << "%</title></rect>\n";
      x += w;
    }
    out << "</g>\n";
    y += bar + gap;
  }
  for (int p = 0; p <= 100; p += 25) {
    const int x = left + width * p / 100;
    out << "<text x=\"" << x << "\" y=\"" << y + 12 << "\" text-anchor=\"middle\">" << p
        << "%</text>\n";
  }
  int lx = 10;
  for (std::size_t c = 0; c < kCategoryCount; ++c) {
    out << "<rect x=\"" << lx << "\" y=\"" << y + 30 << "\" width=\"12\" height=\"12\" fill=\""
        << kColours[c] << "\"/><text x=\"" << lx + 16 << "\" y=\"" << y + 40 << "\">"
        << category_name(static_cast<TimeCategory>(c)) << "</text>\n";
    lx += 130;
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace tagflow::tracing
