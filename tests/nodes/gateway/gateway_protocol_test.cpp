#include "nodes/gateway/gateway_protocol.hpp"

#include <cmath>
#include <functional>
#include <limits>

#include <gtest/gtest.h>
#include <msgpack.hpp>

namespace tagflow::gateway {
namespace {

const RequestShape kShape{3, 4, 8};

template <class Fill>
std::vector<char> frame(std::uint32_t fields, Fill fill) {
  msgpack::sbuffer b;
  msgpack::packer<msgpack::sbuffer> p(b);
  p.pack_map(fields);
  fill(p);
  return {b.data(), b.data() + b.size()};
}

void bin(msgpack::packer<msgpack::sbuffer>& p, const std::vector<float>& v) {
  p.pack_bin(static_cast<std::uint32_t>(v.size() * 4));
  p.pack_bin_body(reinterpret_cast<const char*>(v.data()),
                  static_cast<std::uint32_t>(v.size() * 4));
}

std::vector<char> act(const std::function<void(msgpack::packer<msgpack::sbuffer>&)>& obs,
                      std::uint32_t version = 1) {
  return frame(4, [&](auto& p) {
    p.pack("op");
    p.pack("act");
    p.pack("v");
    p.pack(version);
    p.pack("id");
    p.pack(7);
    p.pack("obs");
    obs(p);
  });
}

GatewayError error_of(const std::vector<char>& f) {
  const DecodeResult r = decode_request(f.data(), f.size(), kShape);
  EXPECT_TRUE(std::holds_alternative<GatewayError>(r));
  return std::holds_alternative<GatewayError>(r) ? std::get<GatewayError>(r) : GatewayError{};
}

TEST(GatewayProtocolTest, DecodesAnActWithAnObservationPerAgentInAgentOrder) {
  const auto f = act([](auto& p) {
    p.pack_map(2);
    p.pack("2");
    bin(p, {1, 2, 3});
    p.pack(0);
    p.pack(std::vector<double>{4, 5, 6});
  });
  const DecodeResult r = decode_request(f.data(), f.size(), kShape);
  ASSERT_TRUE(std::holds_alternative<GatewayRequest>(r));
  const auto& q = std::get<GatewayRequest>(r);
  EXPECT_EQ(q.op, GatewayOp::act);
  EXPECT_EQ(q.id, 7U);
  EXPECT_EQ(q.agents, (std::vector<std::uint32_t>{0, 2}));
  EXPECT_EQ(q.observations, (std::vector<float>{4, 5, 6, 1, 2, 3}));
  EXPECT_FALSE(q.single);
}

TEST(GatewayProtocolTest, DecodesOneObservationWithoutAMap) {
  const auto f = act([](auto& p) { bin(p, {1, 2, 3}); });
  const auto q = std::get<GatewayRequest>(decode_request(f.data(), f.size(), kShape));
  EXPECT_TRUE(q.single);
  EXPECT_EQ(q.observations.size(), 3U);
}

TEST(GatewayProtocolTest, RefusesAWrongVersionAndSaysWhichItSpeaks) {
  const auto e = error_of(act([](auto& p) { bin(p, {1, 2, 3}); }, 2));
  EXPECT_EQ(e.code, "version");
  EXPECT_EQ(e.id, 7U);
  const Frame reply = encode_error(e);
  const auto h = msgpack::unpack(reinterpret_cast<const char*>(reply.data()), reply.size());
  const auto fields = h.get().as<std::map<std::string, msgpack::object>>();
  EXPECT_EQ(fields.count("versions"), 1U);
}

TEST(GatewayProtocolTest, RefusesUnknownAgentsWrongWidthsAndNaN) {
  EXPECT_EQ(error_of(act([](auto& p) {
              p.pack_map(1);
              p.pack(9);
              bin(p, {1, 2, 3});
            })).code,
            "unknown_agent");
  EXPECT_EQ(error_of(act([](auto& p) {
              p.pack_map(1);
              p.pack(1);
              bin(p, {1, 2});
            })).code,
            "width");
  EXPECT_EQ(error_of(act([](auto& p) {
              p.pack_map(1);
              p.pack(1);
              bin(p, {1, std::numeric_limits<float>::quiet_NaN(), 3});
            })).code,
            "nan");
  EXPECT_EQ(error_of(act([](auto& p) {
              p.pack_map(2);
              p.pack(1);
              bin(p, {1, 2, 3});
              p.pack("1");
              bin(p, {1, 2, 3});
            })).code,
            "malformed");
}

// The `width` reason says how many floats came and how many were expected; a bin that is no whole
// number of float32s says so, rather than a float count that looks right (1350 floats for 5401
// bytes).
TEST(GatewayProtocolTest, AWidthRefusalSaysWhatCameAndWhatWasExpected) {
  const GatewayError short_row = error_of(act([](auto& p) {
    p.pack_map(1);
    p.pack(1);
    bin(p, {1, 2});
  }));
  EXPECT_EQ(short_row.code, "width");
  EXPECT_NE(short_row.reason.find("has 2 floats (8 bytes), expected 3 floats (12 bytes)"),
            std::string::npos)
      << short_row.reason;
  const GatewayError ragged = error_of(act([](auto& p) {
    p.pack_map(1);
    p.pack(1);
    const std::vector<char> bytes(13, '\0');
    p.pack_bin(13);
    p.pack_bin_body(bytes.data(), 13);
  }));
  EXPECT_EQ(ragged.code, "width");
  EXPECT_NE(ragged.reason.find("is a bin of 13 bytes, not a whole number of float32s; expected 3 "
                               "floats (12 bytes)"),
            std::string::npos)
      << ragged.reason;
}

TEST(GatewayProtocolTest, RefusesGarbageTrailingBytesAndHugeClaimedSizes) {
  const std::vector<char> garbage = {'\xc1', '\x00', '\x17'};
  EXPECT_EQ(error_of(garbage).code, "malformed");
  auto trailing = act([](auto& p) { bin(p, {1, 2, 3}); });
  trailing.push_back('\x01');
  EXPECT_EQ(error_of(trailing).code, "malformed");
  // A bin header claiming 4 GiB in a 10-byte frame, and a map claiming 2^32 - 1 entries.
  const std::vector<char> huge_bin = {'\x81', '\xa3', 'o',    'b',    's',
                                      '\xc6', '\xff', '\xff', '\xff', '\xff'};
  EXPECT_NE(error_of(huge_bin).code, "");
  const std::vector<char> huge_map = {'\xdf', '\xff', '\xff', '\xff', '\xff'};
  EXPECT_NE(error_of(huge_map).code, "");
  EXPECT_EQ(error_of(std::vector<char>{}).code, "malformed");
}

// The limits hold over the whole frame (PROTOCOL.md §2.1, §6): what follows the request map is
// checked against them before the frame is found to be more than one map.
TEST(GatewayProtocolTest, ALimitBrokenAfterTheRequestMapIsTooLargeWithTheMapsIdAndOp) {
  std::vector<char> f = act([](auto& p) { bin(p, {1, 2, 3}); });
  msgpack::sbuffer after;
  msgpack::pack(after, std::string(65, 'q'));  // strings hold at most 64 bytes
  f.insert(f.end(), after.data(), after.data() + after.size());
  const GatewayError too_large = error_of(f);
  EXPECT_EQ(too_large.code, "too_large");
  EXPECT_EQ(too_large.reason, "the request holds a string of 65 bytes (at most 64)");
  EXPECT_EQ(too_large.id, std::optional<std::uint64_t>(7));
  EXPECT_EQ(too_large.op, std::optional<std::string>("act"));
  // Within the limits, bytes after the map are malformed; a first value that is no map says so.
  std::vector<char> within = act([](auto& p) { bin(p, {1, 2, 3}); });
  within.push_back('\x05');
  const GatewayError trailing = error_of(within);
  EXPECT_EQ(trailing.code, "malformed");
  EXPECT_EQ(trailing.reason, "bytes after the MessagePack map");
  const std::vector<char> two_numbers = {'\x05', '\x06'};
  EXPECT_EQ(error_of(two_numbers).reason, "not a MessagePack map");
}

TEST(GatewayProtocolTest, RefusesRowsAboveMaxBatch) {
  const auto f = frame(5, [](auto& p) {
    p.pack("op");
    p.pack("act");
    p.pack("v");
    p.pack(1);
    p.pack("rows");
    p.pack(9);
    p.pack("id");
    p.pack(1);
    p.pack("obs");
    bin(p, std::vector<float>(27));
  });
  EXPECT_EQ(error_of(f).code, "too_large");
}

TEST(GatewayProtocolTest, RefusesAnUnknownOpAndAnEpisodeEndWithoutEpisode) {
  const auto unknown = frame(2, [](auto& p) {
    p.pack("op");
    p.pack("reload");
    p.pack("v");
    p.pack(1);
  });
  EXPECT_EQ(error_of(unknown).code, "unknown_op");
  const auto end = frame(2, [](auto& p) {
    p.pack("op");
    p.pack("episode_end");
    p.pack("v");
    p.pack(1);
  });
  EXPECT_EQ(error_of(end).code, "malformed");
}

TEST(GatewayProtocolTest, DecodesAnEpisodeStartsLogFlagAndRefusesANonBool) {
  const auto start = [](bool as_bool) {
    return frame(3, [as_bool](auto& p) {
      p.pack("op");
      p.pack("episode_start");
      p.pack("v");
      p.pack(1);
      p.pack("log");
      if (as_bool) {
        p.pack(true);
      } else {
        p.pack(1);
      }
    });
  };
  const auto good = start(true);
  const DecodeResult r = decode_request(good.data(), good.size(), kShape);
  ASSERT_TRUE(std::holds_alternative<GatewayRequest>(r));
  EXPECT_EQ(std::get<GatewayRequest>(r).log, std::optional<bool>(true));
  const GatewayError e = error_of(start(false));
  EXPECT_EQ(e.code, "malformed");
  EXPECT_EQ(e.reason, "log is not a bool");
}

TEST(GatewayProtocolTest, EncodesTheLoggedCountOfALoggedEpisodesReplies) {
  GatewayRequest q;
  q.agents = {1};
  const Frame act = encode_act(q, ActAnswer{{1}, {"p0"}, {2}, {0}, 12});
  const auto h = msgpack::unpack(reinterpret_cast<const char*>(act.data()), act.size());
  using Fields = std::map<std::string, msgpack::object>;
  EXPECT_EQ(h.get().as<Fields>().at("logged").as<int>(), 12);
  const Frame end = encode_episode_end(4, 9, 3, {{1, 2.5}}, 7, 77);
  const auto e = msgpack::unpack(reinterpret_cast<const char*>(end.data()), end.size());
  const auto m = e.get().as<Fields>();
  EXPECT_EQ(m.at("logged").as<int>(), 7);
  EXPECT_EQ(m.at("steps").as<int>(), 3);
  EXPECT_EQ(m.at("instance").as<std::uint64_t>(), 77U);
  const Frame started = encode_episode_start(5, 9, true, 77);
  const auto s = msgpack::unpack(reinterpret_cast<const char*>(started.data()), started.size());
  EXPECT_TRUE(s.get().as<Fields>().at("log").as<bool>());
  EXPECT_EQ(s.get().as<Fields>().at("instance").as<std::uint64_t>(), 77U);
}

// PROTOCOL.md §4, step 3: `instance` on act and episode_end is an unsigned integer, like `episode`.
TEST(GatewayProtocolTest, ReadsTheInstanceOfAnEpisodeRequest) {
  const auto end = [](auto instance) {
    return frame(5, [&](auto& p) {
      p.pack("op");
      p.pack("episode_end");
      p.pack("v");
      p.pack(1);
      p.pack("id");
      p.pack(3);
      p.pack("episode");
      p.pack(4);
      p.pack("instance");
      p.pack(instance);
    });
  };
  const auto good = end(std::numeric_limits<std::uint64_t>::max());
  const DecodeResult r = decode_request(good.data(), good.size(), kShape);
  ASSERT_TRUE(std::holds_alternative<GatewayRequest>(r)) << std::get<GatewayError>(r).reason;
  EXPECT_EQ(std::get<GatewayRequest>(r).instance,
            std::optional<std::uint64_t>(std::numeric_limits<std::uint64_t>::max()));
  const GatewayError e = error_of(end("9"));
  EXPECT_EQ(e.code, "malformed");
  EXPECT_EQ(e.reason, "instance is not an unsigned integer");
}

// PROTOCOL.md §2.1: a signed format holding a number >= 0 is that unsigned number (a packer may
// write every integer signed), in the id the reply must echo as in any other field.
TEST(GatewayProtocolTest, ReadsUnsignedNumbersWrittenInSignedFormats) {
  const std::vector<char> f = frame(3, [](auto& p) {
    p.pack("op");
    p.pack("hello");
    p.pack("v");
    p.pack_fix_int64(1);
    p.pack("id");
    p.pack_fix_int8(5);
  });
  ASSERT_EQ(static_cast<unsigned char>(f[f.size() - 2]), 0xd0U);  // the id really is an int 8
  const DecodeResult r = decode_request(f.data(), f.size(), kShape);
  ASSERT_TRUE(std::holds_alternative<GatewayRequest>(r))
      << std::get<GatewayError>(r).code << ": " << std::get<GatewayError>(r).reason;
  EXPECT_EQ(std::get<GatewayRequest>(r).id, 5U);
  const std::vector<char> negative = frame(3, [](auto& p) {
    p.pack("op");
    p.pack("hello");
    p.pack("v");
    p.pack(1);
    p.pack("id");
    p.pack_fix_int8(-5);
  });
  EXPECT_EQ(error_of(negative).code, "malformed");
}

// PROTOCOL.md §4.3: returns are floats, whole numbers too (MessagePack's packer would write 3.0
// as the integer 3).
TEST(GatewayProtocolTest, EncodesReturnsAsFloatsEvenWhenWhole) {
  const Frame end = encode_episode_end(4, 9, 3, {{1, 3.0}, {2, -2.5}, {3, 0.0}}, 0, 1);
  const auto e = msgpack::unpack(reinterpret_cast<const char*>(end.data()), end.size());
  const auto m = e.get().as<std::map<std::string, msgpack::object>>();
  const auto returns = m.at("returns").as<std::map<std::uint32_t, msgpack::object>>();
  ASSERT_EQ(returns.size(), 3U);
  for (const auto& [agent, value] : returns) {
    EXPECT_EQ(value.type, msgpack::type::FLOAT64) << agent;
  }
  EXPECT_EQ(returns.at(1).as<double>(), 3.0);
  EXPECT_EQ(returns.at(2).as<double>(), -2.5);
}

TEST(GatewayProtocolTest, EncodesActionsPerAgentWithPolicyAndVersion) {
  GatewayRequest q;
  q.id = 3;
  q.agents = {0, 2};
  ActAnswer a{{0, 2}, {"p0", "p1"}, {5, 6}, {1, 0}, std::nullopt};
  const Frame f = encode_act(q, a);
  const auto h = msgpack::unpack(reinterpret_cast<const char*>(f.data()), f.size());
  const auto m = h.get().as<std::map<std::string, msgpack::object>>();
  EXPECT_TRUE(m.at("ok").as<bool>());
  EXPECT_EQ(m.at("id").as<std::uint64_t>(), 3U);
  EXPECT_EQ((m.at("actions").as<std::map<std::uint32_t, std::int64_t>>()),
            (std::map<std::uint32_t, std::int64_t>{{0, 1}, {2, 0}}));
  EXPECT_EQ((m.at("versions").as<std::map<std::uint32_t, std::uint64_t>>().at(2)), 6U);
  EXPECT_EQ((m.at("policies").as<std::map<std::uint32_t, std::string>>().at(0)), "p0");
}

}  // namespace
}  // namespace tagflow::gateway
