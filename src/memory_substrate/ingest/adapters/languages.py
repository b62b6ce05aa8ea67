"""File classification for the repo map: which language a path is, and which are code."""

from __future__ import annotations

from pathlib import PurePosixPath

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".mdown", ".mkd"})

_BY_SUFFIX: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescript",
    ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".cs": "csharp", ".kt": "kotlin", ".kts": "kotlin", ".swift": "swift", ".scala": "scala",
    ".rb": "ruby", ".php": "php", ".lua": "lua", ".r": "r", ".jl": "julia", ".dart": "dart",
    ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hs": "haskell", ".ml": "ocaml",
    ".clj": "clojure", ".zig": "zig", ".nim": "nim", ".pl": "perl", ".vue": "vue", ".svelte": "svelte",
    ".sh": "bash", ".bash": "bash", ".zsh": "bash", ".fish": "fish", ".ps1": "powershell",
    ".sql": "sql", ".proto": "protobuf", ".graphql": "graphql",
    ".html": "html", ".htm": "html", ".css": "css", ".scss": "scss", ".less": "less",
    ".json": "json", ".jsonc": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml",
    ".ini": "ini", ".cfg": "ini", ".xml": "xml", ".csv": "csv",
    ".txt": "text", ".rst": "rst", ".adoc": "asciidoc", ".tex": "latex",
}  # fmt: skip
_BY_NAME: dict[str, str] = {
    "dockerfile": "dockerfile", "makefile": "make", "cmakelists.txt": "cmake",
    "gemfile": "ruby", "rakefile": "ruby", "justfile": "just",
}  # fmt: skip
# Languages worth trying to outline (code_symbols has grammars for some, tree-sitter-language-pack
# may have others); a file no outline covers gets its path and the head of its text (repo.py).
CODE_LANGUAGES = frozenset(
    {
        "python", "javascript", "typescript", "go", "rust", "java", "c", "cpp", "csharp", "kotlin",
        "swift", "scala", "ruby", "php", "lua", "julia", "dart", "elixir", "erlang", "haskell",
        "ocaml", "clojure", "zig", "nim", "perl", "bash",
    }
)  # fmt: skip
# Never read: no text to find in them, and reading large ones just to say so is waste.
BINARY_SUFFIXES = frozenset(
    {
        ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".tiff", ".psd",
        ".zip", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".tar", ".jar", ".war", ".whl",
        ".so", ".dylib", ".dll", ".exe", ".o", ".a", ".lib", ".bin", ".class", ".pyc", ".wasm",
        ".pdf", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".sqlite", ".db",
        ".npy", ".npz", ".pkl", ".pickle", ".pt", ".pth", ".onnx", ".parquet", ".safetensors", ".h5",
        ".woff", ".woff2", ".ttf", ".otf", ".eot", ".mp3", ".mp4", ".wav", ".mov", ".avi", ".ogg",
    }
)  # fmt: skip


def language_for(rel_path: str) -> str:
    """The language name for a path; ``text`` when nothing more specific is known."""
    p = PurePosixPath(rel_path)
    return _BY_NAME.get(p.name.lower()) or _BY_SUFFIX.get(p.suffix.lower(), "text")


def grammar_for(rel_path: str, language: str) -> str:
    """The tree-sitter grammar name; TSX needs its own grammar, JSX parses as JavaScript."""
    if PurePosixPath(rel_path).suffix.lower() == ".tsx":
        return "tsx"
    return language


def is_markdown(rel_path: str) -> bool:
    """Whether the repo map treats the path as Markdown documentation."""
    return PurePosixPath(rel_path).suffix.lower() in MARKDOWN_SUFFIXES
