// SPDX-License-Identifier: Apache-2.0
// libsystemc.so's main() calls sc_main; the extension never elaborates, but the symbol must exist
// when Python loads the library.
#include <cstdio>

int sc_main(int, char*[]) {
  std::fprintf(stderr, "indexsim._core does not run SystemC simulations: use the indexsim executable\n");
  return 1;
}
