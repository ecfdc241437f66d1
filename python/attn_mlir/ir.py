"""Contexts, modules, pass pipelines and diagnostics on the MLIR C API."""

import re

from . import _capi
from ._capi import MlirStringRef, lib


class Diagnostic:
    """One MLIR diagnostic: severity, message, location and attached notes.

    `location` is the location as MLIR prints it; `file`, `line` and
    `column` are set where it is a file location (None otherwise).
    """

    def __init__(self, severity, message, location, file, line, column, notes):
        self.severity = severity
        self.message = message
        self.location = location
        self.file = file
        self.line = line
        self.column = column
        self.notes = notes

    @classmethod
    def _from_c(cls, diagnostic):
        location = lib.mlirDiagnosticGetLocation(diagnostic)
        file = line = column = None
        if lib.mlirLocationIsAFileLineColRange(location):
            file = str(
                lib.mlirIdentifierStr(
                    lib.mlirLocationFileLineColRangeGetFilename(location)
                )
            )
            line = lib.mlirLocationFileLineColRangeGetStartLine(location)
            column = lib.mlirLocationFileLineColRangeGetStartColumn(location)
        notes = [
            cls._from_c(lib.mlirDiagnosticGetNote(diagnostic, i))
            for i in range(lib.mlirDiagnosticGetNumNotes(diagnostic))
        ]
        return cls(
            severity=_capi.SEVERITIES[lib.mlirDiagnosticGetSeverity(diagnostic)],
            message=_capi.to_string(lib.mlirDiagnosticPrint, diagnostic),
            location=_capi.to_string(lib.mlirLocationPrint, location),
            file=file,
            line=line,
            column=column,
            notes=notes,
        )

    def where(self):
        """`file:line:column`, or the printed location."""
        if self.file is not None:
            return f"{self.file}:{self.line}:{self.column}"
        return self.location

    def __str__(self):
        where = self.where()
        text = f"{where}: " if where else ""
        text += f"{self.severity}: {self.message}"
        for note in self.notes:
            text += "\n" + str(note)
        return text

    def __repr__(self):
        return f"<Diagnostic {self}>"


class MLIRError(Exception):
    """An MLIR operation failed: parsing, verification, a pass, a pipeline.

    `diagnostics` holds what MLIR reported (errors first, then warnings and
    remarks emitted on the way); `str()` shows the errors with their
    locations.
    """

    def __init__(self, what, diagnostics):
        self.what = what
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.severity == "error"] or diagnostics
        details = "\n".join(str(d) for d in errors) or "no diagnostic was reported"
        super().__init__(f"{what}:\n{details}")

    @property
    def errors(self):
        return [d for d in self.diagnostics if d.severity == "error"]


_passes_registered = False


def _register_passes():
    # Pass names live in one registry per process.
    global _passes_registered
    if not _passes_registered:
        lib.mlirRegisterAllPasses()
        lib.mlirAttnRegisterAllPasses()
        _passes_registered = True


class Context:
    """An MLIRContext with every upstream dialect and the attn dialect, every
    upstream and attn pass and pipeline by name, and the LLVM IR translations
    the execution engine needs. Diagnostics are collected, not printed.
    """

    def __init__(self):
        _register_passes()
        registry = lib.mlirDialectRegistryCreate()
        lib.mlirRegisterAllDialects(registry)
        lib.mlirAttnRegisterAllDialects(registry)
        # Single-threaded: diagnostics arrive in order, on this thread.
        self._context = lib.mlirContextCreateWithRegistry(registry, False)
        lib.mlirDialectRegistryDestroy(registry)
        lib.mlirRegisterAllLLVMTranslations(self._context)
        self._diagnostics = []
        self._handler = _capi.MlirDiagnosticHandler(self._on_diagnostic)
        lib.mlirContextAttachDiagnosticHandler(
            self._context, self._handler, None, None
        )

    def _on_diagnostic(self, diagnostic, _user_data):
        try:
            self._diagnostics.append(Diagnostic._from_c(diagnostic))
        except Exception:  # Never let an exception cross into C.
            pass
        return 1  # Handled: MlirLogicalResult success.

    def _take_diagnostics(self):
        taken, self._diagnostics = self._diagnostics, []
        return taken

    def parse(self, text):
        """Parses a module from text (locations name the file "-")."""
        self._take_diagnostics()
        module = lib.mlirModuleCreateParse(self._context, MlirStringRef.of(text))
        if not module:
            raise MLIRError("cannot parse the module", self._take_diagnostics())
        return Module(self, module)

    def parse_file(self, path):
        """Parses a module from a file (locations name the file)."""
        self._take_diagnostics()
        module = lib.mlirModuleCreateParseFromFile(
            self._context, MlirStringRef.of(str(path))
        )
        if not module:
            diagnostics = self._take_diagnostics()
            if not diagnostics:
                raise FileNotFoundError(path)
            raise MLIRError(f"cannot parse {path}", diagnostics)
        return Module(self, module)

    def close(self):
        """Destroys the context. Modules of it must not be used afterwards."""
        if getattr(self, "_context", None):
            lib.mlirContextDestroy(self._context)
            self._context = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


# An op anchor such as builtin.module(...) or func.func(...) starts a
# complete textual pipeline; anything else is a list of pipeline elements.
_ANCHORED = re.compile(r"^\s*[\w$.]+\.[\w$.]+\s*\(|^\s*any\s*\(")


def _pipeline_text(pipeline):
    if isinstance(pipeline, str):
        return pipeline
    return ",".join(pipeline)


class Module:
    """A builtin.module owned by Python, tied to its Context."""

    def __init__(self, context, module):
        self.context = context
        self._module = module

    @property
    def operation(self):
        return lib.mlirModuleGetOperation(self._module)

    def __str__(self):
        return _capi.to_string(lib.mlirOperationPrint, self.operation)

    @property
    def text(self):
        return str(self)

    def verify(self):
        """Raises MLIRError if the module does not verify."""
        self.context._take_diagnostics()
        if not lib.mlirOperationVerify(self.operation):
            raise MLIRError(
                "the module does not verify", self.context._take_diagnostics()
            )

    def run(self, pipeline):
        """Runs passes on the module, in place.

        `pipeline` is a pass or pipeline name ("attn-cpu-pipeline"), a
        comma-separated list with options ("canonicalize,attn-decompose",
        "attn-cpu-pipeline{fold=false}"), a list of such names, or a complete
        textual pipeline ("builtin.module(func.func(cse),attn-decompose)").
        Returns the warnings and remarks the passes emitted; raises MLIRError
        with the errors (and their locations) if a pass fails or the pipeline
        does not parse.
        """
        text = _pipeline_text(pipeline)
        context = self.context
        pm = lib.mlirPassManagerCreateOnOperation(
            context._context, MlirStringRef.of("builtin.module")
        )
        try:
            lib.mlirPassManagerEnableVerifier(pm, True)
            opm = lib.mlirPassManagerGetAsOpPassManager(pm)
            errors = _capi.StringCollector()
            context._take_diagnostics()
            add = (
                lib.mlirParsePassPipeline
                if _ANCHORED.match(text)
                else lib.mlirOpPassManagerAddPipeline
            )
            added = add(opm, MlirStringRef.of(text), errors.callback, None)
            if not added.succeeded():
                raise MLIRError(
                    f"invalid pass pipeline '{text}'",
                    context._take_diagnostics()
                    + [Diagnostic("error", errors.text(), "", None, None, None, [])],
                )
            return self._run(pm, f"pass pipeline '{text}' failed")
        finally:
            lib.mlirPassManagerDestroy(pm)

    def _run(self, pm, what):
        context = self.context
        context._take_diagnostics()
        result = lib.mlirPassManagerRunOnOp(pm, self.operation)
        diagnostics = context._take_diagnostics()
        if not result.succeeded():
            raise MLIRError(what, diagnostics)
        return diagnostics

    def run_cpu_pipeline(self, fold=True):
        """Runs the attn CPU pipeline through its builder
        (mlirAttnBuildCPUPipeline): the module ends up in the LLVM dialect."""
        pm = lib.mlirPassManagerCreateOnOperation(
            self.context._context, MlirStringRef.of("builtin.module")
        )
        try:
            opm = lib.mlirPassManagerGetAsOpPassManager(pm)
            lib.mlirAttnBuildCPUPipeline(opm, fold)
            return self._run(pm, "the attn CPU pipeline failed")
        finally:
            lib.mlirPassManagerDestroy(pm)

    def close(self):
        if getattr(self, "_module", None) and self.context._context:
            lib.mlirModuleDestroy(self._module)
        self._module = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def run_pipeline(text, pipeline, context=None):
    """Parses `text`, runs `pipeline` on it (see Module.run) and returns the
    resulting module's text. Raises MLIRError on failure."""
    module = (context or Context()).parse(text)
    module.run(pipeline)
    return str(module)
