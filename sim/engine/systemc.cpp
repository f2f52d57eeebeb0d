// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/systemc.hpp"

#include <exception>
#include <stdexcept>

#include <systemc>

#include "models/common/tlm_link.hpp"
#include "models/external/tlm_region.hpp"

namespace indexsim::sim {

using model::Tick;

// The replay's thread, and the event external targets notify when they answer.
class ScRun::Driver : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Driver);
  explicit Driver(sc_core::sc_module_name name) : sc_core::sc_module(name) { SC_THREAD(main); }

  sc_core::sc_event news;
  std::function<void(const WaitUntil&)> body;
  std::exception_ptr error;
  bool finished = false;
  // Set after a deadlock: the waiting replay is woken to unwind its stack (and free what it holds).
  bool abandon = false;
  struct Abandoned {};

 private:
  void main() {
    const WaitUntil wait_until = [this](Tick t) {
      const Tick now = model::sc_now_ps();
      if (t != model::kNever && t <= now) return now;
      if (t == model::kNever) {
        sc_core::wait(news);
      } else {
        sc_core::wait(sc_core::sc_time::from_value(t - now), news);
      }
      if (abandon) throw Abandoned{};
      return model::sc_now_ps();
    };
    try {
      body(wait_until);
    } catch (const Abandoned&) {
    } catch (...) {
      error = std::current_exception();
    }
    finished = true;
    sc_core::sc_stop();  // an external target's processes may still have events: the run is over
  }
};

tlm::tlm_initiator_socket<>& ScBindings::region(const std::string& name) const {
  for (const auto& [region, dev] : regions_)
    if (region == name || dev->name() == name) return dev->socket();
  std::string known;
  for (const auto& r : regions_) known += (known.empty() ? "" : ", ") + r.first + " (" + r.second->name() + ")";
  throw std::invalid_argument("no external region '" + name + "' (impl tlm_target) in this hardware; it has " +
                              (known.empty() ? std::string("none") : known));
}

ScRun::ScRun() {
  model::fresh_sc_context();
  model::require_ps_resolution();
  // sc_stop() ends every run; SystemC's note that it did is not news.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  driver_ = std::make_unique<Driver>("replay");
}

ScRun::~ScRun() = default;

model::MemoryDevice& ScRun::link(uint32_t slot, model::MemoryDevice& port) {
  links_.push_back(model::linked(port, "processor" + std::to_string(slot) + "_port"));
  return *links_.back();
}

void ScRun::add_region(const std::string& region, model::TlmRegion& dev) {
  dev.socket();
  Driver* d = driver_.get();
  dev.on_news([d] { d->news.notify(sc_core::SC_ZERO_TIME); });
  bindings_.regions_.emplace_back(region, &dev);
}

void ScRun::check_bound() const {
  for (const auto& [region, dev] : bindings_.regions_)
    if (!dev->bound())
      throw std::invalid_argument("region '" + region + "' (" + dev->name() +
                                  ", impl tlm_target) has no target bound to its socket: a program that links the "
                                  "library binds one before the run (RunSpec::bind; examples/systemc), the CLI cannot");
}

void ScRun::run(const std::function<void(const WaitUntil&)>& body) {
  check_bound();
  driver_->body = body;
  sc_core::sc_start();
  if (driver_->error) std::rethrow_exception(driver_->error);
  if (!driver_->finished) {
    // Nothing left to happen and the replay still waits: wake it to unwind, then say why.
    driver_->abandon = true;
    driver_->news.notify(sc_core::SC_ZERO_TIME);
    sc_core::sc_start();
    throw std::runtime_error("replay deadlock under SystemC: kernels left, nothing scheduled, and no external target "
                             "answered the requests it holds");
  }
}

}  // namespace indexsim::sim
