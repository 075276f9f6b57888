"""`triton.compiler` as far as kernels and their tests use it: the error classes (`triton.compiler.errors`)."""
from minitriton.compiler import errors
from minitriton.compiler.errors import CompilationError, CompileTimeAssertionFailure, UnsupportedLanguageConstruct

__all__ = ["errors", "CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct"]
