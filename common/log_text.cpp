#include "common/log_text.hpp"

namespace tagflow {

std::string json_error_text(const std::exception& e) {
  std::string text = e.what();
  if (text.rfind("[json.exception.", 0) == 0) {
    const auto end = text.find("] ");
    if (end != std::string::npos) text.erase(0, end + 2);
  }
  return text;
}

namespace {

/// Appends \xNN, the byte in two lower-case hex digits.
void append_hex(std::string& out, unsigned char byte) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 15];
}

}  // namespace

std::string escape_for_log(std::string_view text, std::size_t max_bytes) {
  const std::string_view kept = text.substr(0, max_bytes);
  std::string out;
  out.reserve(kept.size());
  for (const char c : kept) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte == '\\') {
      out += "\\\\";
    } else if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      append_hex(out, byte);
    }
  }
  if (text.size() > kept.size()) {
    out += "...(" + std::to_string(text.size() - kept.size()) + " more bytes)";
  }
  return out;
}

std::string single_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      out += c;  // UTF-8 included: a path's own letters stay readable
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      append_hex(out, byte);
    }
  }
  return out;
}

bool LogRateLimit::allow(Clock::time_point now) {
  if (!open_ || now - window_start_ >= std::chrono::seconds(1)) {
    open_ = true;
    window_start_ = now;
    in_window_ = 0;
  }
  if (in_window_ < per_second_) {
    ++in_window_;
    return true;
  }
  ++suppressed_;
  return false;
}

bool PeerLogBudget::allow(const std::string& peer, LogRateLimit::Clock::time_point now) {
  const std::string* key = &peer;
  static const std::string kOther = "(other)";
  if (events_.count(peer) == 0 && events_.size() >= kMaxPeers) key = &kOther;
  const std::uint64_t seen = ++events_[*key];
  if (seen <= kLinesPerPeer && per_second_.allow(now)) return true;
  ++suppressed_;
  return false;
}

std::uint64_t PeerLogBudget::events(const std::string& peer) const {
  auto it = events_.find(peer);
  if (it == events_.end() && events_.size() >= kMaxPeers) it = events_.find("(other)");
  return it == events_.end() ? 0 : it->second;
}

std::string peer_address_for_log(const char* property) {
  if (property == nullptr) return "(unknown address)";
  const std::string_view text = property;
  constexpr std::string_view kUnixPeer = "localhost:";
  if (text.substr(0, kUnixPeer.size()) == kUnixPeer) {
    const std::string_view credentials = text.substr(kUnixPeer.size());
    const std::size_t first = credentials.find(':');
    const std::size_t last = credentials.rfind(':');
    const auto digits = [](std::string_view field) {
      return !field.empty() && field.size() <= 10 &&
             field.find_first_not_of("0123456789") == std::string_view::npos;
    };
    if (first != std::string_view::npos && last != first) {
      const std::string_view uid = credentials.substr(0, first);
      const std::string_view gid = credentials.substr(first + 1, last - first - 1);
      const std::string_view pid = credentials.substr(last + 1);
      if (digits(uid) && digits(gid) && digits(pid)) {
        return "a Unix socket (pid " + std::string(pid) + ", uid " + std::string(uid) + ")";
      }
    }
  }
  return escape_for_log(text);
}

}  // namespace tagflow
