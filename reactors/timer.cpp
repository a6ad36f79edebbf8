#include "reactors/timer.hpp"

#include "reactors/scheduler.hpp"

namespace tagflow::reactors {

Timer::Timer(std::string name, Reactor* owner, Duration offset, Duration period)
    : TriggerBase(std::move(name), owner, ElementKind::kTimer), offset_(offset), period_(period) {}

bool Timer::is_present() const {
  return scheduler_ != nullptr && present_sequence_ == scheduler_->sequence();
}

void Timer::arm(Tag start) {
  next_ = offset_.count() > 0 ? Tag(start.time_ns(), 0).delayed(offset_) : start;
}

void Timer::fire(Tag tag) {
  present_sequence_ = scheduler_->sequence();
  enqueue_all(triggered_);
  next_ = period_.count() > 0 ? Tag(tag.time_ns(), 0).delayed(period_) : Tag::forever();
}

}  // namespace tagflow::reactors
