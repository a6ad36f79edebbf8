// The reactor runtime in one include: tags, reactors, ports, multiports, banks, reactions,
// logical and physical actions, timers, the environment and the federation door.
// See reactors/README.md for a complete example.
#pragma once

#include "reactors/action.hpp"
#include "reactors/bank.hpp"
#include "reactors/environment.hpp"
#include "reactors/errors.hpp"
#include "reactors/federation.hpp"
#include "reactors/multiport.hpp"
#include "reactors/port.hpp"
#include "reactors/reaction.hpp"
#include "reactors/reactor.hpp"
#include "reactors/tag.hpp"
#include "reactors/timer.hpp"
#include "reactors/value.hpp"
