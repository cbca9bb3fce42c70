//===- CurlShim.cpp - libcurl, loaded when the model is first used --------===//

#include "CurlShim.h"

#include <dlfcn.h>

#include <mutex>

namespace kb::model {

const CurlApi *curlApi(std::string &error) {
  static CurlApi api;
  static std::string loadError;
  static bool ok = false;
  static std::once_flag once;
  std::call_once(once, [] {
    void *lib = nullptr;
    for (const char *name : {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!lib) {
      loadError = "the model client needs libcurl (libcurl.so.4): install "
                  "libcurl4 (Debian 12) or libcurl4t64 (Ubuntu 24.04)";
      return;
    }
    bool all = true;
    auto get = [&](auto &fn, const char *sym) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, sym));
      all &= fn != nullptr;
    };
    get(api.global_init, "curl_global_init");
    get(api.easy_init, "curl_easy_init");
    get(api.easy_setopt, "curl_easy_setopt");
    get(api.easy_perform, "curl_easy_perform");
    get(api.easy_getinfo, "curl_easy_getinfo");
    get(api.easy_cleanup, "curl_easy_cleanup");
    get(api.easy_strerror, "curl_easy_strerror");
    get(api.slist_append, "curl_slist_append");
    get(api.slist_free_all, "curl_slist_free_all");
    if (!all) {
      loadError = "libcurl.so.4 lacks the easy API kb-rewrite uses";
      return;
    }
    api.global_init(CURL_GLOBAL_DEFAULT);
    ok = true;
  });
  if (!ok) {
    error = loadError;
    return nullptr;
  }
  return &api;
}

} // namespace kb::model
