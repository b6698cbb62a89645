"""The `memls` command line: a click group whose subcommands load lazily.

Each command group lives in its own module and is imported only when invoked, so
`memls check one-file.md` does not pay for the language server or recall imports.
"""

from __future__ import annotations

import importlib

import click

from memls import __version__

# command name -> (module, attribute, one-line help shown in `memls --help`)
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "check": ("memls.cli.check", "check", "Check memory files against the rules."),
    "rules": ("memls.cli.check", "rules", "List every rule with its code and severity."),
    "serve": ("memls.cli.serve", "serve", "Run the language server."),
    "checkpoint": (
        "memls.cli.checkpoint",
        "checkpoint",
        "Save, resume, list and clear checkpoints.",
    ),
    "index": ("memls.cli.ops", "index", "Maintain the MEMORY.md index."),
    "bundle": ("memls.cli.ops", "bundle", "Approve a checkpoint bundle or show what is open."),
    "log": ("memls.cli.ops", "log", "Append to the append-only LOG.md."),
    "handoff": ("memls.cli.ops", "handoff", "Write or refresh the .handoff.md continuity prompt."),
    "recall": ("memls.cli.recall", "recall", "Index and search memory and transcripts."),
    "snapshot": ("memls.cli.snapshot", "snapshot", "Commit memory to a git ref and read it back."),
    "mcp": ("memls.cli.mcp", "mcp", "Serve memory to coding agents over MCP (stdio)."),
    "hook": (
        "memls.cli.hook",
        "hook",
        "Run memls at a Claude Code lifecycle event (JSON on stdin).",
    ),
    "secrets": (
        "memls.cli.secrets",
        "secrets",
        "Fingerprint a known fake for allow_secrets (the SC rules).",
    ),
    "mv": ("memls.cli.mv", "mv", "Rename a checkpoint, memory file or heading; links follow."),
}


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when that subcommand runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = _COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attr, _ = entry
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            return None
        command = getattr(module, attr)
        assert isinstance(command, click.Command)
        return command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["memls.argv"] = list(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> object:
        """With ``--json`` (or ``--format json``) a refusal's reason goes inside the JSON too."""
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            from memls.cli.common import echo_json_error, wants_json

            if not wants_json(ctx.meta.get("memls.argv", [])):
                raise
            echo_json_error(exc.format_message(), exc.exit_code)
            ctx.exit(exc.exit_code)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, _COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memls")
def main() -> None:
    """memls — checks, operations and recall for coding-agent memory files."""
