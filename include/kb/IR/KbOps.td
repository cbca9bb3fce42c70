//===- KbOps.td - kb dialect operations ---------------------*- tablegen -*-===//
#ifndef KB_OPS_TD
#define KB_OPS_TD

include "kb/IR/KbDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/RegionKindInterface.td"

class Kb_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kb_Dialect, mnemonic, traits>;

def Kb_ConstantOp : Kb_Op<"constant", [Pure]> {
  let summary = "a prim::Constant";
  let description = [{
    Scalars, strings, lists and None. Tensor constants keep their printed
    literal (`{2}`) and, when it is one number, its value as `scalar`.
  }];
  let arguments = (ins AnyAttr:$value);
  let results = (outs AnyType:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Kb_ParameterOp : Kb_Op<"parameter", [Pure]> {
  let summary = "a module parameter, buffer or attribute (prim::GetAttr chain)";
  let arguments = (ins StrAttr:$name);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Kb_ListOp : Kb_Op<"list", [Pure]> {
  let summary = "prim::ListConstruct";
  let arguments = (ins Variadic<AnyType>:$elements);
  let results = (outs AnyType:$result);
  let assemblyFormat =
      "`(` $elements `)` attr-dict `:` functional-type($elements, $result)";
}

def Kb_AtenOp : Kb_Op<"aten"> {
  let summary = "an ATen operator known to the op-semantics table";
  let description = [{
    `name` is the aten name ("relu"), `overload` the resolved overload
    ("Tensor" for add.Tensor). Operands keep TorchScript's order; scalar
    arguments are `kb.constant` operands. `inplace` marks `relu_`-style
    variants. `kind` is written by `--kb-classify`.
  }];
  let arguments = (ins StrAttr:$name, DefaultValuedStrAttr<StrAttr, "">:$overload,
                   UnitAttr:$inplace, OptionalAttr<StrAttr>:$kind,
                   Variadic<AnyType>:$args);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat =
      "$name `(` $args `)` attr-dict `:` functional-type($args, $results)";
  let extraClassDeclaration = [{
    /// The op-semantics row of this op (never null for a verified op).
    const ::kb::OpInfo *getInfo();
    /// Operand bound to the schema argument `argName`, if present.
    ::mlir::Value getArg(::llvm::StringRef argName);
  }];
  let hasVerifier = 1;
}

def Kb_OpaqueOp : Kb_Op<"opaque"> {
  let summary = "an operator kb-rewrite does not model (kept as is)";
  let arguments = (ins StrAttr:$name, Variadic<AnyType>:$args);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region VariadicRegion<AnyRegion>:$blocks);
  let assemblyFormat =
      "$name `(` $args `)` ($blocks^)? attr-dict `:` functional-type($args, $results)";
}

def Kb_YieldOp : Kb_Op<"yield", [Pure, Terminator,
    ParentOneOf<["RegionOp", "KernelOp", "OpaqueOp"]>]> {
  let summary = "results of a region, kernel or nested TorchScript block";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let builders = [OpBuilder<(ins), [{ /* no values */ }]>];
}

def Kb_RegionOp : Kb_Op<"region", [SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a fusion region: an optional library anchor and its epilogue";
  let description = [{
    Formed by `--kb-form-regions`. `anchor` names the aten op that stays in
    cuBLAS/cuDNN (absent for pure memory-bound chains). Values computed inside
    and used outside are yielded.
  }];
  let arguments = (ins I64Attr:$id, OptionalAttr<StrAttr>:$anchor);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword (`->` `(` type($results)^ `)`)? $body";
  let hasVerifier = 1;
}

def Kb_KernelOp : Kb_Op<"kernel", [Symbol, IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "an outlined fusion region: the spec of one CUDA kernel";
  let description = [{
    Block arguments are the kernel inputs, the yield its outputs. `inputs`
    holds, per input, a dictionary with `role` (anchor-output, parameter,
    activation, scalar) and `broadcast` (per output dim: 1 when the input is
    broadcast along it). `anchor` names the library op that produces the
    first input.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$id,
                   OptionalAttr<StrAttr>:$anchor, ArrayAttr:$inputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
}

def Kb_LaunchOp : Kb_Op<"launch", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "runs an outlined kernel";
  let arguments = (ins FlatSymbolRefAttr:$kernel, Variadic<AnyType>:$args);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat =
      "$kernel `(` $args `)` attr-dict `:` functional-type($args, $results)";
}

#endif // KB_OPS_TD
