// Starts `arclight-engine serve` as a child process for end-to-end tests and stops it again.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace arc::testing {

// Runs a command to completion; returns its exit status.
inline int run_command(const std::vector<std::string>& argv) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs a command to completion; its stdout and stderr together. *rc: the exit status.
inline std::string capture(const std::vector<std::string>& argv, int* rc) {
  std::string cmd;
  for (const auto& a : argv) cmd += "'" + a + "' ";
  FILE* p = popen((cmd + "2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n = 0;
  while (p != nullptr && (n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = p != nullptr ? pclose(p) : -1;
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

class EngineProcess {
 public:
  ~EngineProcess() { stop(); }

  // Starts the engine with `args` after "serve --port 0" and waits until /health says `ready`
  // (or `idle` when no model is given). Returns false (with the reason in error()) otherwise.
  bool start(const std::vector<std::string>& args, const std::string& want_state = "ready") {
    int out[2];
    if (pipe(out) != 0) return fail("pipe failed");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      std::vector<std::string> argv = {std::string(ARC_BIN_DIR) + "/arclight-engine",
                                       "--log-level",
                                       "warn",
                                       "serve",
                                       "--port",
                                       "0"};
      argv.insert(argv.end(), args.begin(), args.end());
      // ARC_E2E_BACKEND=cuda: the same tests on the CUDA backend (the cuda-emu preset sets it),
      // unless a test names its backend itself.
      const char* backend = std::getenv("ARC_E2E_BACKEND");
      if (backend != nullptr && *backend != '\0' &&
          std::find(argv.begin(), argv.end(), "--backend") == argv.end()) {
        argv.insert(argv.end(), {"--backend", backend});
      }
      std::vector<char*> c;
      for (auto& a : argv) c.push_back(a.data());
      c.push_back(nullptr);
      execv(c[0], c.data());
      _exit(127);
    }
    close(out[1]);
    // The first stdout line names the port.
    std::string line;
    char ch;
    while (read(out[0], &ch, 1) == 1 && ch != '\n') line += ch;
    close(out[0]);
    auto at = line.rfind(':');
    if (line.find("listening on") == std::string::npos || at == std::string::npos) {
      return fail("the engine did not start: '" + line + "'");
    }
    port_ = std::stoi(line.substr(at + 1));
    httplib::Client c("127.0.0.1", port_);
    for (int i = 0; i < 600; ++i) {
      auto r = c.Get("/health");
      if (r && r->status == 200) {
        auto state = nlohmann::json::parse(r->body).value("status", "");
        if (state == want_state) return true;
        if (state == "error") return fail("the engine reported an error while loading");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return fail("the engine did not become " + want_state + " within 60 s");
  }

  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    exit_status_ = -2;
  }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  int exit_status() const { return exit_status_; }
  const std::string& error() const { return error_; }

 private:
  bool fail(std::string e) {
    error_ = std::move(e);
    stop();
    return false;
  }
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_status_ = 0;
  std::string error_;
};

}  // namespace arc::testing
