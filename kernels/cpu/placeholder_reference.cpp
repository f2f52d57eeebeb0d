// SPDX-License-Identifier: Apache-2.0
// Implementations arrive with the kernels issue; this file keeps the library non-empty until then.
#include "kernels/cpu/reference.hpp"
