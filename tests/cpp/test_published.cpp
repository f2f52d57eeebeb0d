// SPDX-License-Identifier: Apache-2.0
// `validate --published` on a small fixture: the error of a case is (simulated - measured) /
// measured, the MAPE of a group the mean |error| of its cases, the overall MAPE the mean over all
// cases that ran; a case the kernel cannot run is reported by name with the limit it breaks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/common/params.hpp"
#include "sim/validation/published.hpp"
#include "traces/generators/emulate.hpp"
#include "traces/generators/launch.hpp"

using namespace indexsim;
using namespace indexsim::sim;

namespace {

std::string write_fixture(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p.string();
}

const char* kTwoCases = R"(description: two-case fixture
mode: fast
cases:
  - name: small-copy
    group: memory
    kernel: copy
    hardware: h200
    shape: {bytes: 4194304}
    measured: {value: 1000, unit: GB/s}
    source: fixture
    conditions: none
  - name: small-gemm
    group: gemm
    kernel: gemm
    hardware: h200
    shape: {m: 256, n: 512, k: 1024, dtype: bf16}
    measured: {value: 50, unit: TFLOP/s}
    source: fixture
    conditions: none
)";

// The two-case fixture with its copy case's shape replaced, written to `name`.
std::string fixture_with_copy_shape(const std::string& name, const std::string& shape) {
  std::string text = kTwoCases;
  text.replace(text.find("{bytes: 4194304}"), 16, shape);
  return write_fixture(name, text);
}

// The copy case of such a fixture as the kernel bench emulates it, and the bytes it reads and writes.
struct CopyTrace {
  KernelCase kernel;
  trace::TraceData trace;
  uint64_t read = 0, written = 0;
};
CopyTrace copy_case_trace(const std::string& name, const std::string& shape) {
  CopyTrace c;
  c.kernel = load_published_cases(fixture_with_copy_shape(name, shape)).at(0).kernel;
  c.trace = build_kernel_trace(c.kernel, trace::LaunchLimits{});
  for (const auto& a : c.trace.accesses) (a.write ? c.written : c.read) += a.total_bytes();
  return c;
}

}  // namespace

TEST(Published, ErrorsAndMapeFollowFromTheSimulatedFigures) {
  const std::string f = write_fixture("indexsim_published_two.yaml", kTwoCases);
  const PublishedReport rep = run_published(f, "", "");
  ASSERT_EQ(rep.cases.size(), 2u);
  ASSERT_EQ(rep.failed, 0u);
  // Each case's simulated figure is the kernel bench's, in the case's unit.
  const auto cases = load_published_cases(f);
  const KernelRun copy = run_kernel_case(cases[0].kernel, "h200", {}, true);
  const KernelRun gemm = run_kernel_case(cases[1].kernel, "h200", {}, true);
  const double copy_GBps = 2.0 * 4194304 / (copy.kernel_ns * 1e-9) / 1e9;          // read + written
  const double gemm_TFLOPs = 2.0 * 256 * 512 * 1024 / (gemm.kernel_ns * 1e-9) / 1e12;  // 2mnk
  EXPECT_DOUBLE_EQ(rep.cases[0].simulated, copy_GBps);
  EXPECT_DOUBLE_EQ(rep.cases[1].simulated, gemm_TFLOPs);
  const double e0 = (copy_GBps - 1000) / 1000, e1 = (gemm_TFLOPs - 50) / 50;
  EXPECT_DOUBLE_EQ(rep.cases[0].error, e0);
  EXPECT_DOUBLE_EQ(rep.cases[1].error, e1);
  EXPECT_DOUBLE_EQ(rep.mape_by_group.at("memory"), std::fabs(e0));
  EXPECT_DOUBLE_EQ(rep.mape_by_group.at("gemm"), std::fabs(e1));
  EXPECT_DOUBLE_EQ(rep.mape, (std::fabs(e0) + std::fabs(e1)) / 2);
  EXPECT_DOUBLE_EQ(rep.max_abs_error, std::max(std::fabs(e0), std::fabs(e1)));
  // Filters.
  EXPECT_EQ(run_published(f, "small-gemm", "").cases.size(), 1u);
  EXPECT_EQ(run_published(f, "", "memory").cases.at(0).name, "small-copy");
  EXPECT_THROW(run_published(f, "no-such-case", ""), std::invalid_argument);
}

// Cases are separate runs: on two threads each comes out bit for bit as on one, in file order, and
// so do the MAPEs summed in that order.
TEST(Published, TheReportDoesNotDependOnTheJobs) {
  const std::string f = write_fixture("indexsim_published_jobs.yaml", kTwoCases);
  std::vector<size_t> started;
  const PublishedReport one = run_published(f, "", "");
  const PublishedReport two = run_published(f, "", "", [&](size_t i, size_t, const std::string&) { started.push_back(i); }, 2);
  ASSERT_EQ(two.cases.size(), one.cases.size());
  for (size_t i = 0; i < one.cases.size(); ++i) {
    EXPECT_EQ(two.cases[i].name, one.cases[i].name);
    EXPECT_EQ(two.cases[i].simulated, one.cases[i].simulated);
    EXPECT_EQ(two.cases[i].error, one.cases[i].error);
  }
  EXPECT_EQ(two.mape, one.mape);
  EXPECT_EQ(two.mape_by_group, one.mape_by_group);
  std::sort(started.begin(), started.end());
  EXPECT_EQ(started, (std::vector<size_t>{0, 1}));  // each case announced once
}

TEST(Published, ACaseThatIsNotComparableIsShownButLeftOutOfTheMape) {
  // MAPE over the comparable cases only: the copy's |error| alone; the GEMM's figure and error are
  // still reported, with the reason.
  std::string text = kTwoCases;
  text += "    not_comparable: \"a harness that batches calls\"\n";
  const std::string f = write_fixture("indexsim_published_nc.yaml", text);
  const PublishedReport rep = run_published(f, "", "");
  ASSERT_EQ(rep.cases.size(), 2u);
  EXPECT_EQ(rep.not_comparable, 1u);
  EXPECT_EQ(rep.cases[1].not_comparable, "a harness that batches calls");
  EXPECT_GT(rep.cases[1].simulated, 0.0);
  EXPECT_DOUBLE_EQ(rep.mape, std::fabs(rep.cases[0].error));
  EXPECT_DOUBLE_EQ(rep.max_abs_error, std::fabs(rep.cases[0].error));
  EXPECT_EQ(rep.mape_by_group.count("gemm"), 0u);
  EXPECT_NE(rep.table().find("not in the MAPE: small-gemm: a harness that batches calls"), std::string::npos) << rep.table();
  EXPECT_NE(rep.markdown().find("small-gemm (not in the MAPE)"), std::string::npos);
  // An empty reason is refused, naming the key.
  std::string empty = kTwoCases;
  empty += "    not_comparable: \"\"\n";
  try {
    load_published_cases(write_fixture("indexsim_published_nc_empty.yaml", empty));
    FAIL();
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("not_comparable"), std::string::npos) << e.what();
  }
}

namespace {
// Two harnesses and the same 1 KiB all-reduce over 8 GPUs under each (h200 preset).
const char* kHarnessCases = R"(description: harness fixture
mode: fast
harnesses:
  slow-host: {host_us_per_gpu: 1000, source: fixture}
  fast-host: {host_us_per_gpu: 0.001, source: fixture}
cases:
  - name: under-slow
    group: communication
    kernel: all_reduce
    hardware: h200
    shape: {bytes: 1024, gpus: 8}
    measured: {value: 0.1, unit: GB/s}
    source: fixture
    conditions: none
    harness: slow-host
  - name: under-fast
    group: communication
    kernel: all_reduce
    hardware: h200
    shape: {bytes: 1024, gpus: 8}
    measured: {value: 0.1, unit: GB/s}
    source: fixture
    conditions: none
    harness: fast-host
)";
}  // namespace

TEST(Published, AHarnessBoundsACollectiveFromBelowByItsHostLoop) {
  // time = max(simulated kernel, gpus x host_us_per_gpu); busbw = bytes x 2(n-1)/n / time. A loop of
  // 8 x 1000 us sets the figure of a 1 KiB all-reduce (microseconds on the GPU); 8 x 0.001 us does not.
  const std::string f = write_fixture("indexsim_published_harness.yaml", kHarnessCases);
  const PublishedReport rep = run_published(f, "", "");
  ASSERT_EQ(rep.cases.size(), 2u);
  ASSERT_EQ(rep.failed, 0u);
  const CaseOutcome& slow = rep.cases[0];
  const CaseOutcome& fast = rep.cases[1];
  const double bus_bytes = 1024.0 * 2 * 7 / 8;
  EXPECT_TRUE(slow.host_bound);
  EXPECT_LT(slow.kernel_us, 8000.0);
  EXPECT_DOUBLE_EQ(slow.simulated, bus_bytes / 8000e-6 / 1e9);
  EXPECT_FALSE(fast.host_bound);
  EXPECT_DOUBLE_EQ(fast.kernel_us, slow.kernel_us);  // the harness leaves the kernel alone
  EXPECT_DOUBLE_EQ(fast.simulated, bus_bytes / (fast.kernel_us * 1e-6) / 1e9);
  EXPECT_NE(rep.table().find("under-slow"), std::string::npos);
  EXPECT_NE(rep.table().find("host-bound: under-slow"), std::string::npos) << rep.table();
  EXPECT_EQ(rep.table().find("host-bound: under-fast"), std::string::npos) << rep.table();
  EXPECT_EQ(rep.to_json()["cases"][0]["harness"]["host_bound"], true);
}

TEST(Published, AHarnessMustBeDeclaredAndBoundACollective) {
  const auto expect_error = [](const std::string& text, const std::string& what) {
    try {
      load_published_cases(write_fixture("indexsim_published_harness_bad.yaml", text));
      FAIL() << what;
    } catch (const config::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("harness"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  std::string unknown = kHarnessCases;
  unknown.replace(unknown.find("harness: fast-host"), 18, "harness: no-host");
  expect_error(unknown, "no-host");
  std::string on_gemm = kTwoCases;
  on_gemm.replace(on_gemm.find("cases:"), 6, "harnesses:\n  h: {host_us_per_gpu: 1, source: fixture}\ncases:");
  on_gemm += "    harness: h\n";
  expect_error(on_gemm, "collective");
}

TEST(Published, ACaseTheKernelCannotRunIsNamedWithTheLimit) {
  // DeepGEMM keeps all K-scales of B in shared memory: at K = 2^23 they alone exceed 227 KiB.
  std::string text = kTwoCases;
  text += R"(  - name: huge-k
    group: gemm
    kernel: gemm
    hardware: h800
    shape: {m: 64, n: 128, k: 8388608, dtype: fp8}
    measured: {value: 1, unit: TFLOP/s}
    source: fixture
    conditions: none
)";
  const std::string f = write_fixture("indexsim_published_bad.yaml", text);
  const PublishedReport rep = run_published(f, "huge-k", "");
  ASSERT_EQ(rep.failed, 1u);
  const std::string& why = rep.cases.at(0).failure;
  EXPECT_NE(why.find("case huge-k"), std::string::npos) << why;
  EXPECT_NE(why.find("shared memory"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos);
}

TEST(Published, AnUnknownShapeKeyIsAConfigErrorNamingIt) {
  std::string text = kTwoCases;
  const auto at = text.find("{bytes: 4194304}");
  text.replace(at, 16, "{bytes: 4194304, bytez: 1}");
  const std::string f = write_fixture("indexsim_published_key.yaml", text);
  try {
    load_published_cases(f);
    FAIL();
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bytez"), std::string::npos) << e.what();
  }
}

// A copy case may launch as the measured benchmark did: BabelStream's Copy moves one double a
// thread in CTAs of 1024 threads, so 2^25 doubles take 2^25 / 1024 = 32,768 CTAs, each reading its
// 8 KiB (1024 x 8 B) and writing 8 KiB, every CTA 8 KiB further on.
TEST(Published, ACopyCaseLaunchesItsBenchmarksThreadsAndVectorWidth) {
  const CopyTrace c = copy_case_trace("indexsim_published_babel.yaml", "{bytes: 268435456, threads: 1024, vector_bytes: 8}");
  ASSERT_EQ(c.trace.kernels.size(), 1u);
  const auto& k = c.trace.kernels[0];
  EXPECT_EQ(k.cta_count(), 32768u);
  EXPECT_EQ(k.threads_per_cta(), 1024u);
  for (const auto& a : c.trace.accesses) {
    if (a.cta_count > 1) {
      EXPECT_EQ(a.cta_stride_bytes, 8192);
    }
    EXPECT_EQ(a.bytes_per_cta() % 8192, 0u);
  }
  EXPECT_EQ(c.read, 268435456u);
  EXPECT_EQ(c.written, 268435456u);
}

// STREAM's Add reads two arrays and writes a third: a copy case with `sources: 2` reads 2 x bytes
// and writes bytes, and its figure counts all three arrays (3 x bytes); its Dot reads two.
TEST(Published, AnAddCaseReadsTwoArraysAndWritesOne) {
  const CopyTrace c = copy_case_trace("indexsim_published_add.yaml", "{bytes: 1048576, sources: 2, threads: 1024, vector_bytes: 8}");
  ASSERT_EQ(c.trace.kernels.size(), 1u);
  EXPECT_EQ(c.trace.kernels[0].name, "add");
  EXPECT_EQ(c.trace.tensors.size(), 3u);
  EXPECT_EQ(c.read, 2u * 1048576u);
  EXPECT_EQ(c.written, 1048576u);
  EXPECT_DOUBLE_EQ(nominal_bytes(c.kernel), 3.0 * 1048576);
  KernelCase dot = c.kernel;
  dot.kernel = "read";
  EXPECT_DOUBLE_EQ(nominal_bytes(dot), 2.0 * 1048576);
}

// gpu-stream's init writes one double a thread and reads nothing: a copy case with `sources: 0`
// writes `bytes` once, reads 0, and its figure counts that one array. Its grid is N / 1024 + 1
// CTAs of 1024 threads for N = 2^27 + 2 doubles: 131,073 CTAs, beyond the 65,535 of a grid's y
// dimension (x takes 2^31 - 1), the last one moving the 16 B left over.
TEST(Published, AFillCaseWritesOneArrayAndReadsNothing) {
  const CopyTrace c = copy_case_trace("indexsim_published_fill.yaml",
                                      "{bytes: 1073741840, sources: 0, ctas: 131073, threads: 1024, vector_bytes: 8}");
  ASSERT_EQ(c.trace.kernels.size(), 1u);
  EXPECT_EQ(c.trace.kernels[0].name, "fill");
  EXPECT_EQ(c.trace.kernels[0].cta_count(), 131073u);
  EXPECT_EQ(c.trace.tensors.size(), 1u);
  EXPECT_EQ(c.read, 0u);
  EXPECT_EQ(c.written, 1073741840u);
  EXPECT_DOUBLE_EQ(nominal_bytes(c.kernel), 1073741840.0);
  // A read-only kernel with nothing to read is refused, naming the key.
  try {
    const std::string f = fixture_with_copy_shape("indexsim_published_fill_read.yaml", "{bytes: 4096, sources: 0}");
    std::string yaml;
    {
      std::ifstream in(f);
      yaml.assign(std::istreambuf_iterator<char>(in), {});
    }
    yaml.replace(yaml.find("kernel: copy"), 12, "kernel: read");
    load_published_cases(write_fixture("indexsim_published_fill_read.yaml", yaml));
    ADD_FAILURE() << "a read of 0 sources was accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sources"), std::string::npos) << e.what();
  }
}

// `launches: 2` (gpu-stream times two launches and halves them): the kernel twice on the same
// tensors, the second after the first, each with the first's accesses; the figure is the time from
// the first CTA to the last over 2, simulated without segment reuse, so the second launch meets the
// L2 the first left: a 64 MiB copy (1.3 H200 L2s) ends with ~50 MB dirty, which the second pays
// (3 % and more over the first launch's time; the mean above the first). 0 and 17 are refused.
TEST(Published, LaunchesRunTheKernelBackToBackOnItsBuffersAndTheFigureIsTheirMean) {
  const std::string shape = "{bytes: 67108864, threads: 1024, vector_bytes: 8";
  const CopyTrace one = copy_case_trace("indexsim_published_l1.yaml", shape + "}");
  const CopyTrace two = copy_case_trace("indexsim_published_l2.yaml", shape + ", launches: 2}");
  ASSERT_EQ(two.trace.kernels.size(), 2u);
  EXPECT_EQ(two.trace.kernels[1].deps, std::vector<uint32_t>{0});
  EXPECT_EQ(two.trace.kernels[1].cta_count(), two.trace.kernels[0].cta_count());
  EXPECT_EQ(two.trace.tensors.size(), one.trace.tensors.size());
  EXPECT_EQ(two.read, 2 * one.read);
  EXPECT_EQ(two.written, 2 * one.written);
  const KernelRun r2 = run_kernel_case(two.kernel, "h200", {}, true, "");
  ASSERT_EQ(r2.run.kernels.size(), 2u);
  const auto& k = r2.run.kernels;
  EXPECT_DOUBLE_EQ(r2.kernel_ns, (k[1].end_ns - k[0].start_ns) / 2);
  EXPECT_GT(k[1].duration_ns(), 1.03 * k[0].duration_ns());  // reuse would have copied the first
  EXPECT_GT(r2.kernel_ns, k[0].duration_ns());
  for (const char* bad : {"0", "17"}) {
    try {
      load_published_cases(fixture_with_copy_shape("indexsim_published_l3.yaml", shape + ", launches: " + bad + "}"));
      ADD_FAILURE() << bad;
    } catch (const config::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("launches"), std::string::npos) << e.what();
    }
  }
}

// BabelStream sizes its Dot's grid from the device: 4 CTAs an SM, 4 x 132 = 528 on a 132-SM GPU (a
// grid-stride loop over 2048 chunks of 8 KiB, more than the grid).
TEST(Published, AGridPerSmFollowsTheGpusSmCount) {
  const CopyTrace c = copy_case_trace("indexsim_published_persm.yaml", "{bytes: 16777216, ctas_per_sm: 4, threads: 1024, vector_bytes: 8}");
  trace::LaunchLimits a100;
  a100.units = 108;
  EXPECT_EQ(c.trace.kernels.at(0).cta_count(), 4u * trace::LaunchLimits{}.units);
  EXPECT_EQ(build_kernel_trace(c.kernel, a100).kernels.at(0).cta_count(), 4u * 108u);
}

TEST(Published, ACopyCasesThreadsVectorWidthAndSourcesAreChecked) {
  for (const auto& [shape, key] : {std::pair<std::string, std::string>{"threads: 1000", "threads"},
                                   {"threads: 2048", "threads"},
                                   {"vector_bytes: 12", "vector_bytes"},
                                   {"vector_bytes: 64", "vector_bytes"},
                                   {"sources: 3", "sources"},
                                   {"ctas: 8, ctas_per_sm: 4", "ctas_per_sm"}}) {
    try {
      load_published_cases(fixture_with_copy_shape("indexsim_published_vec.yaml", "{bytes: 4194304, " + shape + "}"));
      ADD_FAILURE() << shape;
    } catch (const config::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

// DeepGEMM's heuristic (get_best_configs): M=64, N=2112 has 132 tiles of 64x16 = one full wave on
// 132 SMs, which beats every wider block (one wave too, but less full: 88 tiles at BN=24); the
// deepest pipeline that fits 227 KiB, 8 stages: D tile 64·16·2 + 8 × (A 64·128 + A scales 64·4 +
// B 16·128) + B scales ceil(7168/128)·4 (16 divides 128: one scale a K block) + barriers 8·16 B;
// 256 threads (one math warpgroup); no multicast below m = 512.
TEST(Launch, DeepGemmPicksTheFullestSingleWave) {
  trace::GemmProblem p;
  p.m = 64, p.n = 2112, p.k = 7168, p.precision = trace::Precision::fp8;
  const trace::LaunchLimits hopper;
  const auto g = trace::plan_gemm(p, hopper);
  EXPECT_EQ(g.library, "deepgemm-fp8");
  EXPECT_EQ(g.block_m, 64u);
  EXPECT_EQ(g.block_n, 16u);
  EXPECT_EQ(g.tiles, 132u);
  EXPECT_EQ(g.stages, 8u);
  EXPECT_EQ(g.smem_bytes, trace::deepgemm_smem_bytes(8, 7168, 64, 16));
  EXPECT_EQ(g.smem_bytes, 64u * 16 * 2 + 8 * (64 * 128 + 64 * 4 + 16 * 128) + 56 * 4 + 8 * 16);
  EXPECT_EQ(g.threads, 256u);
  EXPECT_EQ(g.multicast, 1u);
  // Fewer SMs: the same problem on 114 SMs needs two waves whatever the block, so the fuller last
  // wave wins.
  trace::LaunchLimits pcie = hopper;
  pcie.units = 114;
  EXPECT_LE(trace::plan_gemm(p, pcie).waves(114), 2u);
}

// A100: no wgmma, 163 KiB per CTA: CUTLASS's 128x256x32 three-stage tile (72 KiB) fits, so every
// GEMM launches (the Hopper 192 KiB tile did not).
TEST(Launch, AmpereGemmFitsItsSharedMemory) {
  trace::LaunchLimits a100;
  a100.warpgroup_mma = false;
  a100.native[size_t(trace::Precision::fp8)] = false;
  a100.smem_per_cta_bytes = 163 * 1024;
  a100.units = 108;
  trace::GemmProblem p;
  p.m = p.n = p.k = 8192;
  p.precision = trace::Precision::fp8;  // no native FP8 on A100: not DeepGEMM's kernel
  const auto g = trace::plan_gemm(p, a100);
  EXPECT_EQ(g.library, "cutlass");
  EXPECT_LE(g.smem_bytes, a100.smem_per_cta_bytes);
  EXPECT_EQ(g.threads, 256u);
}

// A GEMM benchmark at a precision the GPU lacks is refused by name (it would time another kernel).
TEST(Launch, AGemmAtAPrecisionTheGpuLacksIsRefused) {
  trace::LaunchLimits hopper;  // no FP4 before Blackwell
  try {
    trace::emulate_gemm(256, 256, 256, trace::Precision::fp4, hopper);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fp4"), std::string::npos) << e.what();
  }
}
