// The control messages of actor mode: how replicas find each other, how credits flow, how a
// replica leaves and how a run stops. Plain value types; they cross processes, so each one is in
// the type-ID block of actors/message_types.hpp.
//
// Every data link `A.out → B.in` is one sender and one receiver. The receiver decides how much
// the sender may send: nothing travels before a Credit, and each Credit allows `amount` more
// messages on that link (actors/credit_ledger.hpp). The protocol, in order:
//   1. Offer{port, from}: the sender announces its output `port` to the receiver (from = the
//      sender's replica name). The receiver remembers the sender and answers 2.
//   2. Credit{port, amount, from}: the receiver lets the sender send `amount` more messages on
//      `port` (the sender's output port name); `from` is the receiver's replica name. A Credit from
//      an actor the sender does not know yet adds it as a downstream of `port` (that is how a
//      sampler subscribes to weights).
//   3. Leave{from}: a replica leaves the cluster; its peers forget it (no credits, no stop).
//   4. StopRun{reason}: the run ends. Every replica forwards it once to every peer it knows and
//      then terminates, so one stop reaches the whole connected cluster.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include <caf/meta/type_name.hpp>

namespace tagflow::actors {

struct Offer {
  std::string port;  // the sender's output port (transitions, batches, ...)
  std::string from;  // the sender's replica name
};

struct Credit {
  Credit() = default;
  /// `from` may be left out by a granter that is no replica (its traffic is then "unknown").
  Credit(std::string port_, std::uint32_t amount_, std::string from_ = "")
      : port(std::move(port_)), amount(amount_), from(std::move(from_)) {}

  std::string port;  // the sender's output port the credit is for
  std::uint32_t amount = 0;
  std::string from;  // the granting replica's name (a sampler subscribing to weights names itself)
};

struct Leave {
  std::string from;
};

struct StopRun {
  std::string reason;  // target_return, env_steps, seconds, or "" (someone stopped it)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Offer& x) {
  return f(caf::meta::type_name("tagflow.Offer"), x.port, x.from);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Credit& x) {
  return f(caf::meta::type_name("tagflow.Credit"), x.port, x.amount, x.from);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Leave& x) {
  return f(caf::meta::type_name("tagflow.Leave"), x.from);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, StopRun& x) {
  return f(caf::meta::type_name("tagflow.StopRun"), x.reason);
}

}  // namespace tagflow::actors
