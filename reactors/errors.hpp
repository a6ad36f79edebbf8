// AssemblyError: what Environment::assemble() throws when the program is not a valid reactor
// program (and ReactionError, what Environment::run() throws when a reaction threw): a type
// mismatch, two writers to one port, a cycle with no delay, a reaction effect the reaction's
// reactor does not own, connect_each between two widths (at the call), or a change after
// assembly.
//
// Contract: what() names every port and reaction involved by their full names
// ("pong.out", "ping.receive"), so a user can find the declaration from the message alone.
#pragma once

#include <stdexcept>
#include <string>

namespace tagflow::reactors {

class AssemblyError : public std::logic_error {
 public:
  explicit AssemblyError(const std::string& what) : std::logic_error(what) {}
};

/// What Environment::run() throws after a reaction threw: "reaction 'replay.insert' threw: ...".
/// The run stopped at the tag after the one running (Scheduler), the process lives.
class ReactionError : public std::runtime_error {
 public:
  explicit ReactionError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace tagflow::reactors
