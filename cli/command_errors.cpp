#include <CLI/CLI.hpp>

#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "cli/commands.hpp"
#include "common/atomic_file.hpp"
#include "common/log_text.hpp"

namespace tagflow::cli {

void fail_command(const std::string& command, const std::string& message, int code) {
  std::cerr << "tagflow " << command << ": " << single_line(message) << "\n";
  throw CLI::RuntimeError(code);
}

const CLI::Validator kNotEmpty(
    [](std::string& value) {
      return value.empty() ? std::string("an empty value") : std::string();
    },
    "NOT EMPTY");

void refuse_empty_values(CLI::App& app) {
  // kNotEmpty without its description: the help text keeps its type annotations ("NOT EMPTY"
  // only where an option says so itself).
  static const CLI::Validator not_empty = kNotEmpty.description("");
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size() != 0 && option->get_name() != "--help") option->check(not_empty);
  }
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    refuse_empty_values(*command);
  }
}

int standard_output_status(const char* program, int status) {
  errno = 0;
  std::cout.flush();
  const bool written = std::fflush(stdout) == 0 && std::ferror(stdout) == 0 && !std::cout.fail();
  if (written || status != 0) return status;
  // A write that failed earlier left the stream failed and errno long since changed: one more
  // byte (the output is incomplete already) asks the file again why.
  if (errno == 0 && ::write(STDOUT_FILENO, "\n", 1) == 1) errno = 0;
  std::cerr << program << ": cannot write to standard output"
            << (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()) << "\n";
  return 1;
}

std::string output_over_input(const std::string& option, const std::string& path,
                              const std::string& input) {
  std::error_code error;
  if (path.empty() || !std::filesystem::equivalent(path, input, error)) return "";
  return option + " " + path + " is " + input +
         ", the file the command reads: it would be "
         "overwritten";
}

std::string unwritable_output(const std::string& option, const std::string& path) {
  if (path.empty()) return "";
  const std::string why = prepare_output_file(path);
  return why.empty() ? "" : option + " " + path + ": " + why;
}

int parse_error_status(const CLI::App& app, const CLI::ParseError& error) {
  // A command's own status, and 0 for --help and --version, stand.
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success) ||
      dynamic_cast<const CLI::RuntimeError*>(&error) != nullptr) {
    // --help and --version print to standard output: a failed write is said and exits 1.
    return standard_output_status(app.get_name().c_str(), app.exit(error));
  }
  // CLI11's refusals of an argument (a value it does not take, a missing one, one it does not
  // know, ...) name the command they refuse, as the commands' own refusals do, and are a bad
  // argument, as a bad file is (docs/clusters.md, "Exit codes").
  std::string path = app.get_name();
  for (const CLI::App* at = &app; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    path += " " + at->get_name();
  }
  std::cerr << path << ": " << single_line(error.what()) << "\n"
            << "Run '" << path << " --help' for more information.\n";
  return kExitBadFile;
}

int refuse_before_torch(int argc, char** argv, const std::function<void(CLI::App&)>& declare) {
  // Named as tagflow-torch names itself when run through tagflow, so a refusal reads the same.
  CLI::App app{"tagflow", "tagflow"};
  declare(app);
  refuse_empty_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return -1;
  } catch (const CLI::CallForAllHelp&) {
    return -1;
  } catch (const CLI::ParseError& e) {
    return parse_error_status(app, e);
  }
  return -1;
}

std::string unknown_command(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  std::string path = app.get_name();
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') return "";  // options: CLI11 reports those
    const std::vector<const CLI::App*> commands =
        at->get_subcommands([](const CLI::App*) { return true; });
    if (commands.empty()) return "";
    const auto it = std::find_if(commands.begin(), commands.end(),
                                 [&](const CLI::App* c) { return c->get_name() == word; });
    if (it == commands.end()) {
      if (at->get_require_subcommand_min() == 0) return "";
      std::string names;
      for (const CLI::App* c : commands) {
        if (c->get_group().empty()) continue;  // hidden from --help: an internal command
        names += (names.empty() ? "" : ", ") + c->get_name();
      }
      return path + ": unknown command '" + single_line(word) + "' (commands: " + names +
             ")\nRun '" + path + " --help' for more information.";
    }
    at = *it;
    path += " " + word;
  }
  return "";
}

}  // namespace tagflow::cli
