// SPDX-License-Identifier: Apache-2.0
// The thin SystemC adapter: a loosely-timed b_transport adds the core's latency to `delay`.
#include <gtest/gtest.h>

#include "models/common/tlm_target.hpp"
#include "tests/cpp/systemc_fixture.hpp"
#include "tests/cpp/test_memsys_fixed.hpp"

class NocTlmTarget : public indexsim::test::SystemCTest {};

TEST_F(NocTlmTarget, BTransportAddsTheCoreLatencyToTheDelay) {
  indexsim::test::FixedLatencyMemory core(40000);  // 40 ns
  indexsim::model::MemoryTarget target("mem", core);
  unsigned char data[64] = {};
  tlm::tlm_generic_payload gp;
  gp.set_command(tlm::TLM_READ_COMMAND);
  gp.set_address(4096);
  gp.set_data_ptr(data);
  gp.set_data_length(64);
  sc_core::sc_time delay(10, sc_core::SC_NS);  // the initiator is 10 ns ahead of sc_time_stamp()
  // The socket's forward interface, as a bound initiator would call it.
  auto& fw = static_cast<sc_core::sc_export<tlm::tlm_fw_transport_if<>>&>(target.socket);
  fw->b_transport(gp, delay);
  EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(delay, sc_core::sc_time(50, sc_core::SC_NS));  // 10 ns + 40 ns of core latency
  EXPECT_EQ(core.reads, 1u);
  EXPECT_EQ(core.next_event(), indexsim::model::kNever);
}
