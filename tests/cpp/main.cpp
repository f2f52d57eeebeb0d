// SPDX-License-Identifier: Apache-2.0
// GoogleTest owns sc_main. Tests that elaborate SystemC modules start a fresh context with
// tests/cpp/systemc_fixture.hpp.
#include <gtest/gtest.h>
#include <systemc>

int sc_main(int argc, char* argv[]) {
  sc_core::sc_report_handler::set_actions("/IEEE_Std_1666/deprecated", sc_core::SC_DO_NOTHING);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
