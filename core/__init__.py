"""The memls core: parsing, workspace, rules and operations — no LSP, no widgets.

Architecture invariant: nothing under ``memls.core`` imports pygls, lsprotocol or ipywidgets.
"""
