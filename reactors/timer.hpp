// Timer: a trigger present at start + offset, then every `period` (once when period is zero).
//
// Contract: a member of its reactor (`Timer tick{"tick", this, offset, period};`), not copyable.
// Its events are computed, never queued: it allocates nothing and needs no lock (only the
// scheduler touches it, between tags). A timer whose first tag is after the stop tag never fires.
#pragma once

#include <string>

#include "reactors/trigger.hpp"

namespace tagflow::reactors {

class Timer final : public TriggerBase, public EventSource {
 public:
  Timer(std::string name, Reactor* owner, Duration offset = Duration::zero(),
        Duration period = Duration::zero());

  [[nodiscard]] Duration offset() const { return offset_; }
  [[nodiscard]] Duration period() const { return period_; }
  [[nodiscard]] bool is_present() const;

  [[nodiscard]] Tag next_event_tag() const override { return next_; }
  void fire(Tag tag) override;
  void clear() override { next_ = Tag::forever(); }

 private:
  friend class Environment;
  /// Arms the timer for a run starting at `start`.
  void arm(Tag start);

  Duration offset_;
  Duration period_;
  Tag next_ = Tag::forever();
  std::uint64_t present_sequence_ = 0;
};

}  // namespace tagflow::reactors
