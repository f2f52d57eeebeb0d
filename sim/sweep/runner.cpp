// SPDX-License-Identifier: Apache-2.0
#include "sim/sweep/runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "models/common/params.hpp"
#include "sim/core/progress.hpp"
#include "sim/core/version.hpp"
#include "sim/store/store.hpp"

namespace indexsim::sim::sweep {

namespace {

std::string point_text(const Assignment& a) {
  std::string s;
  for (const auto& [p, v] : a) s += (s.empty() ? "" : ", ") + p + "=" + v;
  return s.empty() ? "(base)" : s;
}

std::string tail_of_file(const std::string& path, size_t max_bytes) {
  std::ifstream f(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (s.size() > max_bytes) s = "…" + s.substr(s.size() - max_bytes);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

struct Child {
  const PlannedRun* run;
  std::string err_path;
  std::chrono::steady_clock::time_point start;
};

// Forks and execs `exe run ARGS --db DB`; the child dies with the sweep (PR_SET_PDEATHSIG), so a
// killed sweep leaves no orphan that could still be writing when the rerun starts.
pid_t spawn(const std::string& exe, const std::vector<std::string>& args, const std::string& err_path) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);  // keeps the stored error to the error
    const int out = open("/dev/null", O_WRONLY);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out >= 0) dup2(out, 1);
    if (err >= 0) dup2(err, 2);
    execv(exe.c_str(), argv.data());
    std::fprintf(stderr, "cannot execute %s: %s\n", exe.c_str(), std::strerror(errno));
    _exit(127);
  }
  return pid;
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

}  // namespace

nlohmann::json PlannedRun::to_json(const SweepSpec& s) const {
  nlohmann::json p = nlohmann::json::object();
  for (const auto& [k, v] : point) p[k] = v;
  nlohmann::json j = {{"index", index}, {"key", key}, {"point", p}, {"args", s.run_args(point)}, {"done", done}, {"stale", stale}};
  if (!spec.segments_of.empty()) j["segments_from"] = spec.segments_of;  // the key of its seed (share_segments)
  return j;
}

std::vector<PlannedRun> plan(const SweepSpec& s, const std::string& db, const std::vector<size_t>& select,
                             bool rerun_stale, bool progress) {
  const auto points = s.points();
  std::vector<size_t> which = select;
  if (which.empty())
    for (size_t i = 0; i < points.size(); ++i) which.push_back(i);
  std::vector<PlannedRun> out;
  std::map<std::string, size_t> seen;
  std::optional<Progress> bar;
  if (progress && which.size() >= 50) bar.emplace("plan " + s.name, which.size());  // small plans take no time
  const auto resolve_point = [&](size_t i) {
    PlannedRun r;
    r.index = i;
    r.point = points[i];
    try {
      r.spec = s.run_spec(r.point);
      r.config = resolve(r.spec);
    } catch (const config::ConfigError& e) {
      // An axis that names no config key shows up as an unknown key at the axis' own path.
      for (const auto& [path, value] : r.point) {
        const auto dot = path.find('.');
        if (dot != std::string::npos && path.substr(dot + 1) == e.path)
          throw std::invalid_argument("sweep " + s.file + ": axis '" + path + "' = '" + value + "' is rejected by " +
                                      e.file + ": " + e.rule);
      }
      throw std::invalid_argument("sweep " + s.file + ": point " + std::to_string(i) + " (" + point_text(r.point) +
                                  "): " + e.what());
    } catch (const std::exception& e) {
      throw std::invalid_argument("sweep " + s.file + ": point " + std::to_string(i) + " (" + point_text(r.point) +
                                  "): " + e.what());
    }
    r.key = run_key(r.config);
    return r;
  };
  for (size_t i : which) {
    if (bar) bar->update(double(out.size()), "point " + std::to_string(i));
    if (i >= points.size())
      throw std::invalid_argument("sweep " + s.file + ": point " + std::to_string(i) + " does not exist (the sweep has " +
                                  std::to_string(points.size()) + ")");
    PlannedRun r = resolve_point(i);
    // Two points that resolve to the same config would be one run stored once: say so rather than
    // silently running fewer configurations than the spec lists.
    if (auto it = seen.find(r.key); it != seen.end())
      throw std::invalid_argument("sweep " + s.file + ": points " + std::to_string(it->second) + " (" +
                                  point_text(points[it->second]) + ") and " + std::to_string(i) + " (" +
                                  point_text(r.point) + ") resolve to the same configuration");
    seen[r.key] = i;
    out.push_back(std::move(r));
  }
  if (s.share_segments) {
    // Each point's seed, planned if it was not selected; then the point's configuration records the
    // seed's key, which makes it another run than the point alone (a key of its own).
    const std::vector<size_t> seeds = s.segment_seeds(points);
    std::map<size_t, size_t> at;  // point index -> position in out
    for (size_t j = 0; j < out.size(); ++j) at[out[j].index] = j;
    for (size_t j = 0, n = out.size(); j < n; ++j) {
      const size_t g = seeds[out[j].index];
      if (g != out[j].index && !at.count(g)) {
        out.push_back(resolve_point(g));
        at[g] = out.size() - 1;
      }
    }
    for (PlannedRun& r : out) {
      const size_t g = seeds[r.index];
      if (g == r.index) continue;
      PlannedRun& seed = out[at[g]];
      seed.keeps_segments = true;
      r.seed = long(at[g]);
      r.spec.segments_of = seed.key;
      record_segments_from(r.config, seed.key);
      r.key = run_key(r.config);
    }
  }
  if (bar) {
    bar->update(double(out.size()));
    bar->finish();
  }
  if (!db.empty() && std::filesystem::exists(db)) {
    Store st(db);
    for (auto& r : out) {
      const Stored what = st.stored(r.key);
      r.stale = what == Stored::stale;
      r.done = what == Stored::current || (r.stale && !rerun_stale);
    }
  }
  return out;
}

std::string self_executable() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the indexsim executable (/proc/self/exe): " + ec.message());
  return p.string();
}

namespace {
// The temporary directories of sweeps whose process is gone (killed with -9, or a crash): their
// error files are of no use to anyone now.
void remove_stale_sweep_dirs(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const std::string prefix = "indexsim-sweep-";
    if (name.rfind(prefix, 0) != 0 || !e.is_directory(ec)) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || *end != '\0' || pid == long(getpid())) continue;
    if (kill(pid_t(pid), 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
  }
}
}  // namespace

SweepSummary run(const SweepSpec& s, const std::vector<PlannedRun>& runs, const SweepOptions& o, std::ostream& log) {
  namespace fs = std::filesystem;
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  SweepSummary sum;
  sum.total = runs.size();
  // A task runs one planned run (stored), or only remakes a stored seed's segment memos (memo_only:
  // its members are still to run and its file is gone). Seeds go first; a member waits for its seed.
  struct Task {
    const PlannedRun* run;
    bool memo_only = false;
    bool launched = false;
  };
  std::vector<Task> tasks, later;
  size_t todo_runs = 0;
  for (const auto& r : runs) {
    sum.stale += r.stale;
    if (r.done) ++sum.skipped;
    else if (o.limit == 0 || todo_runs < o.limit) (r.keeps_segments ? tasks : later).push_back({&r}), ++todo_runs;
  }
  Store store(o.db);  // creates the file (and schema) before the workers race to do it
  const std::string exe = o.executable.empty() ? self_executable() : o.executable;
  // Segment memos live beside the database, one file per seed and code version, kept for a resumed sweep.
  const fs::path memo_dir = o.db + ".segments";
  const std::string version_tag = run_key(nlohmann::json(code_version()));
  const auto memo_file = [&](const PlannedRun& seed) { return (memo_dir / (seed.key + "-" + version_tag + ".seg")).string(); };
  // The seeds that members still to run wait for. elsewhere: another sweep on the database claimed
  // the seed; its members are left to that sweep.
  enum class SeedState { pending, ok, failed, elsewhere };
  struct SeedStatus {
    SeedState state;
    std::string error;  // failed: why
  };
  std::map<const PlannedRun*, SeedStatus> seeds;
  for (const Task& t : later) {
    if (t.run->seed < 0) continue;
    const PlannedRun* seed = &runs[size_t(t.run->seed)];
    if (seeds.count(seed)) continue;
    fs::create_directories(memo_dir);
    const bool have = fs::exists(memo_file(*seed));
    seeds[seed] = {have && seed->done ? SeedState::ok : SeedState::pending, ""};
    if (seed->done && !have) {
      tasks.push_back({seed, true});
    } else if (!seed->done && std::none_of(tasks.begin(), tasks.end(), [&](const Task& x) { return x.run == seed; })) {
      tasks.push_back({seed});  // left out by the limit: its members cannot run without it
      ++todo_runs;
    }
  }
  tasks.insert(tasks.end(), later.begin(), later.end());
  const fs::path tmp = fs::temp_directory_path() / ("indexsim-sweep-" + std::to_string(getpid()));
  remove_stale_sweep_dirs(tmp.parent_path());
  fs::create_directories(tmp);
  // Removed on every way out of here, an exception included; a sweep killed outright leaves it,
  // and the next sweep removes it (remove_stale_sweep_dirs).
  struct RemoveOnExit {
    fs::path p;
    ~RemoveOnExit() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } remove_tmp{tmp};
  const bool tty = isatty(2);

  auto show = [&](bool final_line) {
    if (!o.progress) return;
    const double el = std::chrono::duration<double>(clock::now() - t0).count();
    const double rate = el > 0 ? double(sum.ran) / el : 0;
    const double eta = rate > 0 ? double(todo_runs - sum.ran - sum.elsewhere) / rate : -1;
    char b[256];
    std::snprintf(b, sizeof b, "[sweep %s] %zu/%zu done (%zu stored before, %zu another sweep's, %zu failed)  %.2f runs/s  ETA %s",
                  s.name.c_str(), sum.ran, todo_runs, sum.skipped, sum.elsewhere, sum.failed, rate, clock_text(eta).c_str());
    std::fprintf(stderr, tty ? "\r%s\033[K%s" : "%s%s", b, final_line || !tty ? "\n" : "");
    std::fflush(stderr);
  };
  show(todo_runs == 0);

  // A run that did not make it: stored with status failed and its error, and logged.
  const auto store_failure = [&](const PlannedRun& run, const std::string& error, clock::time_point start) {
    ++sum.failed;
    RunResult f;
    f.key = run.key;
    f.config = run.config;
    f.hardware = run.config["hardware"].value("name", run.spec.hardware);
    f.workload = run.config.contains("workload") ? run.config["workload"].value("name", run.spec.workload) : run.spec.trace;
    f.seed = run.spec.step.seed;
    f.code_version = code_version();
    f.status = "failed";
    f.error = error;
    f.wall_s = std::chrono::duration<double>(clock::now() - start).count();
    store.put(f);
    if (tty && o.progress) std::fprintf(stderr, "\n");
    log << "run " << run.index << " (" << point_text(run.point) << ") failed: " << error << "\n";
  };

  struct Live {
    const Task* task;
    Child child;
  };
  std::map<pid_t, Live> live;
  const unsigned workers = std::max(1u, o.workers);
  size_t first_open = 0;  // tasks before it are all launched
  for (;;) {
    // The first tasks in order that can start: not a member whose seed is still to finish.
    for (size_t i = first_open; i < tasks.size() && live.size() < workers; ++i) {
      Task& t = tasks[i];
      if (t.launched) continue;
      const PlannedRun* seed = t.run->seed >= 0 ? &runs[size_t(t.run->seed)] : nullptr;
      const SeedState st = seed ? seeds[seed].state : SeedState::ok;
      if (st == SeedState::pending) continue;
      t.launched = true;
      // Another sweep on this file took it (or its seed), or finished it, since the plan.
      if (st == SeedState::elsewhere || (!t.memo_only && !store.claim(t.run->key))) {
        if (auto it = seeds.find(t.run); it != seeds.end() && it->second.state == SeedState::pending)
          it->second.state = SeedState::elsewhere;
        ++sum.elsewhere;
        show(false);
        continue;
      }
      if (st == SeedState::failed) {
        ++sum.ran;
        store.release(t.run->key);
        store_failure(*t.run, "the run whose segment memos it starts from (point " + std::to_string(seed->index) +
                                  ") failed: " + seeds[seed].error, clock::now());
        show(sum.ran + sum.elsewhere == todo_runs);
        continue;
      }
      auto args = s.run_args(t.run->point);
      args.insert(args.begin(), "run");
      if (!t.memo_only) args.insert(args.end(), {"--db", o.db});
      if (t.run->keeps_segments) args.insert(args.end(), {"--segments-to", memo_file(*t.run)});
      if (seed) args.insert(args.end(), {"--segments-from", memo_file(*seed)});
      const std::string err = (tmp / (t.run->key + (t.memo_only ? "-memos" : "") + ".err")).string();
      live[spawn(exe, args, err)] = {&t, {t.run, err, clock::now()}};
    }
    while (first_open < tasks.size() && tasks[first_open].launched) ++first_open;
    if (live.empty()) {
      if (first_open == tasks.size()) break;
      throw std::logic_error("sweep: tasks wait on seeds that never ran");  // every seed is a task or stored with its memos
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    auto it = live.find(pid);
    if (it == live.end()) continue;
    const Task& t = *it->second.task;
    const Child c = it->second.child;
    live.erase(it);
    std::string error;
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      error = exit_text(status);
      const std::string msg = tail_of_file(c.err_path, 4000);
      if (!msg.empty()) error += ": " + msg;
    } else if (!t.memo_only && !store.has_ok(c.run->key)) {
      error = "the run finished but its key " + c.run->key + " is not in " + o.db +
              " (the worker resolved a different configuration)";
    }
    std::error_code ec;
    fs::remove(c.err_path, ec);
    if (auto it = seeds.find(c.run); it != seeds.end()) it->second = {error.empty() ? SeedState::ok : SeedState::failed, error};
    if (t.memo_only) {
      if (!error.empty()) log << "run " << c.run->index << " (" << point_text(c.run->point) << "): remaking its segment memos failed: " << error << "\n";
      continue;
    }
    ++sum.ran;
    store.release(c.run->key);
    if (error.empty()) ++sum.ok;
    else store_failure(*c.run, error, c.start);
    show(sum.ran + sum.elsewhere == todo_runs);
  }
  sum.wall_s = std::chrono::duration<double>(clock::now() - t0).count();
  return sum;
}

}  // namespace indexsim::sim::sweep
