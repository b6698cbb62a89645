"""``python -m memls.lsp``: run the language server over stdio."""

from memls.lsp.server import main

if __name__ == "__main__":
    main()
