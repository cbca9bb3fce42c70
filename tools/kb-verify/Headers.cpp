//===- Headers.cpp - The toolkit headers NVRTC gets in memory -------------===//

#include "Headers.h"

#include "kb/Verify/Checks.h"

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

using namespace kb::verify;

namespace {

std::string parentDir(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

} // namespace

bool kb::verify::readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream os;
  os << in.rdbuf();
  out = os.str();
  return true;
}

InMemoryHeaders
kb::verify::collectHeaders(const std::vector<std::string> &roots) {
  static const std::regex directive(
      R"((^|\n)[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"])");
  InMemoryHeaders out;
  std::map<std::string, bool> done;
  // (name as written, directory of the including file for "..." includes)
  std::vector<std::pair<std::string, std::string>> todo;
  for (const std::string &h : allowedHeaders())
    todo.push_back({h, ""});
  while (!todo.empty()) {
    auto [name, from] = todo.back();
    todo.pop_back();
    if (done.count(name))
      continue;
    done[name] = true;
    std::vector<std::string> candidates;
    if (!from.empty())
      candidates.push_back(from + "/" + name);
    for (const std::string &r : roots)
      candidates.push_back(r + "/" + name);
    std::string body, path;
    for (const std::string &c : candidates)
      if (readFile(c, body)) {
        path = c;
        break;
      }
    if (path.empty())
      continue;
    for (auto it = std::sregex_iterator(body.begin(), body.end(), directive);
         it != std::sregex_iterator(); ++it)
      todo.push_back({(*it)[3].str(), (*it)[2].str() == "\"" ? parentDir(path)
                                                             : std::string()});
    out.names.push_back(name);
    out.bodies.push_back(std::move(body));
  }
  return out;
}

const InMemoryHeaders &kb::verify::toolkitHeaders() {
  static const InMemoryHeaders headers = collectHeaders(
      {KB_CUDA_INCLUDE_DIR, std::string(KB_CUDA_INCLUDE_DIR) + "/cccl"});
  return headers;
}
