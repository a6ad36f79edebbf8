// http_get(): a minimal HTTP/1.0 client for Prometheus endpoints (the launcher's progress line,
// `tagflow bench recovery`): one blocking socket, a deadline covering connect, send and receive,
// no redirects, no keep-alive, no chunked encoding (HTTP/1.0 responses have none).
//
// Errors are values: an unreachable, slow or non-200 endpoint gives nullopt; nothing throws on
// network input. Thread-safety: a free function without shared state; callable from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace tagflow::monitoring {

/// The body of `GET http://HOST:PORT/PATH` when the server answers 200 within `timeout`, else
/// nullopt. HOST is a name or a numeric IPv4/IPv6 address (without brackets). Bodies larger than
/// `max_bytes` count as a failure.
[[nodiscard]] std::optional<std::string> http_get(const std::string& host, std::uint16_t port,
                                                  const std::string& path,
                                                  std::chrono::milliseconds timeout,
                                                  std::size_t max_bytes = 8U << 20U);

}  // namespace tagflow::monitoring
