"""memls: keeps a coding agent's memory healthy — one core, three fronts (LSP, CLI, notebook)."""

__version__ = "0.1.0"
