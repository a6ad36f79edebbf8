// CURVE key pairs for encrypted federations (WIRE.md §4).
//
// Keys are Z85 text (40 characters). A key pair named N lives in a directory as N.pub (public
// key, world-readable) and N.key (secret key, mode 0600). `tagflow keys generate DIR` writes them;
// the cluster config names the directory. All functions throw CurveKeyError with a message naming
// the file on any failure (missing file, bad key text, libzmq built without CURVE).
// Thread-safety: pure functions on the file system.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

#include <zmq.hpp>

namespace tagflow::transport {

class CurveKeyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CurveKeyPair {
  std::string public_key;  ///< Z85, 40 characters
  std::string secret_key;  ///< Z85, 40 characters
};

/// A fresh key pair from libzmq (libsodium).
[[nodiscard]] CurveKeyPair generate_curve_key_pair();

/// True when `key` is 40 characters of Z85 that decode to 32 bytes.
[[nodiscard]] bool is_valid_z85_key(const std::string& key);

/// Writes DIR/NAME.pub and DIR/NAME.key (created 0600), creating DIR if needed.
void write_key_pair(const std::filesystem::path& dir, const std::string& name,
                    const CurveKeyPair& pair);

/// Reads DIR/NAME.pub (and DIR/NAME.key unless `public_only`).
[[nodiscard]] CurveKeyPair read_key_pair(const std::filesystem::path& dir, const std::string& name,
                                         bool public_only = false);

/// Makes `socket` a CURVE server with `pair` (clients must then know pair.public_key).
void make_curve_server(zmq::socket_t& socket, const CurveKeyPair& pair);

/// Makes `socket` a CURVE client with its own `pair` of a server whose public key is given.
void make_curve_client(zmq::socket_t& socket, const CurveKeyPair& pair,
                       const std::string& server_public_key);

}  // namespace tagflow::transport
