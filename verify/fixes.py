"""Measure `check`'s ways out of definite errors on the user commands of `make verify`.

For every case of verify/.cache/cases-user.jsonl (commands from SGLang's docs, tests and public
recipes, with local model folders) under each profile, every definite error `check` reports gets
its fixes (checked on the command, as `check` prints them) or, when there is none, the proof that
no change of flags avoids it (`fixes.beyond_flags`). Each fix is applied and the fixed command
checked again: the error must be gone and no definite error the command did not have may appear.
Writes one JSON line per (profile, case, error) and, with --oracle, the fixed commands of first
errors as oracle cases ({"id", "argv", "env", "profile"}) for `oracle_server.py`.

    .venv/bin/python verify/fixes.py [--profiles cpu,H100,B200,A100] [--out verify/.cache/fixes.jsonl]
        [--oracle verify/.cache/fixes-oracle.jsonl]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from extractor.logic.platforms import find_platform  # noqa: E402
from extractor.logic.launch import parse_command  # noqa: E402
from extractor.logic.launch_words import split_command  # noqa: E402
from extractor.products.check.fixes import beyond_flags, checked_fixes  # noqa: E402
from extractor.products.check.linter import check, launch_facts  # noqa: E402
from extractor.products.site.pages import by_function  # noqa: E402
from extractor.products.reuse.rulesets import release_rules  # noqa: E402
from extractor.products.check.words import Flags  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="0.5.23")
    parser.add_argument("--cases", default=str(HERE / ".cache" / "cases-user.jsonl"))
    parser.add_argument("--profiles", default="cpu,H100,B200,A100")
    parser.add_argument("--out", default=str(HERE / ".cache" / "fixes.jsonl"))
    parser.add_argument("--oracle", help="write the fixed commands of first errors as oracle cases here")
    args = parser.parse_args()

    ruleset = release_rules(args.release)
    flags, groups = Flags(ruleset.flags), by_function(ruleset.rules)
    cases = [json.loads(line) for line in Path(args.cases).read_text(encoding="utf-8").splitlines() if line.strip()]
    rows, oracle = [], []
    for profile in args.profiles.split(","):
        platform = find_platform(profile)
        for case in cases:
            argv = list(case["argv"])
            env = dict(case.get("env") or {})
            tokens, assignments = split_command(argv)
            plain = [f"{k}={v}" for k, v in assignments.items()] + tokens
            report = check(ruleset, plain, env=env, platform=platform)
            if not report.definite:
                continue
            facts = launch_facts(parse_command(plain, ruleset.catalog), platform, None, None, ruleset.library, env,
                                 ruleset.envs)
            had = {f.rule.id for f in report.definite}
            for index, finding in enumerate(report.definite):
                rule = finding.rule
                fixes = checked_fixes(ruleset, rule, plain, flags, groups, env=env, facts=facts, had=had)
                verified = []
                for fix in fixes:
                    after = {f.rule.id for f in check(ruleset, list(fix.argv), env=env, platform=platform).definite}
                    verified.append(rule.id not in after and after <= had)
                    if index == 0:  # a fix that sets a variable puts `NAME=VALUE` in front: the oracle's env
                        fixed_argv, fixed_env = split_command(list(fix.argv))
                        oracle.append({"id": f"{profile}|{case['id']}|{len(oracle)}", "argv": fixed_argv,
                                       "env": {**env, **fixed_env}, "profile": profile, "rule": rule.id,
                                       "fix": fix.text})
                beyond = None if fixes else beyond_flags(ruleset, rule, plain, env=env, facts=facts)
                rows.append({"profile": profile, "case": case["id"], "first": index == 0, "rule": rule.id,
                             "place": f"{rule.location.file}:{rule.location.line}", "message": finding.text[:160],
                             "fixes": [f.text for f in fixes], "verified": verified,
                             "beyond_flags": beyond.text() if beyond else None})
    Path(args.out).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if args.oracle:
        Path(args.oracle).write_text("".join(json.dumps(c) + "\n" for c in oracle), encoding="utf-8")
    _summary(rows)
    return 0


def _summary(rows: list[dict]) -> None:
    by_profile = collections.defaultdict(list)
    for row in rows:
        by_profile[row["profile"]].append(row)
    for profile, found in by_profile.items():
        first = [r for r in found if r["first"]]
        for label, group in (("first errors", first), ("all definite errors", found)):
            fixed = sum(bool(r["fixes"]) for r in group)
            proven = sum(bool(r["beyond_flags"]) for r in group)
            bad = sum(not all(r["verified"]) for r in group if r["fixes"])
            print(f"{profile}: {label} {len(group)} (distinct rules {len({r['rule'] for r in group})}): "
                  f"with a fix {fixed}, proven beyond flags {proven}, neither {len(group) - fixed - proven}; "
                  f"fixes failing the re-check {bad}")
    left = collections.Counter((r["place"], r["message"][:70]) for r in rows if not r["fixes"] and not r["beyond_flags"])
    for (place, message), count in left.most_common(15):
        print(f"  neither x{count}: {place} {message}")


if __name__ == "__main__":
    sys.exit(main())
