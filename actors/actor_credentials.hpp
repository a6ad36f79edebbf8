// The TLS credentials of an actor-mode cluster (docs/ARCHITECTURE.md): who may connect to a node's
// middleman port.
//
// Actor mode runs CAF's middleman over TLS (caf::openssl, mutual authentication: both ends show
// a certificate signed by the cluster's own CA, or the handshake fails before a single BASP byte
// is read). The credentials live beside the CURVE key pairs of the same keys directory, in
// DIR/actor/:
//   ca.crt              the cluster's CA certificate (its private key is never written: nobody
//                       can sign another member afterwards)
//   NAME.crt, NAME.key  a certificate (CN = NAME) and its private key (mode 0600) for every
//                       process of the cluster file, and one named `join` for samplers that join
//                       a running cluster (`tagflow node --join`)
// `tagflow up` mints a fresh set for every run under LOG_DIR/keys; `tagflow keys generate DIR
// --config FILE` writes one for clusters whose hosts run their own launchers. Keys are P-256,
// certificates SHA-256 signed and valid for ten years. All functions throw
// ActorCredentialError naming the file on failure. Thread-safety: pure functions on files.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace tagflow::actors {

class ActorCredentialError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The name of the certificate a joining sampler uses.
inline constexpr const char* kJoinCredential = "join";

/// The files one process hands to CAF's TLS module.
struct ActorCredentials {
  std::string ca_file;           // DIR/actor/ca.crt
  std::string certificate_file;  // DIR/actor/NAME.crt
  std::string key_file;          // DIR/actor/NAME.key
};

/// Writes a fresh CA and a certificate + key per name into KEYS_DIR/actor (created 0700; an
/// older KEYS_DIR/actor is replaced).
void mint_actor_credentials(const std::filesystem::path& keys_dir,
                            const std::vector<std::string>& names);

/// The credentials of `name` in KEYS_DIR/actor; throws when one of the three files is missing.
[[nodiscard]] ActorCredentials actor_credentials(const std::filesystem::path& keys_dir,
                                                 const std::string& name);

}  // namespace tagflow::actors
