// SPDX-License-Identifier: Apache-2.0
#include "sim/sweep/runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

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
  return {{"index", index}, {"key", key}, {"point", p}, {"args", s.run_args(point)}, {"done", done}, {"stale", stale}};
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
  for (size_t i : which) {
    if (bar) bar->update(double(out.size()), "point " + std::to_string(i));
    if (i >= points.size())
      throw std::invalid_argument("sweep " + s.file + ": point " + std::to_string(i) + " does not exist (the sweep has " +
                                  std::to_string(points.size()) + ")");
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
    // Two points that resolve to the same config would be one run stored once: say so rather than
    // silently running fewer configurations than the spec lists.
    if (auto it = seen.find(r.key); it != seen.end())
      throw std::invalid_argument("sweep " + s.file + ": points " + std::to_string(it->second) + " (" +
                                  point_text(points[it->second]) + ") and " + std::to_string(i) + " (" +
                                  point_text(r.point) + ") resolve to the same configuration");
    seen[r.key] = i;
    out.push_back(std::move(r));
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
  std::vector<const PlannedRun*> todo;
  for (const auto& r : runs) {
    sum.stale += r.stale;
    if (r.done) ++sum.skipped;
    else if (o.limit == 0 || todo.size() < o.limit) todo.push_back(&r);
  }
  Store store(o.db);  // creates the file (and schema) before the workers race to do it
  const std::string exe = o.executable.empty() ? self_executable() : o.executable;
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
    const double eta = rate > 0 ? double(todo.size() - sum.ran - sum.elsewhere) / rate : -1;
    char b[256];
    std::snprintf(b, sizeof b, "[sweep %s] %zu/%zu done (%zu stored before, %zu another sweep's, %zu failed)  %.2f runs/s  ETA %s",
                  s.name.c_str(), sum.ran, todo.size(), sum.skipped, sum.elsewhere, sum.failed, rate, clock_text(eta).c_str());
    std::fprintf(stderr, tty ? "\r%s\033[K%s" : "%s%s", b, final_line || !tty ? "\n" : "");
    std::fflush(stderr);
  };
  show(todo.empty());

  std::map<pid_t, Child> live;
  size_t next = 0;
  const unsigned workers = std::max(1u, o.workers);
  while (next < todo.size() || !live.empty()) {
    while (next < todo.size() && live.size() < workers) {
      const PlannedRun* r = todo[next++];
      // Another sweep on this file may have taken it, or finished it, since the plan.
      if (!store.claim(r->key)) {
        ++sum.elsewhere;
        show(false);
        continue;
      }
      auto args = s.run_args(r->point);
      args.insert(args.begin(), "run");
      args.insert(args.end(), {"--db", o.db});
      const std::string err = (tmp / (r->key + ".err")).string();
      live[spawn(exe, args, err)] = {r, err, clock::now()};
    }
    if (live.empty()) break;  // the rest were another sweep's
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    auto it = live.find(pid);
    if (it == live.end()) continue;
    const Child c = it->second;
    live.erase(it);
    ++sum.ran;
    store.release(c.run->key);
    std::string error;
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      error = exit_text(status);
      const std::string msg = tail_of_file(c.err_path, 4000);
      if (!msg.empty()) error += ": " + msg;
    } else if (!store.has_ok(c.run->key)) {
      error = "the run finished but its key " + c.run->key + " is not in " + o.db +
              " (the worker resolved a different configuration)";
    }
    if (error.empty()) {
      ++sum.ok;
    } else {
      ++sum.failed;
      RunResult f;
      f.key = c.run->key;
      f.config = c.run->config;
      f.hardware = c.run->config["hardware"].value("name", c.run->spec.hardware);
      f.workload = c.run->config.contains("workload") ? c.run->config["workload"].value("name", c.run->spec.workload)
                                                      : c.run->spec.trace;
      f.seed = c.run->spec.step.seed;
      f.code_version = code_version();
      f.status = "failed";
      f.error = error;
      f.wall_s = std::chrono::duration<double>(clock::now() - c.start).count();
      store.put(f);
      if (tty && o.progress) std::fprintf(stderr, "\n");
      log << "run " << c.run->index << " (" << point_text(c.run->point) << ") failed: " << error << "\n";
    }
    std::error_code ec;
    fs::remove(c.err_path, ec);
    show(sum.ran + sum.elsewhere == todo.size());
  }
  sum.wall_s = std::chrono::duration<double>(clock::now() - t0).count();
  return sum;
}

}  // namespace indexsim::sim::sweep
