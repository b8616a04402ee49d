"""`schema`: the JSON Schema of a release's `--config` YAML file, or a typed module of its fields."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.errors import EXIT_OK, UsageError


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "schema", help="write the JSON Schema of a release's config file (or a typed module of its fields)",
        description="Write the JSON Schema (draft 2020-12) of the YAML file SGLang reads with --config: every key it "
                    "accepts with its type, choices, default and help; the cross-field checks JSON Schema can say "
                    "exactly as if/then with SGLang's message; the others under x-sglang-rules. --format "
                    "typeddict writes a Python module with a TypedDict of ServerArgs' fields instead.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--release", help="an SGLang release (extracted once, cached)")
    where.add_argument("--rules", help="rules.json (flags.json beside it)")
    where.add_argument("--git", metavar="REPO", help="a local SGLang git clone (with --rev)")
    parser.add_argument("--rev", help="a commit, tag or branch of --git (default: HEAD)")
    parser.add_argument("--index-url", help="package index for --release")
    parser.add_argument("--format", choices=("json-schema", "typeddict"), default="json-schema",
                        help="json-schema (default) or typeddict: a Python module for mypy and pyright")
    parser.add_argument("--page-url", metavar="TEMPLATE",
                        help="link each rule to its page: a URL template with {id}, e.g. "
                             "https://docs.example.org/errors/{id}.html (default: no link)")
    parser.add_argument("-o", "--output", help="write to this file instead of stdout")
    parser.set_defaults(func=cmd_schema)


def cmd_schema(args: argparse.Namespace) -> int:
    from ..core.serialize import dumps
    from ..products.extraction.output import require_writable, write_atomic

    if args.rev and not args.git:
        raise UsageError("--rev goes with --git")
    if args.page_url is not None:
        try:
            args.page_url.format(id="x")
        except (KeyError, IndexError, ValueError) as error:
            raise UsageError(f"--page-url: bad template ({error}); its one field is {{id}}") from None
    if args.output:
        require_writable(Path(args.output), "--output", folder=False)
    ruleset = _ruleset(args)
    if "config" not in ruleset.catalog.flags:
        raise UsageError(f"sglang {ruleset.label} reads no config file (it has no --config option)")
    if args.format == "typeddict":
        from ..products.schema.typed_module import typed_module

        text = typed_module(ruleset)
    else:
        from ..products.schema.config_schema import config_schema

        template = args.page_url
        text = dumps(config_schema(ruleset, (lambda rule: template.format(id=rule.id)) if template else
                                   (lambda rule: None)))
    if args.output:
        write_atomic(Path(args.output), text)
        print(f"{args.format} of sglang {ruleset.label} -> {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _ruleset(args: argparse.Namespace):
    from ..products.reuse.rulesets import git_rules, load_rules, release_rules

    if args.rules:
        return load_rules(args.rules)
    if args.git:
        return git_rules(args.git, args.rev or "HEAD")
    return release_rules(args.release, args.index_url)
