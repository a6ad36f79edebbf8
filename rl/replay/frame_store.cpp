#include "rl/replay/frame_store.hpp"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

namespace tagflow::replay {
namespace {
constexpr std::size_t kChunkBytes = std::size_t{2} << 20;
}  // namespace

FrameStore::FrameStore(std::size_t frame_bytes, std::size_t max_frames)
    : frame_bytes_(std::max<std::size_t>(frame_bytes, 1)),
      chunk_frames_(std::max<std::size_t>(64, kChunkBytes / frame_bytes_)) {
  if (max_frames >= kNoFrame) throw std::invalid_argument("FrameStore: too many frames");
  chunks_.resize((max_frames + chunk_frames_ - 1) / chunk_frames_);
}

FrameId FrameStore::allocate() {
  FrameId id = kNoFrame;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    if (allocated_ == chunks_.size() * chunk_frames_) {
      throw std::length_error("FrameStore: all " + std::to_string(allocated_) +
                              " frames are in use");
    }
    const std::size_t chunk = allocated_ / chunk_frames_;
    if (!chunks_[chunk])
      chunks_[chunk] = std::make_unique<std::uint8_t[]>(chunk_frames_ * frame_bytes_);
    id = static_cast<FrameId>(allocated_++);
    references_.push_back(0);
  }
  assert(references_[id] == 0);
  references_[id] = 1;
  ++live_;
  return id;
}

bool FrameStore::release(FrameId id) {
  assert(references_[id] > 0);
  if (--references_[id] > 0) return false;
  free_.push_back(id);
  --live_;
  return true;
}

}  // namespace tagflow::replay
