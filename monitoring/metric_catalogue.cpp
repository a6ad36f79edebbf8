#include "monitoring/metric_catalogue.hpp"

#include <sstream>
#include <stdexcept>

namespace tagflow::monitoring {
namespace {

// Who exports a family of this catalogue: the coordinator, and every node process ("node", what
// kind it may be). The families of one node kind are declared by the kind (nodes/kind/).
using K = std::string;
const K kCoordinator = kCoordinatorKind;

const std::vector<K> kAll = {kCoordinator, kNodeProcesses};
const std::vector<K> kNodes = {kNodeProcesses};

MetricSpec counter(Metric id, std::string name, std::string help, std::string unit,
                   std::vector<std::string> labels, std::vector<K> exporters) {
  return {id,
          std::move(name),
          std::move(help),
          MetricType::counter,
          std::move(unit),
          std::move(labels),
          {},
          std::move(exporters)};
}

MetricSpec gauge(Metric id, std::string name, std::string help, std::string unit,
                 std::vector<std::string> labels, std::vector<K> exporters) {
  return {id,
          std::move(name),
          std::move(help),
          MetricType::gauge,
          std::move(unit),
          std::move(labels),
          {},
          std::move(exporters)};
}

MetricSpec histogram(Metric id, std::string name, std::string help, std::string unit,
                     std::vector<double> buckets, std::vector<K> exporters) {
  return {id, std::move(name),    std::move(help),     MetricType::histogram, std::move(unit),
          {}, std::move(buckets), std::move(exporters)};
}

MetricSpec collected(MetricSpec spec) {
  spec.source = MetricSource::process_collector;
  return spec;
}

std::vector<MetricSpec> make_catalogue() {
  const std::vector<std::string> peer = {"peer"};
  std::vector<MetricSpec> c = {
      gauge(Metric::build_info, "tagflow_build_info",
            "Always 1; the version label is the tagflow version of this process.", "", {"version"},
            kAll),
      counter(Metric::transport_messages_sent, "tagflow_transport_messages_sent_total",
              "Messages sent to a peer process.", "", peer, kAll),
      counter(Metric::transport_messages_received, "tagflow_transport_messages_received_total",
              "Valid messages received from a peer process.", "", peer, kAll),
      counter(Metric::transport_sent_bytes, "tagflow_transport_sent_bytes_total",
              "Bytes sent to a peer process: reactor nodes count the payloads of values, actor "
              "nodes the serialized fields of each message, the coordinator whole control frames.",
              "bytes", peer, kAll),
      counter(Metric::transport_received_bytes, "tagflow_transport_received_bytes_total",
              "Bytes of valid messages received from a peer process.", "bytes", peer, kAll),
      counter(Metric::transport_invalid_messages, "tagflow_transport_invalid_messages_total",
              "Invalid messages received and dropped, by peer and reason (the names of "
              "transport/drop_reason.hpp: bad_version, size_mismatch, unknown_port, ...; "
              "peer=\"http\": HTTP clients the metrics endpoint dropped).",
              "", {"peer", "reason"}, kAll),
      counter(Metric::federation_grants, "tagflow_federation_grants_total",
              "Reactor mode (no series in actor mode): grants that let this federate run further, "
              "by who gave them: coordinator (TAG or PTAG) or upstreams (their COMPLETED notices "
              "on the data path, federation/PROTOCOL.md 3.8).",
              "", {"by"}, kNodes),
      counter(
          Metric::federation_deferred_waits, "tagflow_federation_deferred_waits_total",
          "Reactor mode (0 in actor mode): waits for a grant this federate did not report to the "
          "coordinator, counting on its upstreams' COMPLETED notices (federation/PROTOCOL.md 3.9).",
          "", {}, kNodes),
      gauge(Metric::federation_waiting_for_start, "tagflow_federation_waiting_for_start",
            "Reactor mode (0 in actor mode): 1 while this federate waits for the coordinator's "
            "START (it joins, federation/PROTOCOL.md 2), else 0.",
            "", {}, kNodes),
      counter(Metric::checkpoint_parts, "tagflow_checkpoint_parts_total",
              "Reactor mode (0 in actor mode): checkpoint parts this federate wrote "
              "(federation/PROTOCOL.md 9).",
              "", {}, kNodes),
      counter(Metric::checkpoint_written_bytes, "tagflow_checkpoint_written_bytes_total",
              "Reactor mode (0 in actor mode): bytes of those parts, attachments (a replay table) "
              "included.",
              "bytes", {}, kNodes),
      gauge(Metric::checkpoint_resumed_from, "tagflow_checkpoint_resumed_from_seconds",
            "Reactor mode (0 in actor mode): the logical time of the checkpoint this process "
            "resumed from after a restart; 0 for a process that started the run.",
            "seconds", {}, kNodes),
      counter(Metric::checkpoint_resent_messages, "tagflow_checkpoint_resent_messages_total",
              "Reactor mode (0 in actor mode): messages this federate's checkpoint part held in "
              "transit and that it sent again when it resumed (federation/PROTOCOL.md 9.6).",
              "", {}, kNodes),
      gauge(Metric::actor_members, "tagflow_actor_members",
            "Actor mode: 1 for each replica linked to this node that may join and leave (a "
            "sampler, or a multi_agent env node sending this node its observations or "
            "transitions; label peer: its replica name), 0 once it left or died. Replicas that "
            "joined a running cluster show up here.",
            "", peer, kNodes),
      counter(Metric::coordinator_tag_advances, "tagflow_coordinator_tag_advances_total",
              "Tag advance grants sent (TAG and PTAG).", "", {}, {kCoordinator}),
      counter(Metric::coordinator_report_requests, "tagflow_coordinator_report_requests_total",
              "REPORT_REQUESTs sent: a federate waited for the coordinator's grant while others "
              "had left their waits unreported (federation/PROTOCOL.md 3.9).",
              "", {}, {kCoordinator}),
      histogram(Metric::coordinator_grant_latency, "tagflow_coordinator_grant_latency_seconds",
                "Time from a federate's next tag (a NET, or the next tag an LTC carries) to the "
                "grant that covers it; 0 when a grant covered it already.",
                "seconds", latency_buckets(), {kCoordinator}),
      counter(Metric::coordinator_heartbeats, "tagflow_coordinator_heartbeats_total",
              "Heartbeats received from a federate.", "", peer, {kCoordinator}),
      counter(Metric::coordinator_silences, "tagflow_coordinator_silences_total",
              "Times a federate was heard from again after more than 3/8 of heartbeat_timeout "
              "(one and a half heartbeat periods) without a message: a slow or broken link, or a "
              "stalled process "
              "(federation/PROTOCOL.md 6.2).",
              "", peer, {kCoordinator}),
      counter(Metric::coordinator_silence_seconds, "tagflow_coordinator_silence_seconds_total",
              "The length of those silences: time lost to a federate's link or process.", "seconds",
              peer, {kCoordinator}),
      gauge(Metric::coordinator_federates, "tagflow_coordinator_federates",
            "Federates joined and not failed.", "", {}, {kCoordinator}),
      counter(Metric::coordinator_federate_failures, "tagflow_coordinator_federate_failures_total",
              "Federates declared failed: silent for longer than the heartbeat timeout, gone (its "
              "connection closed), or reported failed.",
              "", {}, {kCoordinator}),
      collected(counter(Metric::process_cpu_seconds, "process_cpu_seconds_total",
                        "Total user and system CPU time spent in seconds.", "seconds", {}, kAll)),
      collected(gauge(Metric::process_resident_memory, "process_resident_memory_bytes",
                      "Resident memory size in bytes.", "bytes", {}, kAll)),
      collected(gauge(Metric::process_virtual_memory, "process_virtual_memory_bytes",
                      "Virtual memory size in bytes.", "bytes", {}, kAll)),
      collected(gauge(Metric::process_open_fds, "process_open_fds",
                      "Number of open file descriptors.", "", {}, kAll)),
      collected(gauge(Metric::process_start_time, "process_start_time_seconds",
                      "Start time of the process since unix epoch in seconds.", "seconds", {},
                      kAll)),
      gauge(Metric::up, "up",
            "Written by Prometheus for each target: 1 if the last scrape succeeded, else 0.", "",
            {}, kAll),
  };
  c.back().source = MetricSource::scrape;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (static_cast<std::size_t>(c[i].id) != i) {
      throw std::logic_error("metric catalogue out of Metric order at " + c[i].name);
    }
  }
  return c;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

const char* to_string(MetricType type) {
  switch (type) {
    case MetricType::counter:
      return "counter";
    case MetricType::gauge:
      return "gauge";
    case MetricType::histogram:
      return "histogram";
  }
  return "untyped";
}

bool MetricSpec::exported_by(const std::string& kind) const {
  for (const std::string& k : exporters) {
    if (k == kind || (k == kNodeProcesses && kind != kCoordinatorKind)) return true;
  }
  return false;
}

const std::vector<double>& latency_buckets() {
  static const std::vector<double> buckets = {1e-5,   2.5e-5, 5e-5, 1e-4,  2.5e-4, 5e-4, 1e-3,
                                              2.5e-3, 5e-3,   0.01, 0.025, 0.05,   0.1,  0.25,
                                              0.5,    1.0,    2.5,  5.0,   10.0};
  return buckets;
}

const std::vector<double>& batch_size_buckets() {
  static const std::vector<double> buckets = {1,   2,   4,   8,    16,   32,  64,
                                              128, 256, 512, 1024, 2048, 4096};
  return buckets;
}

const std::vector<MetricSpec>& catalogue() {
  static const std::vector<MetricSpec> specs = make_catalogue();
  return specs;
}

const MetricSpec& spec(Metric metric) { return catalogue().at(static_cast<std::size_t>(metric)); }

std::optional<Metric> find_metric(const std::string& name) {
  for (const MetricSpec& s : catalogue()) {
    if (s.name == name) return s.id;
    if (s.type != MetricType::histogram) continue;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (name == s.name + suffix) return s.id;
    }
  }
  return std::nullopt;
}

std::string catalogue_markdown(const std::vector<MetricSpec>& specs) {
  std::ostringstream out;
  out << "| family | type | unit | labels | exported by | help |\n"
      << "|---|---|---|---|---|---|\n";
  for (const MetricSpec& s : specs) {
    std::vector<std::string> kinds = s.exporters;
    if (s.exporters == kAll) kinds = {"all"};
    if (s.exporters == kNodes) kinds = {"every node"};
    const char* note = s.source == MetricSource::scrape ? " (by Prometheus)" : "";
    out << "| `" << s.name << "` | " << to_string(s.type) << " | " << s.unit << " | "
        << join(s.labels) << " | " << join(kinds) << note << " | " << s.help << " |\n";
  }
  return out.str();
}

}  // namespace tagflow::monitoring
