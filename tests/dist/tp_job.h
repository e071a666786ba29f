// The serving and run tests under mpirun start `arclight-engine` jobs as a user would: a child
// process group with stdout on a pipe (the "listening on" line) and stderr in a file, mpirun on
// loopback only, and the engine's /health polled for a state. Commands run to their end with
// the end-to-end tests' run_command and capture (e2e/engine_process.h).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "e2e/engine_process.h"

namespace arc::tptest {

using Clock = std::chrono::steady_clock;
using testing::capture;
using testing::run_command;
namespace fs = std::filesystem;

inline const std::string kBin = std::string(ARC_BIN_DIR) + "/arclight-engine";

inline double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline std::vector<std::string> mpirun(int n, std::vector<std::string> args) {
  std::vector<std::string> v = {
      ARC_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", std::to_string(n),
      // Loopback only: no waiting on other interfaces.
      "--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo", kBin};
  v.insert(v.end(), args.begin(), args.end());
  return v;
}

// A child process (its own process group) with stdout on a pipe and stderr in a file.
class Job {
 public:
  // The stderr file goes with the job: the assertions that print it run while the job lives.
  ~Job() {
    stop();
    if (!err_path_.empty()) {
      std::error_code ec;
      fs::remove(err_path_, ec);
    }
  }

  bool start(const std::vector<std::string>& argv) {
    err_path_ = (fs::temp_directory_path() / ("arc_tp_serve_" + std::to_string(getpid()) + "_" +
                                              std::to_string(++count_) + ".err"))
                    .string();
    int out[2];
    if (pipe(out) != 0) return false;
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      dup2(out[1], STDOUT_FILENO);
      int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(err, STDERR_FILENO);
      close(out[0]);
      close(out[1]);
      std::vector<char*> c;
      for (const auto& a : argv) c.push_back(const_cast<char*>(a.c_str()));
      c.push_back(nullptr);
      execv(c[0], c.data());
      _exit(127);
    }
    close(out[1]);
    out_ = out[0];
    return true;
  }

  // The port from the "listening on" line, or 0 after `timeout_s`.
  int wait_port(double timeout_s) {
    const auto t0 = Clock::now();
    std::string line;
    while (since(t0) < timeout_s) {
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char ch;
      if (read(out_, &ch, 1) != 1) return 0;
      if (ch != '\n') {
        line += ch;
        continue;
      }
      if (line.find("listening on") != std::string::npos) {
        return std::stoi(line.substr(line.rfind(':') + 1));
      }
      line.clear();
    }
    return 0;
  }

  // Exit status once the job ended by itself within `timeout_s`; nullopt otherwise.
  std::optional<int> wait_exit(double timeout_s) {
    const auto t0 = Clock::now();
    while (since(t0) < timeout_s) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return std::nullopt;
  }

  // SIGTERM (mpirun forwards it), then SIGKILL to the whole group.
  void stop() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      if (!wait_exit(10)) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
        pid_ = -1;
      }
    }
    if (out_ >= 0) close(out_);
    out_ = -1;
  }

  std::string stderr_text() const {
    std::ifstream in(err_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  static inline int count_ = 0;
  pid_t pid_ = -1;
  int out_ = -1;
  std::string err_path_;
};

// True once GET /health reports `want` within `timeout_s`.
inline bool wait_state(int port, const std::string& want, double timeout_s) {
  httplib::Client c("127.0.0.1", port);
  const auto t0 = Clock::now();
  while (since(t0) < timeout_s) {
    auto r = c.Get("/health");
    if (r && r->status == 200 && nlohmann::json::parse(r->body).value("status", "") == want)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace arc::tptest
