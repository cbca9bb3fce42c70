//===- Passes.td - kb passes --------------------------------*- tablegen -*-===//
#ifndef KB_TRANSFORMS_PASSES_TD
#define KB_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def Classify : Pass<"kb-classify", "mlir::ModuleOp"> {
  let summary = "Annotate every kb.aten/kb.opaque op with its pattern kind";
  let description = [{
    Kinds come from the op-semantics table, refined by operands: an
    elementwise op whose operand shapes differ from its result is a broadcast;
    batch_norm/instance_norm that use running statistics are a per-channel
    affine (broadcast); dropout with p == 0 or train == false is an identity
    (injective). Unknown ops are opaque.
  }];
  let dependentDialects = ["::kb::KbDialect"];
}

def Decompose : Pass<"kb-decompose", "mlir::ModuleOp"> {
  let summary = "Expand composite losses and distances into table ops";
  let description = [{
    The Composite rows of the op table (pairwise_distance,
    triplet_margin_loss and the mse, l1, smooth L1,
    Huber, KL-divergence and BCE-with-logits losses) become the ops ATen
    computes them with, so their elementwise part and reduction can fuse
    into one kernel. Losses whose ATen kernel fuses the elementwise part
    expand only when reduced; ops with broadcast operands, weights or
    non-float32 operands stay.
  }];
  let dependentDialects = ["::kb::KbDialect"];
}

def Simplify : Pass<"kb-simplify", "mlir::ModuleOp"> {
  let summary = "Rewrites that are exact in IEEE arithmetic";
  let description = [{
    Only rewrites that cannot change a single result bit (each carries its
    proof in a comment): identities (dropout p=0, x*1, x/1, x-0, x+(-0)),
    relu∘relu, leaky_relu after relu, merged clamps, and a multiply by 2
    undone by a divide by 2 around a clamp. Never applied when the value is
    mutated in place.
  }];
  let dependentDialects = ["::kb::KbDialect"];
}

def SinkViews : Pass<"kb-sink-views", "mlir::ModuleOp"> {
  let summary = "Move order-keeping views past the pointwise ops that read them";
  let description = [{
    f(view(a), ...) becomes view(f(a, ...)) for a pointwise op f (style
    None: numpy broadcasting) where the view keeps the row-major order of
    its elements (view, reshape, flatten, unflatten, squeeze, unsqueeze,
    view_as, reshape_as between contiguous tensors) and a is made by an
    op a region can hold: f then joins that op's region. Exact (element i
    is f of element i either way). f's other operands of the view's shape
    are viewed back to a's shape (a view of one whose input has a's shape
    is read directly); a broadcast operand stays where the view leaves the
    trailing dims it spans alone; otherwise, or where such an operand is
    made by a fusable op for f alone, f stays. A reshape, flatten or
    reshape_as of a tensor with non-row-major traced strides (a copy in
    eager) moves the same way: f reads the strided tensor and writes
    row-major, and the reshape after it is a view.
  }];
  let dependentDialects = ["::kb::KbDialect"];
}

def UnfuseLinearBias : Pass<"kb-unfuse-linear-bias", "mlir::ModuleOp"> {
  let summary = "Move a linear's bias into its fusable epilogue";
  let description = [{
    linear(x, W, b) (or addmm(b, x, W) with beta = alpha = 1) with one
    user, an elementwise, broadcast or reduction op (directly or through a
    view keeping the last dim), and a weight whose K >= N becomes
    add(linear(x, W, None), b) (add(mm(x, W), b)), so
    that cuBLAS runs the bias-free GEMM (faster than cuBLASLt's bias
    epilogue for such shapes) and the add fuses. Not bit-exact (another
    GEMM kernel may sum in another order); linears that the library
    epilogue table maps whole stay.
  }];
  let dependentDialects = ["::kb::KbDialect"];
  let options = [
    Option<"beforeSteps", "before-steps", "bool", "true",
           "Also split a linear whose result reaches a step op, a singular "
           "op or a convolution (false: those keep eager's GEMM and its "
           "last bits)">,
  ];
}

def FormRegions : Pass<"kb-form-regions", "mlir::ModuleOp"> {
  let summary = "Group anchors and memory-bound chains into kb.region ops";
  let description = [{
    TVM FuseOps / IREE dispatch-region rules: a library anchor (GEMM, conv)
    takes its elementwise/broadcast consumers; chains without an anchor form
    their own regions; one reduction may join and ends the pre-reduction part
    (pointwise ops on the reduced value may follow); no region may depend on
    itself through an op outside it. Ops left out get `kb.unfused` naming why.
  }];
  let dependentDialects = ["::kb::KbDialect"];
  let options = [
    Option<"maxOps", "max-ops", "unsigned", "64",
           "Largest number of fused ops in one region">,
    Option<"normsBeforeTF32", "norms-before-tf32", "bool", "true",
           "Let norms whose results reach a convolution join regions (false: "
           "they stay in ATen, whose cuDNN batch norm is the only one that "
           "passes 1e-4 there, and their consumers form regions of their own)">,
    Option<"reductionsBeforeSteps", "reductions-before-steps", "bool", "true",
           "Let sums, norms and softmax whose results reach a step op "
           "(comparison, rounding), and centring norms whose results reach a "
           "singular op (log, rsqrt), join regions (false: they stay in ATen, "
           "whose last bits a step or singular op needs, and their consumers "
           "form regions of their own)">,
  ];
}

def Outline : Pass<"kb-outline", "mlir::ModuleOp"> {
  let summary = "Turn each kb.region into a kb.kernel spec plus kb.launch";
  let description = [{
    The anchor stays in the function (it runs in cuBLAS/cuDNN); the memory
    -bound ops move into an isolated `kb.kernel` whose inputs record their
    role and broadcast pattern against the output.
  }];
  let dependentDialects = ["::kb::KbDialect"];
}

def StreamLayouts : Pass<"kb-stream-layouts", "mlir::ModuleOp"> {
  let summary = "Write row-major the values that only row kernels read";
  let description = [{
    A kernel output kept in a transposed traced layout (MLP-Mixer's
    residual stream) whose only readers are kernels with a reduction over
    the last dim is written row-major, and those kernels read it so: its
    layout is free, as nothing outside the kernels sees it, and row kernels
    read and write rows contiguously. The producer is marked `kb.relaid`
    (the runtime restrides such outputs where the region runs its ATen
    ops). Runs after kb-outline.
  }];
  let dependentDialects = ["::kb::KbDialect"];
}

def GemmOperandLayouts : Pass<"kb-gemm-operand-layouts", "mlir::ModuleOp"> {
  let summary = "Store kernel outputs so that the GEMMs reading them need no copy";
  let description = [{
    A pointwise or last-dim row kernel's output that ATen would copy before
    a GEMM is written in the layout the GEMM reads: row-major where linears
    read it as their input (or matmuls as a batched first operand), the
    last two dims swapped where they read its `transpose(-2, -1)`. Only
    where the kernel writes every output at full speed: the tiled transpose
    kernel for row-major and transposed outputs together, one transposed
    output staged by a row kernel. Runs after kb-stream-layouts.
  }];
  let dependentDialects = ["::kb::KbDialect"];
}

#endif // KB_TRANSFORMS_PASSES_TD
