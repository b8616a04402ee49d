"""Content digests of what the witness stage reads: the keys under which a later extraction finds an
earlier one's outcomes and verdicts (`witness.attach_witnesses(..., memo=...)`).

A digest is of content, never of `hash()` (seeded anew in each process; formulas cache theirs) and
never of a rule id (a hash of the message): an id stands as the position of the first rule that has
it, so a changed message, which changes ids and nothing the stage computes, keeps the keys.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import replace

from ...core.model import And, Atom, Const, Formula, Not, Or, Rule, Write
from ...logic.expressions import UNKNOWN
from ...logic.launch import CommandLine
from ..check.linter import RuleSet
from ..check.words import own_lines

FORMAT = 1  # of the keys and of what the memo holds: raised when either changes meaning

# The fields of a rule the stage reads (each in the stage key, `snippet` and `enclosing` as the names
# `words.own_lines` takes from them), and those it never reads. tests/test_witness_memo.py checks
# that they cover `Rule` and that changing an unread field changes no outcome.
RULE_READ = frozenset({"id", "kind", "reachable", "trigger", "condition", "order", "location", "function",
                       "affected_by", "snippet", "enclosing", "places"})
RULE_UNREAD = frozenset({"exception", "message", "message_static", "call_path", "related", "example", "target",
                         "value", "assigns", "placeholders", "doc"})
# Where a flag is declared and its help: parsing, defaults, domains and words never read them.
FLAG_UNREAD = {"help": None, "file": "", "line": 0}

_SIZE = 16  # bytes of a digest


def digest(*parts: bytes | str) -> bytes:
    """One digest of the parts in order (each prefixed by its length: no two sequences of parts collide)."""
    hasher = hashlib.blake2b(digest_size=_SIZE)
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        hasher.update(len(data).to_bytes(8, "little"))
        hasher.update(data)
    return hasher.digest()


class Digests:
    """Digests of one rule set's formulas, resolution chains and guards.

    Memoized per object while the rule set lives (triggers share most of their subformulas: 0.5.23
    has about 10,000 distinct nodes under 1,400 rules); each entry keeps its object, so an id is
    never reused for another.
    """

    def __init__(self, ruleset: RuleSet) -> None:
        self.ruleset = ruleset
        self.read_sets = ruleset.read_sets
        self._known: dict[str, str] = {}
        self._chains: dict[tuple[str, int], bytes] = {}
        self._guards: dict[int, tuple[Rule, bytes]] = {}

    def formula(self, f: Formula) -> bytes:
        """The digest of a formula's structure: connectives, and each atom's term, operator and operand
        as `repr` spells them (a literal's type included: `1`, `1.0` and `True` differ). Kept on each
        node (`_digest`, pickled with it): a formula read back from the cache is not digested again."""
        return formula_digest(f)

    def write(self, write: Write) -> bytes:
        """What the evaluator reads of a write: when it runs and its cases (its place is its chain's)."""
        cases = [part for when, value in write.cases for part in (self.formula(when), repr(value))]
        return digest(b"write", self.formula(write.when), *cases)

    def reads(self, f: Formula) -> tuple[frozenset[str], frozenset[tuple[str, int]]]:
        """Every name whose value a formula's truth can depend on, and every resolution chain (field,
        writes seen) it reads, through the writes of those chains too (`logic.reads`)."""
        return self.read_sets.reads(f)

    def chain(self, name: str, version: int) -> bytes:
        """The writes a field's value after `version` of them comes from (fewer when the table is shorter)."""
        key = (name, version)
        if key not in self._chains:
            writes = self.ruleset.writes.get(name, ())[:version]
            self._chains[key] = digest(b"chain", name, str(version), *(self.write(w) for w in writes))
        return self._chains[key]

    def guard(self, rule: Rule) -> bytes:
        """All a guard's truth on a command line depends on, but the command line: its trigger, the
        writes its resolved fields come from, and the defaults and env-var declarations of the names
        it reads. (`check` and `definite_errors` evaluate `rule.effective` under the defaults, the
        command's values and env, the env-var declarations and the resolution table: nothing else.)"""
        found = self._guards.get(id(rule))
        if found is None:
            names, chains = self.reads(rule.effective)
            found = (rule, digest(b"guard", self.formula(rule.effective), "\n".join(map(self._name, sorted(names))),
                                  *(self.chain(*c) for c in sorted(chains))))
            self._guards[id(rule)] = found
        return found[1]

    def _name(self, name: str) -> str:
        """A name with its default and env-var declaration, as the evaluation reads them (a missing
        default and UNKNOWN read alike, `values.get(name, UNKNOWN)`: one spelling)."""
        found = self._known.get(name)
        if found is None:
            envs = self.ruleset.envs or {}
            found = self._known[name] = repr((name, self.ruleset.defaults.get(name, UNKNOWN), envs.get(name)))
        return found

    def stage(self) -> bytes:
        """Everything the whole stage reads: the flag catalog (where flags are declared and their help
        left out), env-var declarations, the resolution table, and each rule's read fields, with ids
        as positions."""
        rules = self.ruleset.rules
        first: dict[str, int] = {}
        for index, rule in enumerate(rules):
            first.setdefault(rule.id, index)

        def ids(items: Iterable[str]) -> tuple[int, ...]:
            return tuple(first.get(i, -1) for i in items)  # every unknown id reads alike: no rule

        envs = self.ruleset.envs
        parts = [str(FORMAT), repr([replace(flag, **FLAG_UNREAD) for flag in self.ruleset.flags]),
                 repr(sorted(envs.items()) if envs is not None else None)]
        for write in self.ruleset.resolution:
            parts.append(digest(repr((write.field, write.version, write.order, ids([write.rule]))), self.write(write)))
        for rule in rules:
            shape = (first[rule.id], rule.kind.value, rule.reachable, rule.order, rule.location, rule.function,
                     ids(rule.affected_by), sorted(own_lines(rule)), rule.trigger is None,
                     tuple(order for order, _ in rule.places))
            trigger = self.formula(rule.trigger) if rule.trigger is not None else b""
            parts.append(digest(repr(shape), trigger, self.formula(rule.condition),
                                *(self.formula(when) for _, when in rule.places)))
        return digest(b"stage", *parts)


def formula_digest(f: Formula) -> bytes:
    """`Digests.formula`: over the subformulas not yet digested, children first, each digest set on
    its node (a loop, not recursion: triggers are deeper than the recursion limit allows)."""
    if type(f) is Const:
        return _node_digest(f, [])
    found = getattr(f, "_digest", None)
    if found is not None:
        return found
    stack = [f]
    while stack:
        g = stack[-1]
        if hasattr(g, "_digest"):
            stack.pop()
            continue
        children = (g.arg,) if type(g) is Not else g.args if type(g) in (And, Or) else ()
        waiting = [c for c in children if type(c) is not Const and not hasattr(c, "_digest")]
        if waiting:
            stack.extend(waiting)
            continue
        stack.pop()
        object.__setattr__(g, "_digest", _node_digest(g, [formula_digest(c) if type(c) is Const else c._digest
                                                          for c in children]))  # type: ignore[union-attr]
    return f._digest  # type: ignore[union-attr]


def _node_digest(node: Formula, children: list[bytes]) -> bytes:
    if isinstance(node, Atom):
        return digest(b"atom", repr((node.term, node.op, node.other)))
    if isinstance(node, (Not, And, Or)):
        return digest(type(node).__name__, *children)
    return digest(b"const", repr(node))


def command_digest(command: CommandLine) -> bytes:
    """What a parsed command line gives an evaluation: its values and its env assignments."""
    return digest(b"command", repr(sorted(command.given.items())), repr(sorted(command.env.items())))
