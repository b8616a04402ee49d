"""Differential property test: each extracted condition holds exactly when its guard is the one that raises.

Small guard functions are generated from a fixed seed (nested if/elif/else, early return and raise,
and/or/not, chained and reversed comparisons over int, str, bool and optional fields, `in`, `is None`,
locals assigned once or per branch, fields assigned and read again, `problems.append(...)` then
`if problems:`, messaged asserts),
extracted, and then executed on random field values. Executing them is fine here: they are our own
generated code (the extractor itself never runs the code it reads).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from types import SimpleNamespace

from extractor.analysis.callgraph import Program
from extractor.analysis.run import Run
from extractor.analysis.modules import summarize
from extractor.analysis.rules import rules_of
from extractor.core.formula import evaluate, field_values, render
from extractor.core.model import Rule, RuleKind
from extractor.logic.evaluation import Context
from extractor.products.check.linter import RuleSet

SEED = 20240611
PROGRAMS = 2000
ASSIGNMENTS = 24  # random field assignments tried per program

INT_FIELDS = ("tp_size", "pp_size")
STR_FIELDS = ("mode", "backend")
BOOL_FIELDS = ("enable_x", "disable_y")
OPT_FIELDS = ("page_size",)  # None or an int
INT_VALUES = (-1, 0, 1, 2, 3)
STR_VALUES = ("decode", "prefill", "null")
OPT_VALUES = (None, 0, 2, 5)


@dataclass
class _Program:
    """Builds one guard function's source, keeping track of locals in scope and messages used."""

    rng: random.Random
    style: str  # "server_args", "cfg" or "self": how fields are read
    lines: list[str] = field(default_factory=list)
    locals: dict[str, str] = field(default_factory=dict)  # name -> "int" | "str" | "bool"
    messages: int = 0
    has_problems: bool = False
    budget: int = 8  # statements left: keeps programs (and their conditions) small enough to check fast

    # --- expressions ---------------------------------------------------------------------------

    def read(self, name: str) -> str:
        receiver = {"server_args": "server_args", "cfg": "cfg", "self": "self"}[self.style]
        roll = self.rng.random()
        if roll < 0.1:
            return f'getattr({receiver}, "{name}")'
        if roll < 0.2 and self.style == "cfg":
            return f"server_args.{name}"  # the view and the arguments read the same fields
        return f"{receiver}.{name}"

    def int_operand(self) -> str:
        names = [n for n, kind in self.locals.items() if kind == "int"]
        if names and self.rng.random() < 0.4:
            return self.rng.choice(names)
        return self.read(self.rng.choice(INT_FIELDS))

    def str_operand(self) -> str:
        names = [n for n, kind in self.locals.items() if kind == "str"]
        if names and self.rng.random() < 0.4:
            return self.rng.choice(names)
        text = self.read(self.rng.choice(STR_FIELDS))
        return text + ".upper()" if self.rng.random() < 0.1 else text

    def atom(self) -> str:
        rng = self.rng
        kind = rng.choice(("int", "int", "str", "str", "bool", "opt", "local"))
        if kind == "int":
            x, k = self.int_operand(), rng.choice(INT_VALUES)
            shape = rng.randrange(5)
            op = rng.choice(("==", "!=", "<", "<=", ">", ">="))
            if shape == 0:
                return f"{k} {op} {x}"  # literal on the left
            if shape == 1:
                low = rng.choice(INT_VALUES)
                return f"{low} <= {x} < {low + rng.randrange(1, 3)}"  # chained
            if shape == 2:
                return f"{x} {rng.choice(('in', 'not in'))} ({k}, {rng.choice(INT_VALUES)})"
            if shape == 3 and rng.random() < 0.3:
                return f"(w := {x}) {op} {k}"  # an assignment expression
            return f"{x} {op} {k}"
        if kind == "str":
            x, s = self.str_operand(), rng.choice(STR_VALUES)
            if x.endswith(".upper()"):
                s = s.upper()
            shape = rng.randrange(4)
            if shape == 0:
                return f'"{s}" {rng.choice(("==", "!="))} {x}'
            if shape == 1:
                return f'{x} {rng.choice(("in", "not in"))} ["{s}", "{rng.choice(STR_VALUES)}"]'
            return f'{x} {rng.choice(("==", "!="))} "{s}"'
        if kind == "bool":
            x = self.read(rng.choice(BOOL_FIELDS))
            return rng.choice((x, f"not {x}", f"{x} is True", f"{x} == False"))
        if kind == "opt":
            x = self.read(rng.choice(OPT_FIELDS))
            return rng.choice((f"{x} is None", f"{x} is not None", x, f"{x} == 2"))
        names = [n for n, k in self.locals.items() if k == "bool"]
        return rng.choice(names) if names else self.read(rng.choice(BOOL_FIELDS))

    def test(self, depth: int = 0) -> str:
        roll = self.rng.random()
        if depth >= 2 or roll < 0.5:
            return self.atom()
        if roll < 0.6:
            return f"not ({self.test(depth + 1)})"
        joiner = " and " if roll < 0.8 else " or "
        return f"({self.test(depth + 1)}{joiner}{self.test(depth + 1)})"

    def value(self, kind: str) -> str:
        """An expression of the local's kind: a read, a literal, an `or` default or a conditional."""
        rng = self.rng
        if kind == "bool":
            return self.test(1)
        if kind == "str":
            options = [self.read(rng.choice(STR_FIELDS)), f'"{rng.choice(STR_VALUES)}"']
            options.append(f"{options[0]} if {self.atom()} else {options[1]}")
            return rng.choice(options)
        options = [self.read(rng.choice(INT_FIELDS)), str(rng.choice(INT_VALUES))]
        options.append(f"{self.read(OPT_FIELDS[0])} or {rng.choice((1, 3))}")  # never None afterwards
        options.append(f"{options[0]} if {self.atom()} else {options[1]}")
        return rng.choice(options)

    # --- statements ----------------------------------------------------------------------------

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def message(self) -> str:
        self.messages += 1
        return f"m{self.messages}"

    def guard(self, indent: int) -> None:
        message = self.message()
        if self.rng.random() < 0.15:
            self.emit(indent, f'assert {self.test()}, "{message}"')
            return
        self.emit(indent, f"if {self.test()}:")
        placeholder = self.read(INT_FIELDS[0]).replace('getattr(', "str(").replace(', "', ".").replace('")', ")")
        text = f'f"{message} {{{placeholder}}}"' if self.rng.random() < 0.2 else f'"{message}"'
        self.emit(indent + 1, f"raise ValueError({text})")

    def block(self, indent: int, depth: int, top: bool) -> None:
        for index in range(self.rng.randint(1, 6 if top else 2)):
            if index and self.budget <= 0:
                break
            self.budget -= 1
            self.statement(indent, depth, top)

    def assign_field(self, indent: int) -> None:
        """`self.page_size = ...`: later reads of the field see the new value, not the launch value."""
        rng = self.rng
        receiver = {"server_args": "server_args", "cfg": "cfg", "self": "self"}[self.style]
        kind = rng.choice(("int", "str", "bool", "opt"))
        if kind == "opt":
            name, value = OPT_FIELDS[0], rng.choice(("None", "2", f"{self.read(OPT_FIELDS[0])} or 3"))
        else:
            name = rng.choice({"int": INT_FIELDS, "str": STR_FIELDS, "bool": BOOL_FIELDS}[kind])
            value = self.value(kind)
        self.emit(indent, f"{receiver}.{name} = {value}")

    def statement(self, indent: int, depth: int, top: bool) -> None:
        rng = self.rng
        if rng.random() < 0.12:
            self.assign_field(indent)
            return
        roll = rng.random()
        if roll < 0.3:
            self.guard(indent)
        elif roll < 0.4:
            self.emit(indent, f"if {self.test()}:")
            self.emit(indent + 1, "return")
        elif roll < 0.6 and depth < 2:
            self.branches(indent, depth)
        elif roll < 0.75 and top:
            name, kind = f"v{len(self.locals)}", rng.choice(("int", "str", "bool"))
            if rng.random() < 0.5:  # one value on each path
                self.emit(indent, f"if {self.test()}:")
                self.emit(indent + 1, f"{name} = {self.value(kind)}")
                self.emit(indent, "else:")
                self.emit(indent + 1, f"{name} = {self.value(kind)}")
            else:
                self.emit(indent, f"{name} = {self.value(kind)}")
            self.locals[name] = kind
        elif roll < 0.85 and self.locals and not top:
            name = rng.choice(sorted(self.locals))  # reassigned on this path only
            self.emit(indent, f"{name} = {self.value(self.locals[name])}")
        elif self.has_problems and rng.random() < 0.5:
            self.emit(indent, f"if {self.test()}:")
            self.emit(indent + 1, f'problems.append("{rng.choice(STR_VALUES)}")')
        elif self.has_problems and top:
            self.emit(indent, "if problems:")
            self.emit(indent + 1, f'raise ValueError("{self.message()}")')
        else:
            self.guard(indent)

    def branches(self, indent: int, depth: int) -> None:
        self.emit(indent, f"if {self.test()}:")
        self.block(indent + 1, depth + 1, top=False)
        for _ in range(self.rng.randrange(3)):
            self.emit(indent, f"elif {self.test()}:")
            self.block(indent + 1, depth + 1, top=False)
        if self.rng.random() < 0.5:
            self.emit(indent, "else:")
            self.block(indent + 1, depth + 1, top=False)

    def source(self) -> str:
        head = {
            "server_args": ["def check(server_args):"],
            "cfg": ["def check(server_args):", "    cfg = resolving_view(server_args)"],
            "self": ["class ServerArgs:", "    def _handle_check(self):"],
        }[self.style]
        indent = 2 if self.style == "self" else 1
        if self.rng.random() < 0.3:
            self.emit(indent, "problems = []")
            self.has_problems = True
        self.block(indent, 0, top=True)
        if self.has_problems:
            self.emit(indent, "if problems:")
            self.emit(indent + 1, f'raise ValueError("{self.message()}")')
        return "\n".join(head + self.lines) + "\n"


def generate(seed: int) -> str:
    rng = random.Random(seed)
    return _Program(rng, rng.choice(("server_args", "cfg", "self"))).source()


def extract_rules(source: str) -> list[Rule]:
    """The public path of `extract.extract`, on one in-memory module."""
    module = summarize("guard.py", source)
    program = Program(None, [module])
    rules = Run(program).execute().apply(rules_of((module, program.walk(fn)) for fn in module.functions.values()))
    return [rule for rule in rules if rule.kind is not RuleKind.ADJUSTMENT]  # the field assignments


def random_assignment(rng: random.Random) -> dict[str, object]:
    values: dict[str, object] = {name: rng.choice(INT_VALUES) for name in INT_FIELDS}
    values |= {name: rng.choice(STR_VALUES) for name in STR_FIELDS}
    values |= {name: rng.random() < 0.5 for name in BOOL_FIELDS}
    values |= {name: rng.choice(OPT_VALUES) for name in OPT_FIELDS}
    return values


def compiled(source: str):
    """The generated guard as a callable of a field assignment (executed, it is our own code)."""
    namespace: dict[str, object] = {"resolving_view": lambda server_args: server_args}
    exec(compile(source, "guard.py", "exec"), namespace)  # noqa: S102
    if "ServerArgs" in namespace:
        cls = namespace["ServerArgs"]

        def call(assignment: dict[str, object]) -> None:
            instance = cls()  # type: ignore[operator]
            instance.__dict__.update(assignment)
            instance._handle_check()

        return call
    return lambda assignment: namespace["check"](SimpleNamespace(**assignment))  # type: ignore[operator]


def hit(guard, assignment: dict[str, object]) -> str | None:
    """The message tag of the raise the guard hits on these values, or None."""
    try:
        guard(assignment)
    except (ValueError, AssertionError) as error:
        return str(error).split()[0]
    return None


def disagreements(seed: int) -> list[str]:
    source = generate(seed)
    rules = extract_rules(source)
    found: list[str] = []
    tags = sorted(r.message.split()[0] for r in rules)
    expected = sorted(re.findall(r'"(m\d+)\b', source))
    if tags != expected:
        found.append(f"rules for {tags}, raises {expected}")
    guard = compiled(source)
    rendered = [(rule, render(rule.condition)) for rule in rules]
    checks = [(rule.message.split()[0], rule.condition, text, compile(text, "condition", "eval")) for rule, text in rendered]
    checks.sort(key=lambda check: int(check[0][1:]))  # messages are numbered in source order
    rng = random.Random(seed)
    for _ in range(ASSIGNMENTS):
        assignment = random_assignment(rng)
        raised = hit(guard, assignment)
        # The guard that raises holds; every guard before it does not (it would have raised first);
        # without a raise none holds. Guards after the one that raised are not reached: anything goes.
        for tag, condition, text, code in checks:
            want = raised == tag
            got = evaluate(condition, field_values(assignment))
            try:
                got_source: object = bool(eval(code, {}, dict(assignment)))  # noqa: S307 - our own text
            except Exception as error:  # noqa: BLE001 - any failure is a disagreement to report
                got_source = f"{type(error).__name__}: {error}"
            if got is not want or got_source is not want:
                found.append(f"{tag}: raises={want} evaluate={got} eval(render)={got_source!r} "
                             f"on {assignment}\n    condition: {text}")
            if want:
                break
    return found


def test_generated_guards_agree_with_execution() -> None:
    failures = []
    for seed in range(SEED, SEED + PROGRAMS):
        found = disagreements(seed)
        if found:
            failures.append(f"seed {seed}:\n{generate(seed)}" + "\n".join(found[:3]))
        if len(failures) >= 3:
            break
    assert not failures, "\n\n".join(failures)


def test_generator_covers_the_shapes() -> None:
    """The generated programs exercise every construct the property is about."""
    corpus = "\n".join(generate(seed) for seed in range(SEED, SEED + 300))
    for shape in ("elif ", "else:", "return", " and ", " or ", "not (", " in ", "not in", "is None", "<= ",
                  "getattr(", "cfg.", "self.", "problems.append", "if problems:", "assert ", ' if ', " or 1",
                  ".upper()", 'f"m', ":=", "self.page_size = ", "server_args.tp_size = "):
        assert shape in corpus, shape
    assert generate(SEED) == generate(SEED)  # deterministic


# --- pipelines: handlers that write fields other handlers read -----------------------------------------

PIPELINES = 400


def generate_pipeline(seed: int) -> str:
    """A `ServerArgs` whose `__post_init__` runs several generated handlers in order (some under a test),
    a helper handed a field value, and a `check_server_args` run after them: the launch's shape."""
    rng = random.Random(seed)
    lines = ["class ServerArgs:", "    def __post_init__(self):"]
    methods: list[str] = []
    messages = 0
    for index in range(rng.randint(2, 4)):
        handler = _Program(rng, "self", budget=5)
        handler.messages = messages
        for _ in range(2):  # handlers write fields more often than single guards do: that is the point
            handler.assign_field(2)
        rng.shuffle(handler.lines)
        handler.block(2, 0, top=True)
        messages = handler.messages
        if rng.random() < 0.3:
            lines.append(f"        if {_Program(rng, 'self').test()}:")
            lines.append(f"            self._handle_{index}()")
        else:
            lines.append(f"        self._handle_{index}()")
        methods += ["", f"    def _handle_{index}(self):", *handler.lines]
        if rng.random() < 0.4:  # a helper handed a field's current value, as `_check(self.page_size)` is
            messages += 1
            field_name = rng.choice(INT_FIELDS)
            lines.append(f"        self._limit_{index}(self.{field_name})")
            methods += ["", f"    def _limit_{index}(self, value):",
                        f"        if value > {rng.choice(INT_VALUES)}:",
                        f'            raise ValueError("m{messages}")']
    final = _Program(rng, "self", budget=3)
    final.messages = messages
    final.block(2, 0, top=True)
    methods += ["", "    def check_server_args(self):", *final.lines]
    return "\n".join(lines + methods) + "\n"


def pipeline_disagreements(seed: int) -> list[str]:
    source = generate_pipeline(seed)
    module = summarize("server_args.py", source)
    program = Program(None, [module])
    run = Run(program).execute()
    rules = run.apply(rules_of((module, program.walk(fn)) for fn in module.functions.values()))
    guards = sorted((r for r in rules if r.kind is not RuleKind.ADJUSTMENT and r.reachable), key=lambda r: r.order)
    resolution = run.resolution(rules)
    namespace: dict[str, object] = {}
    exec(compile(source, "server_args.py", "exec"), namespace)  # noqa: S102 - our own generated code
    cls = namespace["ServerArgs"]
    found: list[str] = []
    rng = random.Random(seed)
    for _ in range(ASSIGNMENTS):
        assignment = random_assignment(rng)
        instance = cls()  # type: ignore[operator]
        instance.__dict__.update(assignment)

        def launch(_: object) -> None:
            instance.__post_init__()
            instance.check_server_args()

        raised = hit(launch, {})
        context = Context(dict(assignment), writes=RuleSet(tuple(rules), (), {}, None, resolution).writes)
        # In run order: the guard that raises holds, none before it does; without a raise none holds.
        for rule in guards:
            tag = rule.message.split()[0]
            want = raised == tag
            got = context.truth(rule.trigger)
            if got is not want:
                found.append(f"{tag} (order {rule.order}): raises={want} trigger={got} on {assignment}\n"
                             f"    trigger: {render(rule.trigger)}")
            if want:
                break
    return found


def test_generated_pipelines_agree_with_execution() -> None:
    failures = []
    for seed in range(SEED, SEED + PIPELINES):
        found = pipeline_disagreements(seed)
        if found:
            failures.append(f"seed {seed}:\n{generate_pipeline(seed)}" + "\n".join(found[:3]))
        if len(failures) >= 3:
            break
    assert not failures, "\n\n".join(failures)


def test_pipeline_generator_covers_the_shapes() -> None:
    corpus = "\n".join(generate_pipeline(seed) for seed in range(SEED, SEED + 100))
    for shape in ("self._handle_1()", "        if ", "def check_server_args(self):", "self._limit_", "self.page_size = ",
                  "self.tp_size = ", "self.mode = "):
        assert shape in corpus, shape
