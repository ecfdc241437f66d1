"""ctypes declarations for libAttnMLIRCAPI.so (the attn and MLIR C APIs).

The library is looked up in this order:
  1. the path in the environment variable ATTN_MLIR_CAPI_LIBRARY;
  2. _mlir_libs/libAttnMLIRCAPI.so next to this file (the build tree's
     python_packages/ and an installed prefix's python_packages/ both have it).

Only what the package uses is declared. Every MLIR C API handle is a struct
holding one pointer; MlirStringRef is (data, length); MlirLogicalResult is one
int8. They are declared as ctypes structures and passed by value, as the C
functions take them.
"""

import ctypes
import os

_LIBRARY_NAME = "libAttnMLIRCAPI.so"


class _Handle(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]

    def __bool__(self):
        return bool(self.ptr)


def _handle(name):
    return type(name, (_Handle,), {})


MlirContext = _handle("MlirContext")
MlirDialectRegistry = _handle("MlirDialectRegistry")
MlirModule = _handle("MlirModule")
MlirOperation = _handle("MlirOperation")
MlirLocation = _handle("MlirLocation")
MlirIdentifier = _handle("MlirIdentifier")
MlirDiagnostic = _handle("MlirDiagnostic")
MlirPassManager = _handle("MlirPassManager")
MlirOpPassManager = _handle("MlirOpPassManager")
MlirExecutionEngine = _handle("MlirExecutionEngine")


class MlirStringRef(ctypes.Structure):
    # A void pointer, not c_char_p: MLIR's strings are not null-terminated,
    # and reading a c_char_p field runs strlen past the end of the buffer
    # (an AddressSanitizer heap-buffer-overflow in print callbacks).
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]

    @classmethod
    def of(cls, text):
        data = text.encode() if isinstance(text, str) else bytes(text)
        # NUL-terminated too: mlirExecutionEngineCreate reads its library
        # paths as C strings.
        buffer = ctypes.create_string_buffer(data, len(data) + 1)
        ref = cls(ctypes.cast(buffer, ctypes.c_void_p), len(data))
        ref._buffer = buffer  # keeps the bytes alive as long as the ref
        return ref

    def bytes(self):
        return ctypes.string_at(self.data, self.length) if self.length else b""

    def __str__(self):
        return self.bytes().decode(errors="replace")


class MlirLogicalResult(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int8)]

    def succeeded(self):
        return self.value != 0


# void (*)(MlirStringRef, void *userData)
MlirStringCallback = ctypes.CFUNCTYPE(None, MlirStringRef, ctypes.c_void_p)
# MlirLogicalResult (*)(MlirDiagnostic, void *userData). ctypes callbacks
# cannot return structures; MlirLogicalResult (one int8) is returned exactly
# like an int8 in the C calling conventions, so the callback returns c_int8.
MlirDiagnosticHandler = ctypes.CFUNCTYPE(
    ctypes.c_int8, MlirDiagnostic, ctypes.c_void_p
)

# Diagnostic severities (MlirDiagnosticSeverity).
SEVERITIES = ("error", "warning", "note", "remark")

_c = ctypes
_SIGNATURES = {
    # Registration (upstream's and attn's).
    "mlirDialectRegistryCreate": (MlirDialectRegistry, []),
    "mlirDialectRegistryDestroy": (None, [MlirDialectRegistry]),
    "mlirRegisterAllDialects": (None, [MlirDialectRegistry]),
    "mlirAttnRegisterAllDialects": (None, [MlirDialectRegistry]),
    "mlirRegisterAllPasses": (None, []),
    "mlirAttnRegisterAllPasses": (None, []),
    "mlirRegisterAllLLVMTranslations": (None, [MlirContext]),
    # Context and diagnostics.
    "mlirContextCreateWithRegistry": (
        MlirContext,
        [MlirDialectRegistry, _c.c_bool],
    ),
    "mlirContextDestroy": (None, [MlirContext]),
    "mlirContextAttachDiagnosticHandler": (
        _c.c_uint64,
        [MlirContext, MlirDiagnosticHandler, _c.c_void_p, _c.c_void_p],
    ),
    "mlirDiagnosticPrint": (None, [MlirDiagnostic, MlirStringCallback, _c.c_void_p]),
    "mlirDiagnosticGetLocation": (MlirLocation, [MlirDiagnostic]),
    "mlirDiagnosticGetSeverity": (_c.c_int, [MlirDiagnostic]),
    "mlirDiagnosticGetNumNotes": (_c.c_ssize_t, [MlirDiagnostic]),
    "mlirDiagnosticGetNote": (MlirDiagnostic, [MlirDiagnostic, _c.c_ssize_t]),
    "mlirLocationPrint": (None, [MlirLocation, MlirStringCallback, _c.c_void_p]),
    "mlirLocationIsAFileLineColRange": (_c.c_bool, [MlirLocation]),
    "mlirLocationFileLineColRangeGetFilename": (MlirIdentifier, [MlirLocation]),
    "mlirLocationFileLineColRangeGetStartLine": (_c.c_int, [MlirLocation]),
    "mlirLocationFileLineColRangeGetStartColumn": (_c.c_int, [MlirLocation]),
    "mlirIdentifierStr": (MlirStringRef, [MlirIdentifier]),
    # Modules and operations.
    "mlirModuleCreateParse": (MlirModule, [MlirContext, MlirStringRef]),
    "mlirModuleCreateParseFromFile": (MlirModule, [MlirContext, MlirStringRef]),
    "mlirModuleGetOperation": (MlirOperation, [MlirModule]),
    "mlirModuleDestroy": (None, [MlirModule]),
    "mlirOperationPrint": (None, [MlirOperation, MlirStringCallback, _c.c_void_p]),
    "mlirOperationVerify": (_c.c_bool, [MlirOperation]),
    # Passes.
    "mlirPassManagerCreateOnOperation": (
        MlirPassManager,
        [MlirContext, MlirStringRef],
    ),
    "mlirPassManagerDestroy": (None, [MlirPassManager]),
    "mlirPassManagerGetAsOpPassManager": (MlirOpPassManager, [MlirPassManager]),
    "mlirPassManagerEnableVerifier": (None, [MlirPassManager, _c.c_bool]),
    "mlirPassManagerRunOnOp": (MlirLogicalResult, [MlirPassManager, MlirOperation]),
    "mlirParsePassPipeline": (
        MlirLogicalResult,
        [MlirOpPassManager, MlirStringRef, MlirStringCallback, _c.c_void_p],
    ),
    "mlirOpPassManagerAddPipeline": (
        MlirLogicalResult,
        [MlirOpPassManager, MlirStringRef, MlirStringCallback, _c.c_void_p],
    ),
    "mlirAttnBuildCPUPipeline": (None, [MlirOpPassManager, _c.c_bool]),
    # Execution.
    "mlirExecutionEngineCreate": (
        MlirExecutionEngine,
        [
            MlirModule,
            _c.c_int,
            _c.c_int,
            _c.POINTER(MlirStringRef),
            _c.c_bool,
            _c.c_bool,
        ],
    ),
    "mlirExecutionEngineInitialize": (None, [MlirExecutionEngine]),
    "mlirExecutionEngineDestroy": (None, [MlirExecutionEngine]),
    "mlirExecutionEngineInvokePacked": (
        MlirLogicalResult,
        [MlirExecutionEngine, MlirStringRef, _c.POINTER(_c.c_void_p)],
    ),
}


def library_path():
    """The libAttnMLIRCAPI.so this package loads."""
    explicit = os.environ.get("ATTN_MLIR_CAPI_LIBRARY")
    if explicit:
        return explicit
    return os.path.join(os.path.dirname(__file__), "_mlir_libs", _LIBRARY_NAME)


def _load():
    path = library_path()
    try:
        library = ctypes.CDLL(path)
    except OSError as error:
        raise ImportError(
            f"attn_mlir: cannot load {path} ({error}). Use the package from a "
            f"build tree (build/python_packages) or an installed prefix "
            f"(<prefix>/python_packages), or set ATTN_MLIR_CAPI_LIBRARY."
        ) from error
    for name, (restype, argtypes) in _SIGNATURES.items():
        function = getattr(library, name)
        function.restype = restype
        function.argtypes = argtypes
    return library


lib = _load()


class StringCollector:
    """An MlirStringCallback that appends what it is given to a list."""

    def __init__(self):
        self.chunks = []
        self.callback = MlirStringCallback(self._append)

    def _append(self, text, _user_data):
        self.chunks.append(text.bytes())

    def text(self):
        return b"".join(self.chunks).decode(errors="replace")


def to_string(print_function, handle):
    """Runs an mlir*Print function on `handle` and returns the text."""
    collector = StringCollector()
    print_function(handle, collector.callback, None)
    return collector.text()
