// SPDX-License-Identifier: Apache-2.0
// libindexsim.so is the static parts of the simulator, linked whole (cmake/install.cmake); a shared
// library needs one source of its own.
namespace indexsim {
const char* shared_library_name() { return "libindexsim"; }
}  // namespace indexsim
