//===- kb_runtime_ext.cpp - Loads and launches kb-rewrite kernels ---------===//
//
// The torch-dependent glue of rewritten models, built once per machine by
// kb_runtime.py (torch.utils.cpp_extension). Kernels are plain CUDA C++
// compiled with NVRTC to CUBIN (the cubin is cached on disk by the Python
// side) and launched with the driver API on the current stream, so launches
// are captured by CUDA graphs.
//
// Links libnvrtc from the CUDA toolkit torch.utils.cpp_extension finds and
// the driver's libcuda (torch wheels do not ship ATen's NVRTC stub header).
//
// A Region holds one kernel with its launch rule and guards. run() returns
// nothing when a guard fails, and the caller then runs the original ATen ops
// (docs/rewrite.md, "Guards"). Guards read tensor metadata only: no device
// synchronisation.
//
//===----------------------------------------------------------------------===//
#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/extension.h>
#include <torch/version.h>

#include <cuda.h>
#include <nvrtc.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace {

void checkCu(CUresult res, const char *what) {
  if (res == CUDA_SUCCESS)
    return;
  const char *msg = nullptr;
  cuGetErrorString(res, &msg);
  TORCH_CHECK(false, "kb_runtime: ", what, " failed: ", msg ? msg : "?");
}

/// Compiles `source` for `arch` ("sm_90"); returns (cubin, lowered entry
/// name, log). Throws with the NVRTC log on a compile error.
std::tuple<py::bytes, std::string, std::string>
compile(const std::string &source, const std::string &entry,
        const std::string &arch) {
  nvrtcProgram prog;
  TORCH_CHECK(nvrtcCreateProgram(&prog, source.c_str(), "kernel.cu", 0, nullptr,
                                 nullptr) == NVRTC_SUCCESS,
              "kb_runtime: nvrtcCreateProgram failed");
  std::string nameExpr = "&" + entry;
  nvrtcAddNameExpression(prog, nameExpr.c_str());
  std::string archOpt = "--gpu-architecture=" + arch;
  // The prelude's helpers follow this torch's rounding (kb::addcmul).
  std::string torchOpt =
      "-DKB_TORCH_VERSION=" +
      std::to_string(TORCH_VERSION_MAJOR * 100 + TORCH_VERSION_MINOR);
  const char *opts[] = {archOpt.c_str(), "--std=c++17", torchOpt.c_str()};
  nvrtcResult res = nvrtcCompileProgram(prog, 3, opts);
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize)
    nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  if (res != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    TORCH_CHECK(false, "kb_runtime: NVRTC could not compile '", entry,
                "': ", log.empty() ? nvrtcGetErrorString(res) : log);
  }
  const char *lowered = nullptr;
  if (nvrtcGetLoweredName(prog, nameExpr.c_str(), &lowered) != NVRTC_SUCCESS ||
      !lowered) {
    nvrtcDestroyProgram(&prog);
    TORCH_CHECK(false, "kb_runtime: no __global__ '", entry, "' in the source");
  }
  std::string loweredName = lowered;
  size_t size = 0;
  nvrtcGetCUBINSize(prog, &size);
  std::string cubin(size, '\0');
  nvrtcGetCUBIN(prog, cubin.data());
  nvrtcDestroyProgram(&prog);
  return {py::bytes(cubin), loweredName, log};
}

struct TensorGuard {
  std::vector<int64_t> shape;
};

/// A job's dtype name as a tensor type.
at::ScalarType dtypeOf(const std::string &d) {
  if (d == "bool")
    return at::kBool;
  if (d == "int64")
    return at::kLong;
  if (d == "float16")
    return at::kHalf;
  if (d == "bfloat16")
    return at::kBFloat16;
  return at::kFloat;
}

/// A manifest dtype name as a tensor type, exactly (CallGuard); throws on a
/// name it does not know, and the caller keeps its Python guard.
at::ScalarType exactDtypeOf(const std::string &d) {
  static const std::map<std::string, at::ScalarType> names = {
      {"float32", at::kFloat}, {"float64", at::kDouble},
      {"float16", at::kHalf},  {"bfloat16", at::kBFloat16},
      {"int64", at::kLong},    {"int32", at::kInt},
      {"int16", at::kShort},   {"int8", at::kChar},
      {"uint8", at::kByte},    {"bool", at::kBool}};
  auto it = names.find(d);
  TORCH_CHECK(it != names.end(), "kb_runtime: no call guard for dtype ", d);
  return it->second;
}

void appendWords(std::string &key, const int64_t *words, size_t n) {
  key.append(reinterpret_cast<const char *>(words), n * sizeof(int64_t));
}

void appendTensor(std::string &key, const at::Tensor &t) {
  int64_t head[3] = {
      static_cast<int64_t>(reinterpret_cast<uintptr_t>(t.data_ptr())),
      static_cast<int64_t>(t.scalar_type()), t.dim()};
  appendWords(key, head, 3);
  appendWords(key, t.sizes().data(), t.dim());
  appendWords(key, t.strides().data(), t.dim());
}

/// The forward's guard and its CUDA graph key in one pass over the call.
/// A graph from dynamo passes every parameter as an argument (ResNet-50:
/// 320), and Python's per-argument checks with the key cost a fifth of a
/// replay there (bench/NOTES.md, session 45).
///
/// check() returns None when a tensor argument differs from the traced one
/// (the caller's Python guard then names it), else the key: each tensor
/// argument's address and strides, then the address, type, sizes and
/// strides of each tensor the module holds (read from its parameter and
/// buffer dicts at every call, so a replaced or moved parameter changes the
/// key and is never replayed from memory the graph captured).
class CallGuard {
public:
  CallGuard(std::vector<int64_t> positions,
            std::vector<std::vector<int64_t>> shapes,
            const std::vector<std::string> &dtypes)
      : positions(std::move(positions)), shapes(std::move(shapes)) {
    TORCH_CHECK(this->positions.size() == this->shapes.size() &&
                    this->shapes.size() == dtypes.size(),
                "kb_runtime: CallGuard needs one shape and dtype per position");
    for (const std::string &d : dtypes)
      types.push_back(exactDtypeOf(d));
  }

  py::object check(const py::tuple &args, const py::list &state) const {
    std::string key;
    key.reserve(positions.size() * 48 + state.size() * 64);
    size_t count = PyTuple_GET_SIZE(args.ptr());
    for (size_t i = 0; i < positions.size(); ++i) {
      int64_t pos = positions[i];
      if (pos < 0 || static_cast<size_t>(pos) >= count)
        return py::none();
      PyObject *obj = PyTuple_GET_ITEM(args.ptr(), pos);
      if (!THPVariable_Check(obj))
        return py::none();
      const at::Tensor &t = THPVariable_Unpack(obj);
      if (!t.defined() || !t.is_cuda() || t.scalar_type() != types[i] ||
          t.sizes() != c10::IntArrayRef(shapes[i]))
        return py::none();
      int64_t ptr =
          static_cast<int64_t>(reinterpret_cast<uintptr_t>(t.data_ptr()));
      appendWords(key, &ptr, 1);
      appendWords(key, t.strides().data(), t.dim());
    }
    // state: (dict, name) pairs, the module's _parameters / _buffers.
    for (py::handle pair : state) {
      PyObject *p = pair.ptr();
      if (!PyTuple_Check(p) || PyTuple_GET_SIZE(p) != 2)
        return py::none();
      PyObject *value =
          PyDict_GetItem(PyTuple_GET_ITEM(p, 0), PyTuple_GET_ITEM(p, 1));
      if (value != nullptr && THPVariable_Check(value)) {
        const at::Tensor &t = THPVariable_Unpack(value);
        if (t.defined()) {
          appendTensor(key, t);
          continue;
        }
      }
      int64_t none = -1;
      appendWords(key, &none, 1);
    }
    return py::bytes(key);
  }

private:
  std::vector<int64_t> positions;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<at::ScalarType> types;
};

class Region {
public:
  Region(const std::string &cubin, const std::string &loweredName,
         std::vector<int64_t> grid, std::vector<int64_t> block,
         int64_t sharedBytes, std::vector<std::vector<int64_t>> inputShapes,
         std::vector<std::vector<int64_t>> outputShapes,
         std::vector<std::pair<int64_t, int64_t>> updates,
         int64_t workspaceBytes, bool gridSync,
         const std::vector<std::string> &outputDtypes,
         std::vector<std::vector<int64_t>> inputStrides,
         std::vector<std::vector<int64_t>> outputStrides,
         const std::vector<std::string> &inputDtypes)
      : grid(std::move(grid)), block(std::move(block)),
        sharedBytes(sharedBytes), inputShapes(std::move(inputShapes)),
        outputShapes(std::move(outputShapes)), updates(std::move(updates)),
        workspaceBytes(workspaceBytes), gridSync(gridSync),
        inputStrides(std::move(inputStrides)),
        outputStrides(std::move(outputStrides)) {
    for (const std::string &d : inputDtypes)
      inputTypes.push_back(dtypeOf(d));
    for (const std::string &d : outputDtypes)
      outputTypes.push_back(dtypeOf(d));
    TORCH_CHECK(workspaceBytes >= 0, "kb_runtime: negative workspace size");
    TORCH_CHECK(this->grid.size() == 3 && this->block.size() == 3,
                "kb_runtime: grid and block need three dimensions");
    // The primary context is current once torch has initialised CUDA.
    checkCu(cuModuleLoadData(&module, cubin.data()), "cuModuleLoadData");
    checkCu(cuModuleGetFunction(&function, module, loweredName.c_str()),
            "cuModuleGetFunction");
    if (gridSync && this->grid[1] == 1 && this->grid[2] == 1) {
      // The kernel loops over its work by gridDim: its grid may shrink to
      // what this GPU holds at once (a part with fewer threads per SM than
      // the one that verified it). A failed query keeps the grid; the
      // cooperative launch then fails cleanly and the region runs ATen.
      int perSM = 0, sms = 0;
      CUdevice dev;
      if (cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
          cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                               dev) == CUDA_SUCCESS &&
          cuOccupancyMaxActiveBlocksPerMultiprocessor(
              &perSM, function,
              (int)(this->block[0] * this->block[1] * this->block[2]),
              (size_t)sharedBytes) == CUDA_SUCCESS &&
          perSM > 0)
        this->grid[0] = std::min<int64_t>(this->grid[0], (int64_t)perSM * sms);
    }
    if (sharedBytes > 48 * 1024)
      checkCu(cuFuncSetAttribute(
                  function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                  (int)sharedBytes),
              "cuFuncSetAttribute");
    device = at::cuda::current_device();
  }

  /// The failed guard, or "" when `inputs` are what the kernel was made for.
  std::string guard(const std::vector<at::Tensor> &inputs) const {
    if (inputs.size() != inputShapes.size())
      return "expected " + std::to_string(inputShapes.size()) + " inputs";
    for (size_t i = 0; i < inputs.size(); ++i) {
      const at::Tensor &t = inputs[i];
      std::string which = "input " + std::to_string(i) + ": ";
      if (!t.defined())
        return which + "undefined";
      if (!t.is_cuda() || t.get_device() != device)
        return which + "not on cuda:" + std::to_string(device);
      at::ScalarType type = i < inputTypes.size() ? inputTypes[i] : at::kFloat;
      bool mask = type == at::kBool;
      if (t.scalar_type() != type)
        return which + "dtype is not " + c10::toString(type);
      if (t.sizes() != at::IntArrayRef(inputShapes[i]))
        return which + "sizes differ from the traced ones";
      // The kernel reads a strided input where the traced strides put each
      // element (a transposed view); any other layout runs the ATen ops.
      if (i < inputStrides.size() && !inputStrides[i].empty()) {
        if (t.strides() != at::IntArrayRef(inputStrides[i]))
          return which + "strides differ from the traced ones";
        continue;
      }
      if (!t.is_contiguous())
        return which + "not contiguous";
      // Floats may be read as float4s (16-bit ones as groups of four); a
      // mask is read byte by byte.
      if (!mask && reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 != 0)
        return which + "not 16-byte aligned";
    }
    return "";
  }

  /// Launches the kernel; nullopt when a guard fails (run the ATen ops).
  std::optional<std::vector<at::Tensor>>
  run(const std::vector<at::Tensor> &inputs) {
    if (!guard(inputs).empty())
      return std::nullopt;
    c10::cuda::CUDAGuard deviceGuard(device);
    std::vector<at::Tensor> outputs;
    outputs.reserve(outputShapes.size());
    for (size_t o = 0; o < outputShapes.size(); ++o) {
      at::Tensor out;
      for (auto [output, input] : updates)
        if ((size_t)output == o)
          out = inputs[input]; // written in place, as the ATen op does
      if (!out.defined()) {
        // float32, float16 / bfloat16, or argmax / argmin's int64 indices.
        at::ScalarType type =
            o < outputTypes.size() ? outputTypes[o] : at::kFloat;
        at::TensorOptions opts =
            inputs.empty()
                ? at::TensorOptions().device(at::kCUDA, device).dtype(type)
                : inputs[0].options().dtype(type);
        // The layout the trace recorded (a permuted view's), which later
        // ops and their kernels' guards expect.
        out = o < outputStrides.size() && !outputStrides[o].empty()
                  ? at::empty_strided(outputShapes[o], outputStrides[o], opts)
                  : at::empty(outputShapes[o], opts);
      }
      outputs.push_back(out);
    }
    std::vector<void *> ptrs;
    ptrs.reserve(inputs.size() + outputs.size());
    for (const at::Tensor &t : inputs)
      ptrs.push_back(t.data_ptr());
    for (const at::Tensor &t : outputs)
      ptrs.push_back(t.data_ptr());
    if (workspaceBytes > 0)
      ptrs.push_back(
          workspaceFor(at::cuda::getCurrentCUDAStream(device).stream()));
    std::vector<void *> args;
    args.reserve(ptrs.size());
    for (void *&p : ptrs)
      args.push_back(&p);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream(device).stream();
    if (gridSync)
      // Every block resident at once, or an error instead of a hang.
      checkCu(cuLaunchCooperativeKernel(function, grid[0], grid[1], grid[2],
                                        block[0], block[1], block[2],
                                        sharedBytes, stream, args.data()),
              "cuLaunchCooperativeKernel");
    else
      checkCu(cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0],
                             block[1], block[2], sharedBytes, stream,
                             args.data(), nullptr),
              "cuLaunchKernel");
    ++launches;
    return outputs;
  }

  int64_t launches = 0;

private:
  /// The workspace of a split kernel: zeroed once and kept, as kb-verify
  /// keeps it (docs/verify.md): the kernel writes every partial before it
  /// reads it and leaves its grid barrier's count at 0, so no memset runs
  /// in front of each launch (2 of levit's 24 us batch norm, run112). Made
  /// on the first launch outside a CUDA graph capture; a capture before
  /// that gets a fresh zeroed one from the graph's pool, as before. A
  /// Region's launches run one at a time (one forward of a ModelNew at a
  /// time, as its CUDA graphs' static outputs also require).
  void *workspaceFor(cudaStream_t stream) {
    if (kept.defined())
      return kept.data_ptr();
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
    at::Tensor w = at::zeros(
        {workspaceBytes},
        at::TensorOptions().device(at::kCUDA, device).dtype(at::kByte));
    if (status != cudaStreamCaptureStatusNone) {
      capturing = w; // lives until the next launch; the graph's pool keeps it
      return w.data_ptr();
    }
    C10_CUDA_CHECK(cudaStreamSynchronize(stream));
    kept = w;
    return kept.data_ptr();
  }

  at::Tensor kept, capturing;

  CUmodule module = nullptr;
  CUfunction function = nullptr;
  std::vector<int64_t> grid, block;
  int64_t sharedBytes;
  std::vector<std::vector<int64_t>> inputShapes, outputShapes;
  // Per input and output, its element type (the job's dtype).
  std::vector<at::ScalarType> inputTypes, outputTypes;
  std::vector<std::pair<int64_t, int64_t>> updates;
  int64_t workspaceBytes = 0;
  bool gridSync = false;
  int device = 0;
  // Per input and output: the traced strides of a strided view, empty for
  // row-major.
  std::vector<std::vector<int64_t>> inputStrides, outputStrides;
};

/// NCHW (or NCDHW) -> channels-last copies for the inputs of convolutions
/// whose epilogue runs channels-last. ATen's `.contiguous(channels_last)`
/// uses its generic strided copy (measured 1.9 TB/s on an H200 for a
/// 537 MB activation, bench/NOTES.md); this is the classic tiled transpose
/// of each image's [C, S] matrix to [S, C] through shared memory, so reads
/// and writes are both coalesced. A block moves 32 channels x 32 * SX
/// positions with every load issued before the first shared store: on the
/// H200, SX = 2 took 0.261 ms for L2-2's 537 MB input where a 32 x 32 tile
/// took 0.318 (a copy: 0.275); with 3 channels SX = 4 took 0.137 ms vs 0.408
/// (bench/NOTES.md, session 11).
///
/// The `_tf32` entries also round every value to TF32, to nearest with ties
/// away from zero, as cuDNN's own NCHW->NHWC transpose does before its NCHW
/// TF32 forward convolution. cuDNN's channels-last kernel rounds ties to
/// even instead, which moves L2-1's outputs by 7e-4; on inputs rounded here
/// it agrees with the NCHW path to 7e-6 (bench/NOTES.md, session 12).
const char *kToChannelsLastSource = R"(
__device__ __forceinline__ float tf32_rna(float x) {
  unsigned u = __float_as_uint(x);
  if ((u & 0x7f800000u) != 0x7f800000u) // inf and nan unchanged
    u = (u + 0x1000u) & 0xffffe000u;
  return __uint_as_float(u);
}
template <int SX, bool TF32>
__device__ __forceinline__ void transpose(const float* __restrict__ in,
                                          float* __restrict__ out, int C,
                                          int S) {
  __shared__ float tile[32][32 * SX + 1]; // +1: no bank conflicts
  const long long image = (long long)blockIdx.z * C * S;
  const int s0 = blockIdx.x * 32 * SX, c0 = blockIdx.y * 32;
  float v[4 * SX];
#pragma unroll
  for (int k = 0; k < 4 * SX; ++k) {
    const int c = c0 + threadIdx.y + 8 * (k % 4),
              s = s0 + threadIdx.x + 32 * (k / 4);
    v[k] = c < C && s < S ? in[image + (long long)c * S + s] : 0.f;
  }
#pragma unroll
  for (int k = 0; k < 4 * SX; ++k)
    tile[threadIdx.y + 8 * (k % 4)][threadIdx.x + 32 * (k / 4)] = v[k];
  __syncthreads();
#pragma unroll
  for (int k = 0; k < 4 * SX; ++k) {
    const int j = threadIdx.y + 8 * k, s = s0 + j, c = c0 + threadIdx.x;
    if (c < C && s < S)
      out[image + (long long)s * C + c] =
          TF32 ? tf32_rna(tile[threadIdx.x][j]) : tile[threadIdx.x][j];
  }
}
#define KB_TRANSPOSE_ENTRY(NAME, SX, TF32)                                   \
  extern "C" __global__ void __launch_bounds__(256)                          \
  NAME(const float* __restrict__ in, float* __restrict__ out, int C, int S) { \
    transpose<SX, TF32>(in, out, C, S);                                      \
  }
KB_TRANSPOSE_ENTRY(kb_to_channels_last, 2, false)
KB_TRANSPOSE_ENTRY(kb_to_channels_last_few, 4, false)
KB_TRANSPOSE_ENTRY(kb_to_channels_last_tf32, 2, true)
KB_TRANSPOSE_ENTRY(kb_to_channels_last_few_tf32, 4, true)
)";

/// `t` (float32, contiguous, 4-d or 5-d, on the GPU) as a channels-last
/// tensor with the same values (rounded to TF32 when `roundTf32`); nullopt
/// when it is not such a tensor (the caller uses ATen's copy).
std::optional<at::Tensor> toChannelsLast(const at::Tensor &t,
                                         const std::string &arch,
                                         bool roundTf32) {
  if (!t.is_cuda() || t.scalar_type() != at::kFloat || !t.is_contiguous() ||
      (t.dim() != 4 && t.dim() != 5) || t.size(0) > 65535 ||
      t.size(1) > (1 << 20))
    return std::nullopt;
  int64_t C = t.size(1), S = t.numel() / std::max<int64_t>(1, t.size(0) * C);
  if (t.numel() == 0 || S > (int64_t(1) << 30) || C * S > (int64_t(1) << 31))
    return std::nullopt;
  // Fewer than 32 channels leave most of a 32-channel tile empty: the
  // wider one keeps more loads in flight per block.
  bool few = C < 32;
  int SX = few ? 4 : 2;
  static std::map<std::tuple<int, bool, bool>, CUfunction> functions;
  int device = t.get_device();
  c10::cuda::CUDAGuard deviceGuard(device);
  auto key = std::make_tuple(device, few, roundTf32);
  auto it = functions.find(key);
  if (it == functions.end()) {
    std::string entry = std::string("kb_to_channels_last") +
                        (few ? "_few" : "") + (roundTf32 ? "_tf32" : "");
    auto [cubin, lowered, log] = compile(kToChannelsLastSource, entry, arch);
    std::string bytes = cubin;
    CUmodule module;
    checkCu(cuModuleLoadData(&module, bytes.data()), "cuModuleLoadData");
    CUfunction fn;
    checkCu(cuModuleGetFunction(&fn, module, lowered.c_str()),
            "cuModuleGetFunction");
    it = functions.emplace(key, fn).first;
  }
  at::Tensor out =
      at::empty_like(t, t.dim() == 4 ? at::MemoryFormat::ChannelsLast
                                     : at::MemoryFormat::ChannelsLast3d);
  const void *in = t.data_ptr();
  void *dst = out.data_ptr();
  int c32 = (int)C, s32 = (int)S;
  void *args[] = {&in, &dst, &c32, &s32};
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(device).stream();
  checkCu(cuLaunchKernel(it->second, (unsigned)((S + 32 * SX - 1) / (32 * SX)),
                         (unsigned)((C + 31) / 32), (unsigned)t.size(0), 32, 8,
                         1, 0, stream, args, nullptr),
          "cuLaunchKernel");
  return out;
}

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "kb-rewrite runtime: NVRTC kernels with guards";
  m.def("compile", &compile, py::arg("source"), py::arg("entry"),
        py::arg("arch"));
  m.def("to_channels_last", &toChannelsLast, py::arg("tensor"),
        py::arg("arch"), py::arg("round_tf32") = false);
  py::class_<CallGuard>(m, "CallGuard")
      .def(py::init<std::vector<int64_t>, std::vector<std::vector<int64_t>>,
                    const std::vector<std::string> &>())
      .def("check", &CallGuard::check);
  py::class_<Region>(m, "Region")
      .def(py::init<
           const std::string &, const std::string &, std::vector<int64_t>,
           std::vector<int64_t>, int64_t, std::vector<std::vector<int64_t>>,
           std::vector<std::vector<int64_t>>,
           std::vector<std::pair<int64_t, int64_t>>, int64_t, bool,
           const std::vector<std::string> &, std::vector<std::vector<int64_t>>,
           std::vector<std::vector<int64_t>>,
           const std::vector<std::string> &>())
      .def("guard", &Region::guard)
      .def("run", &Region::run)
      .def_readonly("launches", &Region::launches);
}
