//===- KbDialect.td - The kb dialect ------------------------*- tablegen -*-===//
#ifndef KB_DIALECT_TD
#define KB_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Kb_Dialect : Dialect {
  let name = "kb";
  let summary = "TorchScript graphs, fusion regions and kernel specs";
  let description = [{
    ATen operators keep their aten names (`kb.aten "relu"`); operators the
    op-semantics table does not know import as `kb.opaque`, so importing a
    well-formed graph never fails. Structural ops mark fusion regions and the
    kernels outlined from them.
  }];
  let cppNamespace = "::kb";
  let useDefaultTypePrinterParser = 1;
}

class Kb_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Kb_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Kb_UnknownType : Kb_Type<"Unknown", "unknown"> {
  let summary = "element type of a tensor whose dtype was not printed";
}
def Kb_StrType : Kb_Type<"Str", "str"> { let summary = "TorchScript str"; }
def Kb_DeviceType : Kb_Type<"Device", "device"> {
  let summary = "TorchScript Device";
}
def Kb_ScalarType : Kb_Type<"Scalar", "scalar"> {
  let summary = "a number whose int/float kind is not known statically";
}
def Kb_ListType : Kb_Type<"List", "list"> {
  let summary = "TorchScript list";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}
def Kb_OptionalType : Kb_Type<"Optional", "optional"> {
  let summary = "TorchScript T?";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}
def Kb_ObjectType : Kb_Type<"Object", "object"> {
  let summary = "a TorchScript class instance (a module)";
  let parameters = (ins StringRefParameter<>:$className);
  let assemblyFormat = "`<` $className `>`";
}
def Kb_OtherType : Kb_Type<"Other", "other"> {
  let summary = "any other TorchScript type, kept by name";
  let parameters = (ins StringRefParameter<>:$typeName);
  let assemblyFormat = "`<` $typeName `>`";
}

#endif // KB_DIALECT_TD
