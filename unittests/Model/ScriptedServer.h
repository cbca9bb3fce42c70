//===- ScriptedServer.h - The loopback model server, for tests --*- C++ -*-===//
//
// Starts test/fixtures/model-server/scripted_server.py with a script on a
// free loopback port; the destructor stops it.
//
//===----------------------------------------------------------------------===//
#ifndef KB_UNITTESTS_MODEL_SCRIPTEDSERVER_H
#define KB_UNITTESTS_MODEL_SCRIPTEDSERVER_H

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace kbtest {
using json = nlohmann::json;

class ScriptedServer {
public:
  explicit ScriptedServer(const std::string &scriptText) {
    json script = json::parse(scriptText);
    llvm::SmallString<128> dir;
    llvm::sys::fs::createUniqueDirectory("kb-model-test", dir);
    base = dir.str().str();
    std::ofstream(base + "/script.json") << script.dump();
    std::string out = base + "/stdout.txt";
    auto python = llvm::sys::findProgramByName("python3");
    std::string py = python ? *python : "/usr/bin/python3";
    scriptPath = base + "/script.json";
    logPath = base + "/requests.jsonl";
    std::vector<llvm::StringRef> argv{py, KB_SCRIPTED_SERVER, scriptPath, "--log",
                                      logPath};
    std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(out),
                                                  std::nullopt};
    std::string err;
    proc = llvm::sys::ExecuteNoWait(py, argv, std::nullopt, redirects, 0, &err);
    for (int i = 0; i < 200 && port == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
      std::ifstream f(out);
      std::string word;
      if (f >> word && word == "PORT")
        f >> port;
    }
  }
  ~ScriptedServer() {
    if (proc.Pid > 0) {
      ::kill(proc.Pid, SIGKILL);
      llvm::sys::Wait(proc, std::nullopt);
    }
    llvm::sys::fs::remove_directories(base);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  std::vector<json> requests() const {
    std::vector<json> out;
    std::ifstream f(base + "/requests.jsonl");
    for (std::string line; std::getline(f, line);)
      out.push_back(json::parse(line));
    return out;
  }
  int port = 0;

private:
  std::string base, scriptPath, logPath;
  llvm::sys::ProcessInfo proc;
};

} // namespace kbtest

#endif
