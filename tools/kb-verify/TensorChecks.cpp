//===- TensorChecks.cpp - Inputs and comparisons on device tensors --------===//

#include "TensorChecks.h"

#include <cmath>
#include <limits>
#include <mutex>

using namespace kb::verify;

namespace {

at::Generator seededGenerator(at::Device device, uint64_t seed) {
  at::Generator gen = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_current_seed(seed); // also rewinds the Philox offset on CUDA
  return gen;
}

int64_t firstTrue(const at::Tensor &mask) {
  return mask.to(at::kInt).argmax().item<int64_t>();
}

/// envBucket over a tensor of truths, from the bits as on the host.
at::Tensor envBuckets(const at::Tensor &r) {
  at::Tensor exponent =
      at::div(r.abs().view(at::kLong), int64_t(1) << 52, "floor") - 1023;
  return exponent.clamp(kEnvLo, kEnvHi) - kEnvLo;
}

ComparisonStats chunkStats(const at::Tensor &x, const at::Tensor &e,
                           const at::Tensor &r, double factor, uint32_t poison,
                           NonfiniteRule nonfinite, const at::Tensor &sens,
                           const at::Tensor &step, double eagerRel,
                           const at::Tensor &env, double maxFinite) {
  ComparisonStats s;
  s.n = x.numel();
  at::Tensor unwritten = x.view(at::kInt).eq(static_cast<int32_t>(poison));
  s.unwritten = unwritten.sum().item<int64_t>();
  if (s.unwritten)
    s.firstUnwritten = firstTrue(unwritten);

  at::Tensor eNan = e.isnan(), xNan = x.isnan(), xInf = x.isinf();
  at::Tensor eSpecial = eNan | e.isinf(), xSpecial = xNan | xInf;
  at::Tensor ar = r.abs();
  at::Tensor eagerMatch =
      eSpecial & at::where(eNan, xNan, xInf & (x.signbit() == e.signbit()));
  // eager NaN where the truth is +-Inf: the truth's Inf is right too.
  at::Tensor same =
      eagerMatch | (eSpecial & r.isinf() & xInf & (x.signbit() == r.signbit()));
  if (nonfinite == NonfiniteRule::Any)
    same = same | (eSpecial & xSpecial & r.isfinite().logical_not());
  else if (nonfinite == NonfiniteRule::Order)
    same = same | (eSpecial & xSpecial & r.isnan());
  at::Tensor overflowed = r.isfinite() & ar.le(maxFinite);
  // The truth beyond float32's range: the candidate's Inf of the truth's
  // sign is the correctly rounded result, whatever eager's order gave
  // (finite, or NaN from +Inf and -Inf partials) (Compare.cpp).
  at::Tensor rightInf =
      xInf & r.isfinite() & ar.gt(maxFinite) & (x.signbit() == r.signbit());
  // So is the truth's own Inf where eager stayed finite (Compare.cpp).
  rightInf = rightInf | (xInf & r.isinf() & (x.signbit() == r.signbit()) &
                         eSpecial.logical_not());
  // NaN where the truth lies beyond float32's range: an intermediate's
  // overflow met by an op that makes Inf a NaN (Compare.cpp).
  rightInf = rightInf | (xNan & r.isfinite() & ar.gt(maxFinite));
  // The NaN or Inf of the op-by-op fp32 evaluation (Compare.cpp).
  at::Tensor stepSame =
      step.defined()
          ? xSpecial & at::where(xNan, step.isnan(),
                                 step.isinf() & (step.signbit() == x.signbit()))
          : at::zeros_like(xNan);
  same = same | rightInf | stepSame;
  at::Tensor bad = at::where(
      eSpecial, same.logical_not() & (overflowed.logical_not() | xSpecial),
      xSpecial & (rightInf | stepSame).logical_not());
  s.nanBad = bad.sum().item<int64_t>();
  if (s.nanBad) {
    s.firstNanBad = firstTrue(bad);
    s.nanBadCand = x[s.firstNanBad].item<float>();
    s.nanBadEager = e[s.firstNanBad].item<float>();
    s.nanBadRef = r[s.firstNanBad].item<double>();
  }
  at::Tensor ok = (same | bad).logical_not();
  at::Tensor xd = x.to(at::kDouble), ed = e.to(at::kDouble);
  at::Tensor zero = at::zeros({}, r.options());
  at::Tensor d = (xd - r).abs();
  at::Tensor eErr = at::where(eSpecial, zero, (ed - r).abs());
  at::Tensor huge = ok & ar.gt(kHugeMagnitude);
  at::Tensor tol = at::maximum(eErr, ar * eagerRel) * factor;
  // Within what fp32 rounding of the inputs moves the truth by: excused.
  at::Tensor excused =
      sens.defined() ? d.le(sens * factor) : at::zeros_like(d, at::kBool);
  at::Tensor hugeBad = huge & d.gt(tol) & excused.logical_not();
  s.hugeBad = hugeBad.sum().item<int64_t>();
  if (s.hugeBad) {
    s.firstHugeBad = firstTrue(hugeBad);
    s.hugeBadCand = x[s.firstHugeBad].item<float>();
    s.hugeBadRef = r[s.firstHugeBad].item<double>();
  }
  // A NaN truth next to a finite eager value is skipped by the host loop's
  // comparisons (NaN compares false); mask it the same way here.
  at::Tensor normal = ok & huge.logical_not() & r.isnan().logical_not();
  s.scale = at::where(normal, ar, zero).max().item<double>();
  s.eagerErr = at::where(normal, eErr, zero).max().item<double>();
  at::Tensor dn = at::where(normal & excused.logical_not(), d, zero);
  s.candErr = dn.max().item<double>();
  if (s.candErr > 0) {
    s.worst = dn.argmax().item<int64_t>();
    s.worstCand = x[s.worst].item<float>();
    s.worstRef = r[s.worst].item<double>();
  }
  at::Tensor tolHere = env.take(envBuckets(r)) * factor;
  at::Tensor envBad = normal & excused.logical_not() & d.gt(tolHere);
  s.envBad = envBad.sum().item<int64_t>();
  if (s.envBad) {
    s.firstEnvBad = firstTrue(envBad);
    s.envBadCand = x[s.firstEnvBad].item<float>();
    s.envBadRef = r[s.firstEnvBad].item<double>();
    s.envBadBound = tolHere[s.firstEnvBad].item<double>();
  }
  s.sumSq = at::where(ok, d * d, zero).sum().item<double>();
  s.refSq = at::where(ok, r * r, zero).sum().item<double>();
  at::Tensor ad = (xd - ed).abs(), ae = ed.abs();
  // Where eager overflowed to NaN/Inf, allclose against it fails.
  at::Tensor vsEager =
      (ok & eSpecial) | rightInf | (stepSame & eagerMatch.logical_not());
  s.allclose1e4 =
      !(vsEager | (ok & ad.gt(ae * 1e-4 + 1e-4))).any().item<bool>();
  s.allclose1e2 =
      !(vsEager | (ok & ad.gt(ae * 1e-2 + 1e-2))).any().item<bool>();
  return s;
}

} // namespace

at::Tensor kb::verify::makeInput(const TensorSpec &spec,
                                 const std::vector<int64_t> &shape,
                                 uint64_t seed, int trialKind,
                                 at::Device device) {
  at::Generator gen = seededGenerator(device, seed);
  auto opts = at::TensorOptions().dtype(at::kFloat).device(device);
  // 16-bit inputs are drawn in float32 and rounded to their type (special
  // values beyond its range become +-Inf, denormals of float32 0).
  at::ScalarType type = inputType(spec);
  // A strided input is laid out as the model's view is, so the reference's
  // ATen ops (and their timing) read memory as the model does.
  auto laidOut = [&](at::Tensor t) {
    if (type != at::kBool && type != t.scalar_type())
      t = t.to(type);
    if (spec.strides.empty())
      return t.contiguous();
    at::Tensor out = at::empty_strided(shape, spec.strides, t.options());
    copyIntoView(out, t);
    return out;
  };
  if (type == at::kBool)
    return laidOut(at::rand(shape, gen, opts).lt(0.5));
  at::Tensor x;
  const std::string &dist = spec.distribution;
  if (dist.rfind("uniform:", 0) == 0) {
    size_t a = dist.find(':'), b = dist.rfind(':');
    double lo = std::stod(dist.substr(a + 1, b - a - 1));
    double hi = std::stod(dist.substr(b + 1));
    x = at::rand(shape, gen, opts) * (hi - lo) + lo;
  } else {
    x = at::randn(shape, gen, opts);
    if (dist == "positive")
      x = x.abs() + 0.1;
  }
  if (trialKind == 1)
    x = x * 1e3;
  if (trialKind != 2)
    return laidOut(x);
  // Special values where the reference defines them: the reference runs on
  // the same inputs, so whatever it does with them is the truth.
  const float inf = std::numeric_limits<float>::infinity();
  at::Tensor specials =
      at::tensor(std::vector<float>{std::numeric_limits<float>::quiet_NaN(),
                                    inf, -inf, 0.0f, -0.0f, 1e-40f, -3e38f,
                                    3e38f})
          .to(device);
  at::Tensor pick =
      at::randint(0, specials.numel(), shape, gen, opts.dtype(at::kLong));
  at::Tensor coin = at::rand(shape, gen, opts);
  return laidOut(at::where(coin.lt(0.03), specials.take(pick), x));
}

EagerProfile kb::verify::eagerProfile(const at::Tensor &eager32,
                                      const at::Tensor &truth64, int64_t chunk,
                                      FloatFormat format) {
  at::Tensor e = eager32.contiguous().view(-1),
             r = truth64.contiguous().view(-1);
  // Over the whole tensor, as compareStats (hugeEagerRelError and the
  // envelope), a chunk at a time: the double temporaries stay chunk-sized.
  EagerProfile p;
  p.eagerRel = std::ldexp(1.0, -format.mantissa);
  p.format = format;
  std::vector<double> bins(kEnvBuckets, 0.0), counts(kEnvBuckets, 0.0);
  for (int64_t off = 0; off < e.numel(); off += chunk) {
    int64_t len = std::min(chunk, e.numel() - off);
    at::Tensor ec = e.narrow(0, off, len), rc = r.narrow(0, off, len);
    at::Tensor fits =
        ec.isfinite() & rc.isfinite() & rc.abs().le(kHugeMagnitude);
    at::Tensor err = at::where(fits, (ec.to(at::kDouble) - rc).abs(),
                               at::zeros({}, rc.options()));
    at::Tensor bucket = envBuckets(rc);
    at::Tensor chunkBins = at::zeros({kEnvBuckets}, rc.options())
                               .scatter_reduce(0, bucket, err, "amax")
                               .cpu();
    at::Tensor chunkCounts = at::zeros({kEnvBuckets}, rc.options())
                                 .scatter_add(0, bucket, fits.to(at::kDouble))
                                 .cpu();
    const double *cb = chunkBins.data_ptr<double>();
    const double *cc = chunkCounts.data_ptr<double>();
    for (int k = 0; k < kEnvBuckets; ++k) {
      bins[k] = std::max(bins[k], cb[k]);
      counts[k] += cc[k];
    }
    at::Tensor huge =
        ec.isfinite() & rc.isfinite() & rc.abs().gt(kHugeMagnitude);
    if (huge.any().item<bool>())
      p.eagerRel =
          std::max(p.eagerRel, ((ec.to(at::kDouble) - rc).abs() / rc.abs())
                                   .masked_select(huge)
                                   .max()
                                   .item<double>());
  }
  p.env = at::tensor(envelopeFromBins(bins, counts, format.mantissa),
                     r.options().device(at::kCPU))
              .to(r.device());
  return p;
}

ComparisonStats
kb::verify::tensorStats(const at::Tensor &cand, const at::Tensor &eager32,
                        const at::Tensor &truth64, double factor,
                        uint32_t poison, NonfiniteRule nonfinite, int64_t chunk,
                        const at::Tensor &sens64, const EagerProfile *profile,
                        const at::Tensor &step32, FloatFormat format) {
  at::Tensor x = cand.contiguous().view(-1), e = eager32.contiguous().view(-1),
             r = truth64.contiguous().view(-1);
  at::Tensor sv = sens64.defined() ? sens64.contiguous().view(-1) : sens64;
  at::Tensor st = step32.defined() ? step32.contiguous().view(-1) : step32;
  EagerProfile own;
  if (!profile)
    own = eagerProfile(eager32, truth64, chunk, format);
  const EagerProfile &p = profile ? *profile : own;
  ComparisonStats total;
  for (int64_t off = 0; off < x.numel(); off += chunk) {
    int64_t len = std::min(chunk, x.numel() - off);
    total.append(chunkStats(x.narrow(0, off, len), e.narrow(0, off, len),
                            r.narrow(0, off, len), factor, poison, nonfinite,
                            sv.defined() ? sv.narrow(0, off, len) : sv,
                            st.defined() ? st.narrow(0, off, len) : st,
                            p.eagerRel, p.env, p.format.maxFinite));
  }
  return total;
}

Comparison kb::verify::indexComparison(const at::Tensor &cand,
                                       const at::Tensor &eager,
                                       uint32_t poison) {
  Comparison c;
  at::Tensor x = cand.contiguous().view(-1), e = eager.contiguous().view(-1);
  // An index is below 2^53, so neither of its words is a poison pattern
  // unless the high word is (all of them are 0 for indices below 2^32).
  int64_t unwritten = x.view(at::kInt)
                          .view({-1, 2})
                          .eq(static_cast<int32_t>(poison))
                          .all(1)
                          .sum()
                          .item<int64_t>();
  if (unwritten) {
    c.status = VerdictStatus::UnwrittenOutput;
    c.detail = std::to_string(unwritten) + " of " + std::to_string(x.numel()) +
               " indices still hold the poison pattern";
    c.allclose1e4 = c.allclose1e2 = false;
    return c;
  }
  at::Tensor differ = x.ne(e);
  int64_t bad = differ.sum().item<int64_t>();
  if (bad) {
    int64_t first = differ.nonzero().view(-1)[0].item<int64_t>();
    c.status = VerdictStatus::WrongResult;
    c.detail = std::to_string(bad) + " of " + std::to_string(x.numel()) +
               " indices differ from eager's (first at element " +
               std::to_string(first) + ": " +
               std::to_string(x[first].item<int64_t>()) + ", eager " +
               std::to_string(e[first].item<int64_t>()) + ")";
    c.maxAbsError = (x - e).abs().max().item<int64_t>();
    c.allclose1e4 = c.allclose1e2 = false;
  }
  return c;
}

std::pair<int64_t, int64_t> kb::verify::jointPattern(const at::Tensor &a,
                                                     const at::Tensor &b,
                                                     uint32_t pa, uint32_t pb) {
  if (a.element_size() == 2) { // each element holds the low half
    at::Tensor both =
        a.contiguous().view(-1).view(at::kShort).eq(int16_t(pa & 0xffffu)) &
        b.contiguous().view(-1).view(at::kShort).eq(int16_t(pb & 0xffffu));
    int64_t n = both.sum().item<int64_t>();
    return {n, n ? firstTrue(both) : 0};
  }
  at::Tensor both =
      a.contiguous().view(-1).view(at::kInt).eq(static_cast<int32_t>(pa)) &
      b.contiguous().view(-1).view(at::kInt).eq(static_cast<int32_t>(pb));
  int64_t n = both.sum().item<int64_t>();
  return {n, n ? firstTrue(both) : 0};
}

bool kb::verify::guardsIntact(const at::Tensor &allocation,
                              const GuardLayout &g) {
  auto touched = [&](size_t off, size_t len) {
    return allocation
        .narrow(0, static_cast<int64_t>(off), static_cast<int64_t>(len))
        .ne(kCanaryByte)
        .any()
        .item<bool>();
  };
  return !touched(0, g.front) && !touched(g.front + g.data, g.back);
}

int64_t kb::verify::countBitDifferences(const at::Tensor &cand,
                                        const at::Tensor &eager32) {
  at::Tensor a = cand.contiguous().view(-1), b = eager32.contiguous().view(-1);
  if (a.scalar_type() == at::kLong) // indices: no NaN, 8-byte elements
    return a.ne(b).sum().item<int64_t>();
  at::Tensor differ = a.view(at::kInt).ne(b.view(at::kInt)) &
                      (a.isnan() & b.isnan()).logical_not();
  return differ.sum().item<int64_t>();
}

bool kb::verify::sameBits(const at::Tensor &a, const at::Tensor &b) {
  // Flattened first: a 0-d int64 tensor (argmax over all elements) has no
  // dim to split into two 32-bit words; a mask's bytes are compared as
  // bytes (its element count need not be a multiple of 4).
  auto bits = [](const at::Tensor &t) {
    at::Tensor flat = t.contiguous().view(-1);
    return flat.element_size() == 1 ? flat.view(at::kByte)
                                    : flat.view(at::kInt);
  };
  return a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() &&
         at::equal(bits(a), bits(b));
}

at::ScalarType kb::verify::inputType(const TensorSpec &spec) {
  if (spec.dtype == "float16")
    return at::kHalf;
  if (spec.dtype == "bfloat16")
    return at::kBFloat16;
  return spec.dtype == "bool" ? at::kBool : at::kFloat;
}

at::ScalarType kb::verify::outputType(const TensorSpec &spec) {
  if (spec.dtype == "int64")
    return at::kLong;
  return inputType(spec);
}

FloatFormat kb::verify::formatOf(at::ScalarType type) {
  if (type == at::kHalf)
    return kFloat16Format;
  if (type == at::kBFloat16)
    return kBFloat16Format;
  return kFloat32Format;
}

void kb::verify::copyIntoView(at::Tensor dst, const at::Tensor &src) {
  at::Tensor from = src;
  for (int64_t d = 0; d < dst.dim(); ++d)
    if (dst.stride(d) == 0 && dst.size(d) > 1) {
      dst = dst.narrow(d, 0, 1);
      from = from.narrow(d, 0, 1);
    }
  dst.copy_(from);
}
