// Remote hosts: how the head host's `tagflow up FILE` starts the other hosts' halves over ssh.
//
// A multi-host cluster file whose hosts other than the coordinator's each have `hosts.NAME.ssh`
// (configs/README.md) can be started from the coordinator's host alone: `tagflow up FILE` there
// (no --host) plays that host and starts, for every other host with processes, one child
//
//   ssh -o BatchMode=yes DESTINATION "cd WORKDIR && exec TAGFLOW up FILE --host NAME
//       --log-dir LOGDIR-NAME --quiet --stop-with-stdin [--mode M]"
//
// with the OpenSSH client found on PATH, the user's own ssh config and keys (batch mode: a host
// that would ask for a password or a host key confirmation fails at once instead), FILE as given
// on the head's command line (a relative path is read from WORKDIR, or the login directory),
// TAGFLOW and WORKDIR from hosts.NAME.tagflow and .workdir. Each such child's output goes to the
// head's DIR/host-NAME.log. The remote launcher stops its processes when its stdin closes
// (`--stop-with-stdin`): when the head stops the ssh client (Ctrl-C, a failure elsewhere) or
// dies, the connection closes and the far half ends too.
//
// Pure functions over values, except find_on_path(), which reads the file system.
#pragma once

#include <optional>
#include <string>

#include "cli/launch/process_supervisor.hpp"
#include "nodes/cluster/cluster_config.hpp"

namespace tagflow::cli {

/// The supervisor name of the child that runs host `host` over ssh: "host:NAME" (no process of
/// a cluster file can have a ':' in its name).
std::string remote_child_name(const std::string& host);
/// The host a remote child name stands for, or "" when `name` is no remote child's.
std::string remote_host_of(const std::string& name);

/// `text` quoted for a POSIX shell ('...', with ' written '\'').
std::string shell_quote(const std::string& text);

/// The ssh child for `host`; `ssh` is the client's path, `file` the cluster file as given;
/// `trace`: it records its processes too (`tagflow up --trace`).
ChildSpec remote_child(const cluster::HostConfig& host, const std::string& ssh,
                       const std::string& file, const std::string& log_dir,
                       const std::optional<cluster::Mode>& mode, bool trace = false);

/// The path of `program` in the directories of $PATH, or "" when it is in none.
std::string find_on_path(const std::string& program);

}  // namespace tagflow::cli
