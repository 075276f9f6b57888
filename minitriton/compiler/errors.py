"""`triton.compiler.errors`: the compile-error classes, minitriton's own (`minitriton.errors`)."""
from minitriton.errors import CompilationError, CompileTimeAssertionFailure, UnsupportedLanguageConstruct

__all__ = ["CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct"]
