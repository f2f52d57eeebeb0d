// SPDX-License-Identifier: Apache-2.0
// `indexsim trace gen|info|check|dump|export`: make, summarise, verify, print .itr trace files, and
// export their memory accesses as plain traces for DRAMsim3, Ramulator 2 and DRAMSys.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "models/dram/dram_params.hpp"
#include "sim/cli/cli.hpp"
#include "sim/cli/command.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/core/config_load.hpp"
#include "models/common/params.hpp"
#include "models/common/units.hpp"
#include "sim/core/paths.hpp"
#include "sim/core/version.hpp"
#include "sim/memsys/machine.hpp"
#include "sim/memsys/memory_system.hpp"
#include "sim/memtrace/export.hpp"
#include "sim/memtrace/plain_trace.hpp"
#include "sim/memtrace/target.hpp"
#include "traces/generators/emulate.hpp"
#include "traces/generators/model_shape.hpp"
#include "traces/trace_data.hpp"
#include "traces/trace_io.hpp"

namespace indexsim::cli {

namespace {
namespace fs = std::filesystem;
using namespace indexsim::trace;

const char* kUsage =
    "usage: indexsim trace <subcommand> [options]     (indexsim trace <subcommand> --help: its options)\n\n"
    "subcommands:\n"
    "  gen\tan emulated step of a workload as a trace file\n"
    "  info\tkernels, tensors and totals of a trace\n"
    "  check\tverify a trace file (CRCs, bounds, references)\n"
    "  dump\tprint a trace's kernels and accesses\n"
    "  export\ta trace's memory accesses as a plain trace for DRAMsim3, Ramulator 2 or DRAMSys\n";

std::string flops_text(const KindTotals& k) {
  std::ostringstream os;
  bool any = false;
  for (int p = 0; p < kPrecisionCount; ++p)
    if (k.flops[p] != 0) {
      os << (any ? " " : "") << to_string(static_cast<Precision>(p)) << ":" << std::scientific << std::setprecision(3)
         << k.flops[p];
      any = true;
    }
  return any ? os.str() : "-";
}

int gen(const Args& args) {
  Cli a("trace gen", "An emulated step of a workload, written as a trace file. The hardware decides the kernels'\n"
                     "launch shapes (SMs, shared memory, precisions).");
  a.option("--workload NAME|FILE", "workload preset or YAML file")
      .option("-o,--output FILE", "the trace file to write")
      .option("--phase decode|prefill", "decode (default) or a prefill chunk")
      .option("--context N", "tokens of context")
      .option("--batch N", "sequences")
      .option("--queries N", "new tokens a sequence (decode)")
      .option("--chunk N", "prefill chunk, tokens")
      .option("--seed N", "the step's seed")
      .option("--hardware NAME|FILE", "hardware preset or YAML file (default h200)")
      .repeated("--set K=V", "override one key: workload.K=V, step.K=V or hardware.K=V");
  if (!a.parse(args)) return 0;
  const std::string workload = a.value("--workload");
  if (workload.empty()) throw std::invalid_argument("gen needs --workload NAME|FILE");
  const std::string out = a.value("-o");
  if (out.empty()) throw std::invalid_argument("gen needs -o FILE");
  StepParams p;
  const std::string phase = a.value("--phase", "decode");
  if (phase != "decode" && phase != "prefill")
    throw std::invalid_argument("--phase = '" + phase + "': must be decode or prefill");
  p.phase = phase == "decode" ? Phase::decode : Phase::prefill;
  p.context = a.u64("--context", p.context);
  p.batch = a.u32("--batch", p.batch);
  p.queries = a.u32("--queries", p.queries);
  p.chunk_tokens = a.u32("--chunk", p.chunk_tokens);
  p.seed = a.u64("--seed", p.seed);
  const std::string hardware = a.value("--hardware", "h200");
  const auto overrides = a.values("--set");
  sim::require_prefix(overrides, {"workload", "step", "hardware"}, "trace gen");
  sim::apply_step_sets(p, overrides);
  validate(p);
  const auto t0 = std::chrono::steady_clock::now();
  auto doc = sim::load_document("workloads", workload, overrides);
  ModelShape shape = load_model_shape(doc->root());
  check_positions(p, shape.max_position_embeddings, shape.name);
  doc->check_unused();
  shape.resolved = doc->resolved();
  // The launch shapes follow the device, as the libraries' do: read its limits from the preset.
  LaunchLimits limits;
  sim::RunSpec hs;
  hs.hardware = hardware;
  for (const auto& o : overrides)
    if (o.rfind("hardware.", 0) == 0) hs.sets.push_back(o);
  hs.build_trace = [&limits](const LaunchLimits& l) {
    limits = l;
    return TraceData{};
  };
  const auto hw_config = sim::resolve(hs);
  TraceData t = emulate_step(shape, p, limits);
  t.metadata["launch_hardware"] = hw_config["hardware"].value("name", hardware);
  t.metadata["launch_limits"] = {{"units", limits.units}, {"smem_per_cta_bytes", limits.smem_per_cta_bytes},
                                 {"warpgroup_mma", limits.warpgroup_mma}};
  write_trace(t, out);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "wrote " << out << ": " << t.kernels.size() << " kernels, " << t.accesses.size() << " access records, "
            << human_bytes(double(fs::file_size(out))) << " in " << std::fixed << std::setprecision(2) << secs << " s\n";
  return 0;
}

int info(const Args& args) {
  Cli a("trace info", "Kernels, tensors and totals of a trace file.");
  a.positionals("file", "the trace (.itr)").flag("--json", "print JSON");
  if (!a.parse(args)) return 0;
  const bool json = a.has("--json");
  const auto& files = a.positional();
  if (files.size() != 1) throw std::invalid_argument("info needs one FILE");
  Reader r(files[0]);
  Summary s;
  while (auto rec = r.next()) s.add(*rec);
  if (json) {
    nlohmann::json j = s.to_json();
    j["metadata"] = r.metadata();
    j["file_bytes"] = fs::file_size(files[0]);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  const auto& md = r.metadata();
  std::cout << files[0] << " (format version " << r.version() << ", " << human_bytes(double(fs::file_size(files[0])))
            << ", " << r.block_index() << " blocks)\n";
  for (const auto& [k, v] : md.items())
    if (k != "workload_config" && k != "layer_kinds") std::cout << "  " << k << ": " << v.dump() << "\n";
  std::cout << "\nkernel kind      kernels       CTAs        read     written  FLOPs\n";
  auto row = [](const std::string& name, const KindTotals& k) {
    std::cout << std::left << std::setw(14) << name << std::right << std::setw(10) << k.kernels << std::setw(11)
              << k.ctas << std::setw(12) << human_bytes(double(k.bytes_read)) << std::setw(12)
              << human_bytes(double(k.bytes_written)) << "  " << flops_text(k) << "\n";
  };
  for (const auto& [kind, k] : s.by_kind) row(kind, k);
  row("total", s.all);
  std::cout << "\ntensor class   tensors   footprint        read     written\n";
  for (const auto& [cls, c] : s.by_class)
    std::cout << std::left << std::setw(14) << cls << std::right << std::setw(8) << c.tensors << std::setw(12)
              << human_bytes(double(c.footprint_bytes)) << std::setw(12) << human_bytes(double(c.bytes_read))
              << std::setw(12) << human_bytes(double(c.bytes_written)) << "\n";
  return 0;
}

int check(const Args& args) {
  Cli a("trace check", "Verify a trace file: its CRCs, bounds and references.");
  a.positionals("file", "the trace (.itr)");
  if (!a.parse(args)) return 0;
  const auto& files = a.positional();
  if (files.size() != 1) throw std::invalid_argument("check needs one FILE");
  try {
    Reader r(files[0]);
    while (r.next()) {
    }
    std::cout << files[0] << ": OK, " << r.block_index() << " blocks, header and every block CRC match\n";
    return 0;
  } catch (const TraceError& e) {
    std::cerr << "indexsim trace check: DEFECT: " << e.what() << "\n";
    return 1;
  }
}

void dump_record(const Record& rec, std::ostream& os) {
  if (const auto* t = std::get_if<TensorRecord>(&rec)) {
    os << "tensor " << t->id << " " << t->name << " class=" << to_string(t->cls) << " layer=" << t->layer
       << " bytes=" << t->bytes;
  } else if (const auto* k = std::get_if<KernelRecord>(&rec)) {
    os << "kernel " << k->id << " " << k->name << " kind=" << to_string(k->kind) << " layer=" << k->layer << " stream=" << k->stream
       << " grid=" << k->grid[0] << "x" << k->grid[1] << "x" << k->grid[2] << " block=" << k->block[0] << "x"
       << k->block[1] << "x" << k->block[2] << " smem=" << k->smem_bytes << " regs=" << k->regs_per_thread;
    for (int p = 0; p < kPrecisionCount; ++p)
      if (k->flops[p] != 0) os << " flops." << to_string(static_cast<Precision>(p)) << "=" << k->flops[p];
    if (k->measured_ns) os << " measured_ns=" << k->measured_ns;
    os << " deps=[";
    for (size_t i = 0; i < k->deps.size(); ++i) os << (i ? "," : "") << k->deps[i];
    os << "]";
  } else if (const auto* c = std::get_if<CtaRecord>(&rec)) {
    os << "cta kernel=" << c->kernel << " cta=" << c->cta << " sm=" << c->sm << " start_ns=" << c->start_ns
       << " end_ns=" << c->end_ns;
  } else if (const auto* x = std::get_if<AccessRecord>(&rec)) {
    os << "access kernel=" << x->kernel << " ctas=" << x->cta_first << "+" << x->cta_count << " "
       << (x->write ? "write" : "read") << " tensor=" << x->tensor << " base=" << x->base
       << " cta_stride=" << x->cta_stride_bytes;
    if (x->kind == AccessRecord::Kind::strided) {
      os << " strided elem=" << x->elem_bytes << " count=" << x->count << " stride=" << x->stride_bytes;
    } else {
      os << " gather row_bytes=" << x->row_bytes << " pitch=" << x->row_pitch_bytes << " rows(" << x->rows.size()
         << ")=[";
      for (size_t i = 0; i < x->rows.size() && i < 8; ++i) os << (i ? "," : "") << x->rows[i];
      os << (x->rows.size() > 8 ? ",...]" : "]");
    }
    os << " bytes=" << x->total_bytes();
  }
}

int dump(const Args& args) {
  Cli a("trace dump", "Print a trace's kernels and their accesses.");
  a.positionals("file", "the trace (.itr)").option("--limit N", "at most N kernels");
  if (!a.parse(args)) return 0;
  const uint64_t limit = a.u64("--limit", UINT64_MAX);
  const auto& files = a.positional();
  if (files.size() != 1) throw std::invalid_argument("dump needs one FILE");
  Reader r(files[0]);
  std::cout << "# metadata " << r.metadata().dump() << "\n";
  uint64_t n = 0;
  for (; n < limit; ++n) {
    const uint64_t off = r.offset();
    auto rec = r.next();
    if (!rec) break;
    std::cout << "@" << off << " ";
    dump_record(*rec, std::cout);
    std::cout << "\n";
  }
  return 0;
}

// Plain requests for another DRAM simulator. --hardware bounds the placement by the target's
// capacity and gives the DRAM organisation that ramulator-readwrite vectors need.
int export_plain(const Args& args) {
  Cli a("trace export", "A trace's memory accesses as a plain trace for DRAMsim3, Ramulator 2 or DRAMSys.");
  a.positionals("file", "the trace (.itr)")
      .option("--format dramsim3|ramulator-loadstore|ramulator-readwrite|dramsys", "the plain trace's format")
      .option("-o,--output OUT", "the file to write")
      .option("--kernel NAME|KIND", "only this kernel, or kernels of this kind")
      .option("--layer N", "only this layer's kernels")
      .option("--limit N", "at most N requests")
      .option("--bytes B", "bytes a request (default 64)")
      .option("--interval-cycles N", "cycles between requests")
      .option("--hardware NAME|FILE", "map addresses to the DRAM organisation of this hardware")
      .option("--target T", "with --hardware: the memory region (default: the first of the address map)")
      .repeated("--set K=V", "with --hardware: hardware.K=V");
  if (!a.parse(args)) return 0;
  namespace mt = sim::memtrace;
  const std::string format_s = a.value("--format");
  const std::string out = a.value("-o");
  mt::ExportOptions o;
  o.kernel = a.value("--kernel");
  o.have_layer = a.has("--layer");
  if (o.have_layer) {
    const std::string l = a.value("--layer");
    try {
      size_t used = 0;
      o.layer = std::stoi(l, &used);
      if (used != l.size()) throw std::invalid_argument(l);
    } catch (const std::exception&) {
      throw std::invalid_argument("--layer '" + l + "': must be an integer");
    }
  }
  o.limit = a.u64("--limit", 0);
  o.bytes = a.u32("--bytes", 64);
  o.interval_cycles = a.u64("--interval-cycles", 0);
  const std::string hw = a.value("--hardware");
  std::string target = a.value("--target");  // default: the first region of the address map
  const auto sets = a.values("--set");
  const auto& files = a.positional();
  if (files.size() != 1) throw std::invalid_argument("export needs one FILE");
  if (format_s.empty()) throw std::invalid_argument("export needs --format");
  if (out.empty()) throw std::invalid_argument("export needs -o OUT");
  const mt::Format format = mt::parse_format(format_s);

  std::unique_ptr<mt::AddressVectorCodec> codec;
  if (!hw.empty()) {
    sim::require_prefix(sets, {"hardware"}, "trace export");
    auto doc = sim::load_document("hardware", hw, sets);
    auto root = doc->root();
    if (target.empty()) target = sim::read_regions(root).front().name;
    const config::Node section = mt::target_section(root, target);
    auto device = sim::make_target(root, target);
    o.capacity_bytes = device->capacity_bytes();
    const sim::SystemLayout layout = sim::read_layout(root);
    if (!layout.processors.empty()) {  // the requests as the first processor sizes them
      const sim::Machine machine = sim::build_machine(root, *device);
      o.line_bytes = machine.main().line_bytes();
      o.sector_bytes = machine.main().sector_bytes();
    }
    if (format == mt::Format::RamulatorReadWrite)
      codec = std::make_unique<mt::AddressVectorCodec>(model::dram::load_dram_params(section));
  } else if (!sets.empty() || a.has("--target")) {
    throw std::invalid_argument("--target and --set need --hardware");
  } else if (format == mt::Format::RamulatorReadWrite) {
    throw std::invalid_argument("ramulator-readwrite needs --hardware: its address vectors follow the DRAM organisation");
  }

  const auto t0 = std::chrono::steady_clock::now();
  const TraceData t = read_trace(files[0]);
  mt::PlainTraceWriter w(out, format, codec.get());
  const auto st = mt::expand_accesses(t, o, [&w](const mt::PlainRequest& r) { w.write(r); });
  w.close();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "wrote " << out << ": " << st.requests << " " << format_s << " requests of " << o.bytes << " B ("
            << st.reads << " reads, " << st.writes << " writes) from " << st.kernels << " kernels in " << std::fixed
            << std::setprecision(2) << secs << " s\n";
  return 0;
}

int trace_command(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    // Asked for, the overview is the output (stdout, status 0); otherwise it explains a usage error.
    (args.empty() ? std::cerr : std::cout) << kUsage;
    return args.empty() ? 2 : 0;
  }
  const Args a(args.begin() + 1, args.end());
  const std::string sub = args[0];
  if (sub == "gen") return gen(a);
  if (sub == "info") return info(a);
  if (sub == "check") return check(a);
  if (sub == "dump") return dump(a);
  if (sub == "export") return export_plain(a);
  std::cerr << "indexsim trace: unknown subcommand '" << sub << "'\n" << kUsage;
  return 2;
}
}  // namespace

INDEXSIM_COMMAND("trace", "generate, summarise, check, print and export .itr traces (gen|info|check|dump|export)", trace_command);

}  // namespace indexsim::cli
