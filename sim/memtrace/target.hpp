// SPDX-License-Identifier: Apache-2.0
// The config section of the memory device behind a bench target, for what a plain trace needs to
// know about it: its clock (to turn cycles into time) and, for a DRAM, its organisation (to turn
// Ramulator address vectors into addresses).
#pragma once

#include <string>

#include "models/common/params.hpp"

namespace indexsim::sim::memtrace {

// The region's own section (`noc.regions[].section`); for the cache and "system", the first cached
// region's, whose device the addresses of a bench land in.
config::Node target_section(const config::Node& hw_root, const std::string& target);

}  // namespace indexsim::sim::memtrace
