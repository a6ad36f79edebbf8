#include "transport/curve_keys.hpp"

#include <array>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <zmq.h>

#include "common/atomic_file.hpp"

namespace tagflow::transport {
namespace {

constexpr std::size_t kZ85KeyChars = 40;

std::string read_key_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw CurveKeyError("cannot read key file " + path.string());
  std::string key;
  in >> key;
  if (!is_valid_z85_key(key)) {
    throw CurveKeyError("key file " + path.string() + " does not hold a 40-character Z85 key");
  }
  return key;
}

void write_key_file(const std::filesystem::path& path, const std::string& key, mode_t mode) {
  // Created with `mode` from the start: a secret key is never readable by others, not even
  // for a moment.
  try {
    write_file_atomically(path.string(), key + "\n", mode);
  } catch (const AtomicFileError& e) {
    throw CurveKeyError(std::string("cannot write key file: ") + e.what());
  }
}

}  // namespace

CurveKeyPair generate_curve_key_pair() {
  if (zmq_has("curve") == 0) throw CurveKeyError("this libzmq was built without CURVE");
  std::array<char, kZ85KeyChars + 1> public_key{};
  std::array<char, kZ85KeyChars + 1> secret_key{};
  if (zmq_curve_keypair(public_key.data(), secret_key.data()) != 0) {
    throw CurveKeyError(std::string("zmq_curve_keypair failed: ") + zmq_strerror(zmq_errno()));
  }
  return {public_key.data(), secret_key.data()};
}

bool is_valid_z85_key(const std::string& key) {
  if (key.size() != kZ85KeyChars) return false;
  std::array<std::uint8_t, 32> bytes{};
  return zmq_z85_decode(bytes.data(), key.c_str()) != nullptr;
}

void write_key_pair(const std::filesystem::path& dir, const std::string& name,
                    const CurveKeyPair& pair) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw CurveKeyError("cannot create key directory " + dir.string() + ": " + error.message());
  }
  // The secret key file is created private before the key is written into it.
  const std::filesystem::path secret = dir / (name + ".key");
  write_key_file(secret, "", 0600);
  write_key_file(secret, pair.secret_key, 0600);
  write_key_file(dir / (name + ".pub"), pair.public_key, 0644);
}

CurveKeyPair read_key_pair(const std::filesystem::path& dir, const std::string& name,
                           bool public_only) {
  CurveKeyPair pair;
  pair.public_key = read_key_file(dir / (name + ".pub"));
  if (!public_only) pair.secret_key = read_key_file(dir / (name + ".key"));
  return pair;
}

void make_curve_server(zmq::socket_t& socket, const CurveKeyPair& pair) {
  socket.set(zmq::sockopt::curve_server, true);
  socket.set(zmq::sockopt::curve_secretkey, pair.secret_key);
  socket.set(zmq::sockopt::zap_domain, "tagflow");
}

void make_curve_client(zmq::socket_t& socket, const CurveKeyPair& pair,
                       const std::string& server_public_key) {
  socket.set(zmq::sockopt::curve_serverkey, server_public_key);
  socket.set(zmq::sockopt::curve_publickey, pair.public_key);
  socket.set(zmq::sockopt::curve_secretkey, pair.secret_key);
}

}  // namespace tagflow::transport
