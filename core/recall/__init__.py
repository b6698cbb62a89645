"""Recall: embeddings of memory files and transcripts, and the local models that make them.

Modules here import numpy, tokenizers and safetensors lazily so that ``llm`` can load the
plugin (``memls.core.recall.plugin``) on every command without paying for them.
"""
