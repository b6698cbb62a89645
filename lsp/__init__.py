"""The memls language server: the only package that knows LSP (pygls + lsprotocol).

``server.py`` builds the server and fans each LSP event out to the feature modules under
``features/``; ``convert.py`` is the one place core types become LSP types.
"""
