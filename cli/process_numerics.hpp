// The numeric kernels of a tagflow or tagflow-torch process (common/numerics.hpp), chosen from
// its command line before anything else runs.
#pragma once

#include "common/numerics.hpp"

namespace tagflow::cli {

/// The mode the command line asks for: `--numerics MODE` when given; else the `numerics:` key of
/// the cluster file among the arguments (`--config FILE`, or the first argument that ends in .yaml
/// or .yml or names an existing file and is no value of an output option such as --summary);
/// else the inherited TAGFLOW_NUMERICS; else portable. A key that is not portable or native
/// counts as portable here: the cluster parser refuses it with its file, line and key.
[[nodiscard]] numerics::Mode numerics_of_command(int argc, char** argv);

/// The first thing main() does: brings the environment to numerics_of_command()'s mode and
/// re-executes the program when the libraries already loaded under another one. Prints
/// numerics::unportable_cpu_line() once per run (in the process that first pins), to stderr.
void pin_process_numerics(int argc, char** argv);

}  // namespace tagflow::cli
