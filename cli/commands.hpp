// The subcommands of the `tagflow` executable. Each add_*_command registers one subcommand (its
// options, help and callback) on the application. A callback that fails prints its error and
// throws CLI::RuntimeError(exit_code), which main() turns into the process's exit status.
#pragma once

#include <functional>
#include <string>

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace tagflow::cli {

/// Exit statuses (docs/clusters.md, "Exit codes"): the command did what it was asked; the run or
/// operation failed; the file or an argument is bad; the run stopped before its target return;
/// `tagflow node`: its federation failed (another federate failed, the coordinator was lost);
/// interrupted (SIGINT or SIGTERM).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadFile = 2;
inline constexpr int kExitBeforeTarget = 3;
inline constexpr int kExitFederation = 4;
inline constexpr int kExitInterrupted = 130;
/// The exit status of a command line CLI11 did not run: what CLI::App::exit prints and returns for
/// --help, --version and a command's own status (CLI::RuntimeError), and kExitBadFile for every
/// argument it refused (an unknown option, a value out of range, a missing file argument), whose
/// message it prints too.
[[nodiscard]] int parse_error_status(const CLI::App& app, const CLI::ParseError& error);

/// "unknown command 'X' (commands: a, b, ...)" and a second line, "Run 'tagflow keys --help' for
/// more information.", when the command line names a command `app` does not have where it needs
/// one (`tagflow nosuch`, `tagflow keys nosuch`), else "". CLI11 alone says only "A subcommand
/// is required".
[[nodiscard]] std::string unknown_command(const CLI::App& app, int argc, char** argv);
/// For a command `tagflow` hands to tagflow-torch: the command line parsed by an app named
/// `tagflow` on which `declare` added that one command, its callback the command's refusals that
/// need no LibTorch (the same declarations tagflow-torch parses). The exit status of a refusal,
/// already printed; -1 when the command goes on to tagflow-torch: it passed, or asked for --help,
/// whose text tagflow-torch prints.
[[nodiscard]] int refuse_before_torch(int argc, char** argv,
                                      const std::function<void(CLI::App&)>& declare);
/// Refuses an empty value (`--only ''`, `--host ''`), which would otherwise read as the option not
/// given: CLI11's message, exit 2.
extern const CLI::Validator kNotEmpty;
/// Adds, to every option of `app` and its commands that takes a value (positionals included), the
/// refusal of an empty value: `--summary ''` or `--log-dir ''` would otherwise read as the option
/// not given, and an empty file name as a file that cannot be read. CLI11's message ("--summary:
/// an empty value"), exit 2. Call once every command is declared, before parsing.
void refuse_empty_values(CLI::App& app);
/// `status`, or 1 (saying so on stderr, "PROGRAM: cannot write to standard output: No space left
/// on device") when what the command printed could not all be written: a full disk, a closed
/// pipe. A command that already failed keeps its own status.
[[nodiscard]] int standard_output_status(const char* program, int status);
/// Prints "tagflow COMMAND: MESSAGE" to stderr and throws CLI::RuntimeError(code).
[[noreturn]] void fail_command(const std::string& command, const std::string& message, int code);
/// Why the file an option names (`--summary PATH`), written at the end of a run, could not be
/// written then, as "OPTION PATH: why" (prepare_output_file(), which makes its missing
/// directories); "" when it can be, or when `path` is empty (the option was not given). A bad
/// argument: the commands refuse it with kExitBadFile before the run.
[[nodiscard]] std::string unwritable_output(const std::string& option, const std::string& path);
/// "OPTION PATH is INPUT, the file the command reads: it would be overwritten" when the output
/// `path` is the file `input` (the same file, through a link or another name); else "".
[[nodiscard]] std::string output_over_input(const std::string& option, const std::string& path,
                                            const std::string& input);

void add_doctor_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_coordinator_command(CLI::App& app);
void add_keys_command(CLI::App& app);
void add_monitoring_command(CLI::App& app);
void add_env_command(CLI::App& app);
/// `node --config FILE --name PROCESS ...`: one process of a cluster (nodes/README.md).
void add_node_command(CLI::App& app);
/// True when argv is `node ... --config FILE --name P ...` and process P hosts a learner or an
/// inference replica (main() then hands the command to tagflow-torch). False on any doubt: the
/// command itself reports a bad file or name.
bool node_needs_torch(int argc, char** argv);
/// `up FILE [--mode M] [--host NAME] [--summary PATH] [--log-dir DIR] [--quiet]`: a cluster as
/// processes (cli/launch/cluster_launcher.hpp); `--placement single` goes to tagflow-torch.
void add_up_command(CLI::App& app);
/// `slurm FILE [--out PATH] [--summary PATH] [--submit]` and `slurm-node`: a cluster file as a
/// Slurm heterogeneous job (cli/slurm_command.cpp, docs/slurm.md).
void add_slurm_command(CLI::App& app);
/// `tagflow k8s`, `k8s-pod` and `k8s-probe` (cli/k8s_command.cpp, docs/kubernetes.md).
void add_k8s_command(CLI::App& app);
/// `trace summary|merge LOG_DIR` and `diff RUN_A RUN_B` (cli/trace_command.cpp,
/// tracing/README.md).
void add_trace_command(CLI::App& app);
void add_diff_command(CLI::App& app);

/// This program's own path (/proc/self/exe, without the " (deleted)" of a binary replaced while
/// it runs), what launchers give their children to run;
/// "tagflow" (found on PATH) when it cannot be read.
std::string own_executable();

/// Path of the tagflow-torch executable that holds every LibTorch command: $TAGFLOW_TORCH if set,
/// else `tagflow-torch` beside the running executable.
std::string torch_executable_path();

/// Replaces this process with `tagflow-torch ARGS...`; returns only on failure (after printing
/// why), with the exit code to use.
int exec_torch_command(int argc, char** argv);

/// The cluster file used when a command is given none: configs/local.yaml in the current
/// directory, else in the source tree this binary was built from.
std::string default_config_path();

}  // namespace tagflow::cli
