// FrameStore: reference-counted, fixed-size observation frames in stable memory.
//
// Frames live in chunks that are never moved or freed before the store is destroyed, so a thread
// holding a reference may read or write a frame's bytes with no lock held. Everything else
// (allocate, retain, release, counters) is bookkeeping that the owner serializes (Table calls it
// under its mutex). A frame's bytes are written once, by the thread that allocated it, before the
// frame id is published to anyone else; after that they are immutable until the last reference
// is released and the frame is reused.
//
// Errors: allocate() throws std::length_error when max_frames frames are live at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tagflow::replay {

using FrameId = std::uint32_t;
inline constexpr FrameId kNoFrame = 0xFFFFFFFFU;

class FrameStore {
 public:
  FrameStore(std::size_t frame_bytes, std::size_t max_frames);

  [[nodiscard]] std::size_t frame_bytes() const { return frame_bytes_; }
  /// A frame with one reference and unspecified bytes.
  [[nodiscard]] FrameId allocate();
  void retain(FrameId id) { ++references_[id]; }
  /// Drops one reference; the frame is reused once none is left. Returns true then.
  bool release(FrameId id);
  [[nodiscard]] std::uint32_t references(FrameId id) const { return references_[id]; }
  /// Frames with at least one reference.
  [[nodiscard]] std::size_t live() const { return live_; }
  /// Frame ids ever handed out: every id allocate() returned is below this.
  [[nodiscard]] std::size_t ids_issued() const { return allocated_; }

  /// The frame's bytes; valid while the caller holds a reference. Safe without the owner's lock.
  [[nodiscard]] std::uint8_t* data(FrameId id) const {
    return chunks_[id / chunk_frames_].get() + (id % chunk_frames_) * frame_bytes_;
  }

 private:
  std::size_t frame_bytes_;
  std::size_t chunk_frames_;
  std::vector<std::unique_ptr<std::uint8_t[]>> chunks_;  // fixed length; entries set once
  std::vector<std::uint32_t> references_;
  std::vector<FrameId> free_;
  std::size_t allocated_ = 0;  // frame ids ever handed out (high-water mark)
  std::size_t live_ = 0;
};

}  // namespace tagflow::replay
