// SPDX-License-Identifier: Apache-2.0
// libsystemc.so's main() calls sc_main, so loading the library needs the symbol even though the
// Python extension never elaborates; the package loads this library with RTLD_GLOBAL first.
#include <cstdio>

extern "C" int sc_main(int, char*[]) {  // as <systemc> declares it
  std::fprintf(stderr, "indexsim._core does not run SystemC simulations: use the indexsim executable\n");
  return 1;
}
