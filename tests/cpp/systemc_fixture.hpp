// SPDX-License-Identifier: Apache-2.0
// Each SystemC test gets a fresh simulation context, so elaborating modules in one test does not
// leak into the next (SystemC 2.3 cannot elaborate twice in one context).
#pragma once

#include <gtest/gtest.h>
#include <systemc>

namespace indexsim::test {

class SystemCTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sc_core::sc_curr_simcontext = new sc_core::sc_simcontext();
    sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  }
};

}  // namespace indexsim::test
