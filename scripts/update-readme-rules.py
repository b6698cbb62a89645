"""Regenerate the README's rule table from the registry (`python scripts/update-readme-rules.py`)."""

from pathlib import Path

from memls.cli.check import rules_markdown

readme = Path(__file__).resolve().parents[1] / "README.md"
text = readme.read_text(encoding="utf-8")
start = text.index("<!-- rules:start -->") + len("<!-- rules:start -->")
end = text.index("<!-- rules:end -->")
readme.write_text(text[:start] + "\n" + rules_markdown() + "\n" + text[end:], encoding="utf-8")
