//===- RewriteCxx.h - `kb-rewrite rewrite` for C++ sources -------*- C++
//-*-===//
#ifndef KB_TOOLS_REWRITECXX_H
#define KB_TOOLS_REWRITECXX_H

/// `kb-rewrite rewrite a.cpp ... [-p BUILD | -- FLAGS] (-o DIR | --in-place)
/// [--json]`; returns the exit code (docs/cli.md).
int runRewriteCxx(int argc, char **argv);

#endif // KB_TOOLS_REWRITECXX_H
