//===- CurlShim.h - libcurl, loaded when the model is first used -*- C++ -*-===//
//
// The packed kb-rewrite (scripts/pack-kb-rewrite) must start on hosts
// without libcurl, and most runs never talk to a model: libcurl.so.4 is
// opened with dlopen on first use, and a missing library is an error that
// says what to install. The one place that knows libcurl's ABI.
//
//===----------------------------------------------------------------------===//
#ifndef KB_LIB_MODEL_CURLSHIM_H
#define KB_LIB_MODEL_CURLSHIM_H

#include <curl/curl.h>

#include <string>

namespace kb::model {

struct CurlApi {
  CURLcode (*global_init)(long);
  CURL *(*easy_init)();
  CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
  CURLcode (*easy_perform)(CURL *);
  CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
  void (*easy_cleanup)(CURL *);
  const char *(*easy_strerror)(CURLcode);
  struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
  void (*slist_free_all)(struct curl_slist *);
};

/// The loaded API, or nullptr with `error` set (once per process).
const CurlApi *curlApi(std::string &error);

} // namespace kb::model

#endif // KB_LIB_MODEL_CURLSHIM_H
