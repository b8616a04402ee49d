"""Function summaries by a symbolic walk over statements: guards, calls and writes with their path conditions."""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import replace

import libcst as cst

from ..core.formula import atoms, conj, disj, fields_read, literal_source, neg, replaced
from ..core.model import FALSE, TRUE, Atom, Choices, Formula, Lit, RuleKind, Term, TermKind
from .conditions import tested_choice, to_formula
from .lines import Span, iter_statements
from .normalize import classify, normalize, term_source, value_fields
from .paths import (ADDING_METHODS, GROWING_METHODS, assign_unknown, assigned_names, fields_after_loop,
                    literal_items, merge_branches, merged_events, one_per_item_lists, path_options, quantified,
                    same_shape, string_key, within)
from .scope import (ALIAS_PARAMS, ENV_KEY, FIELD_KEY, Bound, Choice, Env, NonEmpty, Original, Rewritten,
                    Scope, Unknown, bind, bound_string, expression_children, code, dotted_name, env_call,
                    field_of, is_alias, local_text, iter_expression, with_entry)
from .events import CallEvent, FunctionInfo, FunctionSummary, GuardEvent, ReturnEvent, WriteEvent
from .messages import message_arg, message_of, placeholder_values
from .object_locals import OBJECT_LOCAL, OBJECT_PREFIX
from .run_sites import RunSites
from .statements import (BINARY_OF_AUGMENTED, CONFIG_LOAD_MESSAGE, JSON_TEMPLATE, LIBRARY_ERRORS, calls_outside_raises,
                         caught_by, caught_names, config_load_call, config_loads, empty_iterable, handler_raises, has_call, import_bindings,
                         json_loads_calls, platform_call, unpacked)

# Functions that declare a resolved value for fields given as keywords: `declare_resolution(sa, "src", x=1)`.
DECLARE_FUNCTIONS = frozenset({"declare_resolution", "declare_late_resolution"})
# Methods of the server arguments that pass their keywords on to one: 0.5.18's `self._late_resolution("src", x=1)`.
DECLARE_METHODS = frozenset({"_late_resolution"})
# Methods that leave a collection with at least one item.
_SHRINKING_METHODS = frozenset({"discard", "remove"})
_RETURNED_CALLS = 2  # helpers read through where one returns what another returns


def function_aliases(node: cst.FunctionDef, class_name: str | None) -> tuple[tuple[str, ...], frozenset[str]]:
    """Parameters, and the names that denote the server arguments inside the function."""
    params = [p.name.value for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)]
    aliases = {p for p in params if p in ALIAS_PARAMS}
    for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
        if p.annotation is not None and "ServerArgs" in code(p.annotation.annotation):
            aliases.add(p.name.value)
    if class_name is not None and "ServerArgs" in class_name and params:
        aliases.add(params[0])
    # `cfg = resolving_view(server_args)` and `sa = server_args` make more aliases, anywhere in the body.
    assignments = list(_simple_assignments(node))
    for _ in range(2):
        scope = Scope(frozenset(aliases), {})
        for target, value in assignments:
            if is_alias(value, scope, {}):
                aliases.add(target)
    return tuple(params), frozenset(aliases)


def walk_function(info: FunctionInfo, scope: Scope, spans: dict[int, Span], env: Env | None = None,
                  node: cst.FunctionDef | None = None, reads: frozenset[str] = frozenset()) -> FunctionSummary:
    """Walk a function body once, with `env` binding parameters to the caller's arguments if given;
    `node`: the function's tree when it is not `info.node` as parsed (`object_locals`), `reads`: then
    the attributes of the instance it reads."""
    summary = FunctionSummary(info, scope)
    walker = _Walker(summary, spans)
    entry = dict(env or {})
    if node is not None:  # a method of an instance: its guards may be read by running it (`RunSites`)
        walker.run_sites = RunSites(info.key, node, entry, reads)
    walker.suite((node or info.node).body, TRUE, dict(entry), ())
    return summary


def _lost_local(term: Term, env: Env) -> bool:
    """A term that reads a local whose value the walk did not follow (`self__quantization` after a
    loop rewrote it, `len(cfg_list)` of a list filled on some paths)."""
    if term.kind is not TermKind.OPAQUE:
        return False
    return any(name.startswith(OBJECT_PREFIX) or isinstance(env.get(name), (Unknown, NonEmpty))
               for name in _NAMES.findall(term.text))


_NAMES = re.compile(r"(?<![\w.'\"])[A-Za-z_]\w*")


def _simple_assignments(node: cst.FunctionDef):
    for stmt in iter_statements(node.body.body):
        if type(stmt) is cst.Assign:
            for t in stmt.targets:
                if type(t.target) is cst.Name:
                    yield t.target.value, stmt.value


class _Walker:
    """Walks one function body carrying the path condition and the locals."""

    def __init__(self, summary: FunctionSummary, spans: dict[int, Span]) -> None:
        self.summary = summary
        self.scope = summary.scope
        self.spans = spans
        self.order = 0
        # Dict locals built up for `declare_resolution(sa, "src", **fields)`: key, value, condition, place.
        self.staged: dict[str, list[tuple[str, str, Formula, tuple[int, ...], int, int]]] = {}
        self.staged_writes: dict[tuple[str, str, int], int] = {}  # (field, value, line) -> index in summary.writes
        self.tests: list[Formula] = []  # tests of the blocks being walked, innermost last
        self.catching: frozenset[str] = frozenset()  # exceptions the `try` blocks being walked catch
        self.run_sites: RunSites | None = None

    def run_condition(self, node: cst.Raise | cst.Assert, condition: Formula, env: Env) -> Formula | None:
        """For a guard of an instance's method whose test reads a local the walk lost (`self.quantization`
        after a loop rewrote it): the method run over the launch's values reaches it."""
        if self.run_sites is None or not any(_lost_local(a.term, env) for a in atoms(condition)):
            return None
        return self.run_sites.reached(node, self.scope)

    def as_written(self, message: str) -> str:
        """A message of an instance's method as its source spells it: `{self.quantization}`, not the
        local `self__quantization` the walk reads it as."""
        return OBJECT_LOCAL.sub("self.", message) if self.run_sites is not None else message

    @contextmanager
    def within(self, test: Formula):
        """Walk a block entered when `test` holds."""
        self.tests.append(test)
        try:
            yield
        finally:
            self.tests.pop()

    def anchor(self, *more: Formula) -> tuple[str, ...]:
        return fields_read(conj(*self.tests, *more))

    # Each walk returns (return_exit, loop_exit, env): the conditions, relative to the block's entry,
    # under which it returns from the function or leaves the loop (break/continue). A raise or a failed
    # assert is no exit here: it ends the launch, so whatever runs after it runs only if it did not
    # fire, and a condition need not say so (the run's order says which error comes first).
    def block(self, stmts, ctx: Formula, env: Env, nest: tuple[int, ...]) -> tuple[Formula, Formula, Env]:
        ret: Formula = FALSE
        brk: Formula = FALSE
        running: Formula = TRUE
        for stmt in stmts:
            small = stmt.body if type(stmt) is cst.SimpleStatementLine else [stmt]
            for node in small:
                # Dead code after an unconditional exit is still walked: its guards are reported,
                # with the condition False.
                r, b, env = self.statement(node, conj(ctx, running), env, nest)
                ret = disj(ret, conj(running, r))
                brk = disj(brk, conj(running, b))
                running = conj(running, neg(disj(r, b)))
        return ret, brk, env

    def suite(self, suite: cst.BaseSuite, ctx: Formula, env: Env, nest: tuple[int, ...]):
        return self.block(suite.body, ctx, env, nest)

    def statement(self, node: cst.CSTNode, ctx: Formula, env: Env, nest: tuple[int, ...]):
        if type(node) is cst.If:
            return self.if_(node, ctx, env, nest)
        if type(node) in (cst.For, cst.While):
            return self.loop(node, ctx, env, nest)
        if type(node) in (cst.Try, cst.TryStar):
            return self.try_(node, ctx, env, nest)
        if type(node) is cst.With:
            for item in node.items:
                env = self.calls_in(item.item, ctx, env)
                if item.asname is not None:
                    env = assign_unknown(env, item.asname.name, self.scope)
            return self.suite(node.body, ctx, env, nest)
        if type(node) is cst.Match:
            return self.match(node, ctx, env, nest)
        if type(node) in (cst.FunctionDef, cst.ClassDef):
            return FALSE, FALSE, {**env, node.name.value: Unknown(node.name.value)}
        return self.small(node, ctx, env, nest)

    def if_(self, node: cst.If, ctx: Formula, env: Env, nest: tuple[int, ...]):
        # The calls of the test run before either branch (their raises are the launch's too).
        env = self.calls_in(node.test, ctx, env)
        test, tested = to_formula(node.test, self.scope, env), tested_choice(node.test, self.scope, env)
        env = self.walrus(node.test, env)
        line = self.spans[id(node)][0]
        with self.within(test):
            r1, b1, env1 = self.suite(node.body, conj(ctx, test), env, nest + (line,))
        if node.orelse is None:
            r2, b2, env2 = FALSE, FALSE, env
        elif type(node.orelse) is cst.If:
            r2, b2, env2 = self.if_(node.orelse, conj(ctx, neg(test)), env, nest)
        else:
            with self.within(neg(test)):
                r2, b2, env2 = self.suite(node.orelse.body, conj(ctx, neg(test)), env, nest)
        ret = disj(conj(test, r1), conj(neg(test), r2))
        brk = disj(conj(test, b1), conj(neg(test), b2))
        if disj(r1, b1) == TRUE:
            merged = env2
        elif disj(r2, b2) == TRUE:
            merged = env1
        else:
            merged = merge_branches(env, env1, env2, test, tested)
        return ret, brk, merged

    def loop(self, node: cst.For | cst.While, ctx: Formula, env: Env, nest: tuple[int, ...]):
        if type(node) is cst.For and node.orelse is None:
            items = literal_items(node, env)
            if items is not None:
                return self.unrolled(node, items, ctx, env, nest)
        if type(node) is cst.For and empty_iterable(node.iter, self.scope, env):
            # `for predicate, fn in _BY_PREDICATE:` over a registry nothing fills: the body never runs.
            env = self.calls_in(node.iter, ctx, env)
            if node.orelse is not None:
                return self.suite(node.orelse.body, ctx, env, nest)
            return FALSE, FALSE, env
        if type(node) is cst.For:
            # The body runs for an item of the iterable: `item in iterable` is its (opaque) context.
            iter_text, fields = term_source(node.iter, self.scope, env)
            target = code(node.target)
            if type(node.target) is cst.Tuple and not node.target.lpar:
                target = f"({target})"
            env = self.calls_in(node.iter, ctx, env)
            context = Atom(classify(f"{target} in {iter_text}", fields))
        else:
            context = to_formula(node.test, self.scope, env)
            env = self.walrus(node.test, env)
        changed = assigned_names(node)
        loop_env = dict(env)
        for name in changed:
            fields = value_fields(env[name], self.scope) if name in env else ()
            loop_env[name] = Unknown(name, fields)
        first = len(self.summary.guards)
        with self.within(context):
            r, _, body_env = self.suite(node.body, conj(ctx, context), loop_env, nest)
        if type(node) is cst.For:  # a guard of the body fires for some item: its item test as one term
            self.summary.guards[first:] = quantified(self.summary.guards[first:], node, context)
        ret = conj(context, r)
        loop_env = {**fields_after_loop(loop_env, body_env, self._body_ran(node, context, env)),
                    **(one_per_item_lists(node, env) if type(node) is cst.For else {})}
        if node.orelse is not None:
            r2, _, _ = self.suite(node.orelse.body, ctx, loop_env, nest)
            ret = disj(ret, r2)
        return ret, FALSE, loop_env

    def _body_ran(self, node: cst.For | cst.While, context: Formula, env: Env) -> Formula:
        """When a loop's body ran at least once: a `for` over a local or a field (a list, tuple, set or
        dict the launch holds) ran when that collection is not empty; otherwise as `context` says."""
        if type(node) is cst.For and type(node.iter) in (cst.Name, cst.Attribute) and (
                field_of(node.iter, self.scope, env) is not None
                or type(node.iter) is cst.Name and isinstance(env.get(node.iter.value), Bound)):
            return to_formula(node.iter, self.scope, env)
        return context

    def unrolled(self, node: cst.For, items: list[Env], ctx: Formula, env: Env, nest: tuple[int, ...]):
        """`for flag, name in ((cfg.a, "--a"), (cfg.b, "--b")):` walked once per item, in order.

        A guard of the body fires when it fires for some item that a return or raise of an earlier item
        did not stop; its events from all items become one, under the disjunction of their conditions.
        """
        summary = self.summary
        start = {name: len(events) for name, events in self._event_lists().items()}
        ret: Formula = FALSE
        running: Formula = TRUE
        # Walked relative to the loop's entry, so the disjunction over items does not repeat `ctx` in
        # each disjunct; the loop's context is put in front of every new event afterwards.
        after = dict(env)
        for bindings in items:
            r, _, item_env = self.suite(node.body, running, {**after, **bindings}, nest)
            ret = disj(ret, conj(running, r))
            running = conj(running, neg(r))
            # What the item left is what the next item starts from: fields, and locals built up item
            # by item (`renamed[attr] = ...`), which read after the loop as the last item left them.
            after = dict(item_env)
        summary.guards[start["guards"]:] = merged_events(summary.guards[start["guards"]:], lambda g: (g.line, g.kind, g.exception, g.message))
        summary.writes[start["writes"]:] = merged_events(summary.writes[start["writes"]:], lambda w: (w.line, w.field, w.value))
        for name, events in self._event_lists().items():
            first = start.get(name, 0)
            events[first:] = [within(event, ctx) for event in events[first:]]
        return ret, FALSE, after

    def _event_lists(self) -> dict[str, list]:
        """Every list the walk appends conditioned events to, by name."""
        lists = {"guards": self.summary.guards, "writes": self.summary.writes, "calls": self.summary.calls,
                 "returns": self.summary.returns}
        lists.update({f"staged {local}": entries for local, entries in self.staged.items()})
        return lists

    def try_(self, node: cst.Try | cst.TryStar, ctx: Formula, env: Env, nest: tuple[int, ...]):
        start = len(self.summary.guards)
        # What the handlers catch, a callee's raise of it included: such a raise does not end the launch.
        catching = self.catching
        self.catching = catching | {name for h in node.handlers if not handler_raises(h) for name in caught_names(h)}
        try:
            r_body, b_body, body_env = self.suite(node.body, ctx, env, nest)
        finally:
            self.catching = catching
        body_raises = [i for i in range(start, len(self.summary.guards)) if self.summary.guards[i].kind is RuleKind.RAISE]
        loading = config_load_call(node.body)
        caught_failures: set[int] = set()  # a library's error the body's call raises that a handler takes
        ret, brk = (FALSE, FALSE) if node.handlers else (r_body, b_body)
        for handler in node.handlers:
            # `raised(E)`: the try body raised E; an opaque atom that still reads as Python.
            caught = code(handler.type) if handler.type is not None else "BaseException"
            if type(handler.type) is cst.Tuple:
                caught = ", ".join(code(e.value) for e in handler.type.elements)
            # A `raise E(...)` of the body itself that this handler catches does not leave the try:
            # the handler runs when it fires (`except ValueError as exc: raise AssertionError(str(exc))`).
            names = {name.strip().rsplit(".", 1)[-1] for name in caught.split(",")}
            taken = [i for i in body_raises if caught_by(self.summary.guards[i].exception, names)]
            if loading is not None:  # the load's own guard: `elsewhere` below says when it raised
                caught_failures.update(i for i in taken if self.summary.guards[i].message == CONFIG_LOAD_MESSAGE)
                taken = [i for i in taken if i not in caught_failures]
            body_raises = [i for i in body_raises if i not in taken]
            fired = [self.summary.guards[i] for i in taken]
            for i in taken:
                self.summary.guards[i] = replace(self.summary.guards[i], condition=FALSE)
            caught_failures.update(i for i in taken if self.summary.guards[i].exception in LIBRARY_ERRORS)
            # Beyond those, only a call can raise what it catches (a body of tests and raises cannot).
            # A body that is one call of the platform's method names it: a profile says whether it raises.
            what = f"{caught}, {call}" if (call := platform_call(node.body)) else caught
            # (`json.loads` of a value the launch gives raises no ValueError but the one spelled out)
            json_modeled = names <= {"JSONDecodeError", "ValueError"}
            elsewhere = Atom(classify(f"raised({what})", ())) if not fired or calls_outside_raises(node.body, json_modeled) \
                else FALSE
            if loading is not None:  # `AutoConfig.from_pretrained(path, ...)`: the checkpoint and transformers say
                kinds = f"({caught})" if "," in caught else caught
                elsewhere = to_formula(cst.parse_expression(f"raised({kinds}, {code(loading)})"), self.scope, env)
            context = disj(elsewhere, *(g.condition for g in fired))
            handler_env = dict(body_env)
            if handler.name is not None:
                handler_env = assign_unknown(handler_env, handler.name.name, self.scope)
                if loading is not None:  # `str(e)`: the message of what the load raised
                    said = cst.parse_expression(f"raised_message({kinds}, {code(loading)})")
                    handler_env[handler.name.name.value] = bind(said, env)
            first_of_handler = len(self.summary.guards)
            with self.within(context):
                r, b, _ = self.suite(handler.body, conj(ctx, context), handler_env, nest)
            if len(fired) == 1 and handler.name is not None:
                self._reraised(first_of_handler, handler.name.name.value, fired[0])  # type: ignore[union-attr]
            ret, brk = disj(ret, conj(context, r)), disj(brk, conj(context, b))
        for i in sorted(caught_failures, reverse=True):
            del self.summary.guards[i]  # not a guard: the handler goes on, or raises its own error
        for extra in (node.orelse, node.finalbody):
            if extra is not None:
                r, b, body_env = self.suite(extra.body, ctx, body_env, nest)
                ret, brk = disj(ret, r), disj(brk, b)
        return ret, brk, body_env

    def _reraised(self, first: int, name: str, caught: GuardEvent) -> None:
        """`raise AssertionError(str(exc))` of the one raise caught: the caught message is what it says."""
        for i in range(first, len(self.summary.guards)):
            guard = self.summary.guards[i]
            if guard.kind is RuleKind.RAISE and guard.message in (f"{{str({name})}}", f"{{{name}}}"):
                self.summary.guards[i] = replace(guard, message=caught.message, message_static=caught.message_static)

    def match(self, node: cst.Match, ctx: Formula, env: Env, nest: tuple[int, ...]):
        ret: Formula = FALSE
        brk: Formula = FALSE
        earlier: Formula = FALSE  # a case runs only if no earlier case matched
        for case in node.cases:
            matched = self.pattern(case.pattern, node.subject, env)
            if case.guard is not None:
                matched = conj(matched, to_formula(case.guard, self.scope, env))
            context = conj(neg(earlier), matched)
            with self.within(matched):
                r, b, _ = self.suite(case.body, conj(ctx, context), env, nest)
            ret, brk = disj(ret, conj(context, r)), disj(brk, conj(context, b))
            earlier = disj(earlier, matched)
        return ret, brk, env

    def pattern(self, pattern: cst.MatchPattern, subject: cst.BaseExpression, env: Env) -> Formula:
        """When a `case` pattern matches: values and `|` exactly, captures always, the rest opaque."""
        if type(pattern) in (cst.MatchValue, cst.MatchSingleton):
            operator = cst.Equal() if type(pattern) is cst.MatchValue else cst.Is()
            test = cst.Comparison(subject, [cst.ComparisonTarget(operator, pattern.value)])
            return to_formula(test, self.scope, env)
        if type(pattern) is cst.MatchOr:
            return disj(*(self.pattern(p.pattern, subject, env) for p in pattern.patterns))
        if type(pattern) is cst.MatchAs and pattern.pattern is None:
            return TRUE  # `case _:` or `case name:`
        text, fields = term_source(subject, self.scope, env)
        return Atom(classify(f"matches({text}, {literal_source(code(pattern))})", fields))

    def small(self, node: cst.CSTNode, ctx: Formula, env: Env, nest: tuple[int, ...]):
        line, end_line = self.spans.get(id(node), (0, 0))
        if type(node) in (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Expr, cst.Return) and node.value is not None:
            self.library_failures(node.value, ctx, env, nest, line, end_line)
        if type(node) is cst.Raise:
            if node.exc is not None:
                self.calls_in(node.exc, ctx, env)
                self.raise_(node, ctx, env, nest, line, end_line)
            # A bare `raise` passes on what its handler caught: an error raised elsewhere, by a guard
            # of a callee or by a library, not a guard of its own.
            return FALSE, FALSE, env
        if type(node) is cst.Return:
            if node.value is not None:
                self.calls_in(node.value, ctx, env)
                if self.summary.info.declares and type(node.value) is cst.Dict:
                    self.declared(node.value, ctx, env, nest, line, end_line)
                elif self.summary.info.declares and type(node.value) is cst.Name and node.value.value in self.staged:
                    self.write_staged(node.value.value, ctx)  # `overrides["x"] = v` ... `return overrides`
            self.summary.returns.append(ReturnEvent(ctx, node.value, env))
            return TRUE, FALSE, env
        if type(node) is cst.Assert:
            failed = neg(to_formula(node.test, self.scope, env))
            placeholders: tuple[tuple[str, Lit | Term | Choices], ...] = ()
            if node.msg is not None:
                message, static = message_of(node.msg, self.scope, env)
                placeholders = placeholder_values(node.msg, self.scope, env)
            else:  # the launch fails with a bare AssertionError at this line: say so, with what it asserts
                message, static = f"AssertionError without a message: assert {' '.join(code(node.test).split())}", True
            message = self.as_written(message)
            self.order += 1
            self.summary.guards.append(
                GuardEvent(
                    RuleKind.ASSERT, "AssertionError", message, static, line, end_line, conj(ctx, failed), nest,
                    self.order, self.anchor(failed), self.run_condition(node, conj(ctx, failed), env), placeholders,
                )
            )
            return FALSE, FALSE, env
        if type(node) in (cst.Break, cst.Continue):
            return FALSE, TRUE, env
        if type(node) is cst.Assign:
            env = self.calls_in(node.value, ctx, env)
            for target in node.targets:
                env = self.assign(target.target, node.value, ctx, env, nest, line, end_line)
            return FALSE, FALSE, env
        if type(node) is cst.AnnAssign:
            if node.value is not None:
                env = self.calls_in(node.value, ctx, env)
                env = self.assign(node.target, node.value, ctx, env, nest, line, end_line)
            return FALSE, FALSE, env
        if type(node) is cst.AugAssign:
            env = self.calls_in(node.value, ctx, env)
            operator = node.operator
            binary = cst.BinaryOperation(
                left=node.target, operator=BINARY_OF_AUGMENTED[type(operator)](), right=node.value  # type: ignore[operator]
            )
            return FALSE, FALSE, self.assign(node.target, binary, ctx, env, nest, line, end_line)
        if type(node) is cst.Expr:
            env = self.calls_in(node.value, ctx, env)
            return FALSE, FALSE, self.effect(node.value, ctx, env, nest, line, end_line)
        if type(node) in (cst.Import, cst.ImportFrom):
            self.summary.imports.update(import_bindings(node, self.summary.info.file))
        return FALSE, FALSE, env

    def library_failures(self, value: cst.BaseExpression, ctx: Formula, env: Env, nest, line: int, end_line: int) -> None:
        """`json.loads(cfg.x)`, `AutoConfig.from_pretrained(model, ...)`: the launch ends here, in the
        library, when the text a flag gives is no JSON or transformers does not load the checkpoint's
        config.json (guards of the library's own; a handler of a `try` around takes them like raises)."""
        failures = [("json.JSONDecodeError", JSON_TEMPLATE, call) for call in json_loads_calls(value)]
        failures += [("ValueError", CONFIG_LOAD_MESSAGE, load) for load in config_loads(value)]
        for exception, message, call in failures:
            failed = to_formula(cst.parse_expression(f"raised({exception}, {code(call)})"), self.scope, env)
            self.order += 1
            self.summary.guards.append(GuardEvent(RuleKind.RAISE, exception, message, False, line, end_line,
                                                  conj(ctx, failed), nest, self.order, self.anchor(failed)))

    def raise_(self, node: cst.Raise, ctx: Formula, env: Env, nest, line: int, end_line: int) -> None:
        exc = node.exc
        exception: str | None = None
        message, static = "", True
        placeholders: tuple[tuple[str, Lit | Term | Choices], ...] = ()
        if type(exc) is cst.Call:
            exception = dotted_name(exc.func) or code(exc.func)
            arg = message_arg(exc)
            if arg is not None:
                message, static = message_of(arg, self.scope, env)
                placeholders = placeholder_values(arg, self.scope, env)
        elif exc is not None:
            exception = dotted_name(exc) or code(exc)
            if type(exc) is cst.Name and exc.value in env:
                exception, message, static = None, "{" + exc.value + "}", False
        message = self.as_written(message)
        self.order += 1
        self.summary.guards.append(
            GuardEvent(RuleKind.RAISE, exception, message, static, line, end_line, ctx, nest, self.order, self.anchor(),
                       self.run_condition(node, ctx, env), placeholders)
        )

    def assign(self, target, value, ctx, env: Env, nest, line: int, end_line: int) -> Env:
        if type(target) is cst.Name:
            if target.value in self.scope.aliases and is_alias(value, self.scope, env):
                return env  # `cfg = resolving_view(server_args)`: cfg stays a receiver of fields
            if type(value) is cst.Dict:
                self.staged[target.value] = []
                for element in value.elements:
                    key = getattr(element, "key", None)
                    if type(key) is cst.SimpleString and isinstance(key.evaluated_value, str):
                        self.stage(target.value, key.evaluated_value, element.value, ctx, env, nest, line, end_line)
            return {**env, target.value: bind(value, env)}
        if type(target) is cst.Tuple and type(value) is cst.Call and self.scope.inline is not None:
            # `prefill, decode = attention_backends_of(cfg)`: each name bound to its part of what the helper returns.
            inlined = self.scope.inline(value, env)
            # A method that returns what a helper returns (0.5.18's `self._resolved_attention_backends()`
            # returns `attention_backends_of(resolved_view(self))`): that helper read in turn.
            for _ in range(_RETURNED_CALLS):
                if inlined is None or type(inlined[0]) is not cst.Call or inlined[1].inline is None:
                    break
                inlined = inlined[1].inline(inlined[0], inlined[2])
            if inlined is not None and same_shape(target, inlined[0]):
                returned, callee_scope, callee_env = inlined
                for name, part in zip(target.elements, returned.elements):  # type: ignore[attr-defined]
                    env = {**env, name.value.value: Bound(part.value, callee_env, callee_scope)}  # type: ignore[attr-defined]
                return env
        if type(target) is cst.Subscript and type(target.value) is cst.Name and target.value.value in env:
            local = target.value.value
            key = string_key(target, env)
            if local in self.staged and key is not None:  # `fields["hicache_ratio"] = 2.0`, declared later with `**fields`
                self.stage(local, key, value, ctx, env, nest, line, end_line)
                fields = normalize(value, self.scope, env)[1]
                # Each entry kept, so `renamed.get("prefill_attention_backend")` reads what was set.
                updated = with_entry(env[local], key, bind(value, env), fields)
                return {**env, local: updated if updated is not None else NonEmpty(local, fields)}
            # `renamed[attr] = ...`: the local no longer holds what it was assigned.
            fields = tuple(sorted(set(value_fields(env[local], self.scope)) | set(normalize(value, self.scope, env)[1])))
            return {**env, local: Unknown(local, fields)}
        name = field_of(target, self.scope, env) if type(target) is cst.Attribute else None
        if name is not None:
            text, _ = normalize(value, self.scope, env)
            self.write(name, text, ctx, nest, line, end_line, value, env)
            return {**env, FIELD_KEY + name: bind(value, env, reading=self.scope)}
        if type(target) in (cst.Tuple, cst.List):
            parts = unpacked(target, value)
            if parts is None:  # `a, *rest = ...`
                for element in target.elements:
                    env = self.assign_unknown_target(element.value, value, env)
                return env
            # `self.attention_backend, platform = pick(cfg)`, `a, b = b, a`: each target gets its part
            # of the value as it was before any of them is assigned.
            before = env
            for element, part in zip(target.elements, parts):
                inner = element.value
                if type(inner) is cst.Name:
                    env = {**env, inner.value: bind(part, before)}
                elif type(inner) is cst.Attribute and (name := field_of(inner, self.scope, before)) is not None:
                    self.write(name, normalize(part, self.scope, before)[0], ctx, nest, line, end_line, part, before)
                    env = {**env, FIELD_KEY + name: bind(part, before, reading=self.scope)}
                else:
                    env = self.assign(inner, part, ctx, env, nest, line, end_line)
        return env

    def assign_unknown_target(self, target, value, env: Env) -> Env:
        if type(target) is cst.Name:
            return {**env, target.value: Unknown(target.value, normalize(value, self.scope, env)[1])}
        return env

    def stage(self, local: str, key: str, value, ctx: Formula, env: Env, nest, line: int, end_line: int) -> None:
        self.staged[local].append((key, normalize(value, self.scope, env)[0], ctx, nest, line, end_line, value, env))

    def declared(self, node: cst.Dict, ctx: Formula, env: Env, nest, line: int, end_line: int) -> None:
        """`return {"page_size": 64}` from a pass whose result is declared onto the arguments."""
        for element in node.elements:
            key = getattr(element, "key", None)
            if type(key) is cst.SimpleString and isinstance(key.evaluated_value, str):
                self.write(key.evaluated_value, normalize(element.value, self.scope, env)[0], ctx, nest, line, end_line,
                           element.value, env)

    def write_staged(self, local: str, ctx: Formula, env: Env | None = None) -> Env:
        """A built-up dict declared (passed as `**fields`, or returned by a pass): each entry is written
        under the condition it was staged in and the declaring statement's. Given `env`, the fields
        declared read back as declared after it."""
        for key, text, staged_ctx, staged_nest, at, end, node, staged_env in self.staged[local]:
            condition = conj(ctx, staged_ctx)
            place = (key, text, at)
            index = self.staged_writes.get(place)
            if index is None:  # the first declaration of this entry
                self.staged_writes[place] = len(self.summary.writes)
                self.write(key, text, condition, staged_nest, at, end, node, staged_env)
            else:  # the same entry declared again (the dict returned from several places): one write, either way
                event = self.summary.writes[index]
                self.summary.writes[index] = replace(event, condition=disj(event.condition, condition))
            if env is not None:
                value = bind(node, staged_env, reading=self.scope)
                if staged_ctx != TRUE and condition != ctx:
                    # Staged on some paths only: elsewhere the field keeps what it held.
                    before = env.get(FIELD_KEY + key) or Original(key)
                    value = Choice(tuple(path_options(staged_ctx, value) + path_options(neg(staged_ctx), before)))
                env = {**env, FIELD_KEY + key: value}
        return env if env is not None else {}

    def write(self, name: str, value: str, ctx: Formula, nest, line: int, end_line: int,
              node: cst.BaseExpression | None = None, env: Env | None = None) -> None:
        if type(node) is cst.Name:
            ctx = _without_change_test(ctx, name, {node.value, local_text(node.value, self.scope)})
        self.order += 1
        self.summary.writes.append(WriteEvent(name, value, line, end_line, ctx, nest, self.order, self.anchor(),
                                              node, env or {}))

    def effect(self, node: cst.BaseExpression, ctx: Formula, env: Env, nest, line: int, end_line: int) -> Env:
        """What a bare call statement does to arguments and locals."""
        if not type(node) is cst.Call:
            return env
        func = dotted_name(node.func) or ""
        last = func.rsplit(".", 1)[-1]
        if func == "setattr" and len(node.args) >= 3 and is_alias(node.args[0].value, self.scope, env):
            key = bound_string(node.args[1].value, env)
            if key is not None:
                self.write(key, normalize(node.args[2].value, self.scope, env)[0], ctx, nest, line, end_line,
                           node.args[2].value, env)
                return {**env, FIELD_KEY + key: bind(node.args[2].value, env, reading=self.scope)}
        elif last in DECLARE_FUNCTIONS and node.args and is_alias(node.args[0].value, self.scope, env) or \
                last in DECLARE_METHODS and type(node.func) is cst.Attribute and is_alias(node.func.value, self.scope, env):
            # A declaration is read back by every later read through a live view (`resolving_view`).
            before = env
            for arg in node.args:
                if arg.keyword is not None:
                    self.write(arg.keyword.value, normalize(arg.value, self.scope, before)[0], ctx, nest, line, end_line,
                               arg.value, before)
                    env = {**env, FIELD_KEY + arg.keyword.value: bind(arg.value, before, reading=self.scope)}
                elif arg.star == "**" and type(arg.value) is cst.Name and arg.value.value in self.staged:
                    env = self.write_staged(arg.value.value, ctx, env)
                elif arg.star == "**" and type(arg.value) is cst.Dict:
                    # `**{key: value}` with the key a literal, or a loop's literal item: one write per entry.
                    for element in arg.value.elements:
                        key = bound_string(element.key, before) if type(element) is cst.DictElement else None
                        if key is None:
                            continue
                        self.write(key, normalize(element.value, self.scope, before)[0], ctx, nest, line,
                                   end_line, element.value, before)
                        env = {**env, FIELD_KEY + key: bind(element.value, before, reading=self.scope)}
            return env
        elif (written := env_call(node)) is not None and written[1] == "set" and len(node.args) == 1:
            # `envs.X.set("python")`: later `envs.X.get()` in this function reads it, `is_set()` holds.
            return {**env, ENV_KEY + written[0]: bind(node.args[0].value, env)}
        elif type(node.func) is cst.Attribute and node.func.attr.value in ADDING_METHODS \
                and (grown := field_of(node.func.value, self.scope, env)) is not None:
            # `self.lora_paths.append(ref)` (0.5.10, after `self.lora_paths = []`): it holds items now;
            # later reads in this function see that (`fields_after_loop` when it is a loop's body).
            return {**env, FIELD_KEY + grown: NonEmpty(grown, normalize(node, self.scope, env)[1])}
        elif type(node.func) is cst.Attribute and type(node.func.value) is cst.Name:
            owner = node.func.value.value
            method = node.func.attr.value
            if owner in env and method in ADDING_METHODS:
                return {**env, owner: NonEmpty(owner, normalize(node, self.scope, env)[1])}
            if owner in env and method in _SHRINKING_METHODS and isinstance(env[owner], Bound) \
                    and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star:
                # `backends.discard(None)`: the set minus that item, so `backends <= {...}` stays exact.
                less = cst.BinaryOperation(cst.Name(owner), cst.Subtract(),
                                           cst.Set([cst.Element(node.args[0].value)]))
                return {**env, owner: Bound(less, env)}
            if owner in env and method in GROWING_METHODS:
                fields = tuple(sorted(set(value_fields(env[owner], self.scope)) | set(normalize(node, self.scope, env)[1])))
                if isinstance(env[owner], NonEmpty):  # `errors.extend(more)`: still holding what it held
                    return {**env, owner: NonEmpty(owner, fields)}
                return {**env, owner: Unknown(owner, fields)}
        return env

    def walrus(self, test: cst.BaseExpression, env: Env) -> Env:
        """Locals a test assigns with `:=`, bound for the code after it."""
        for n in iter_expression(test):
            if type(n) is cst.NamedExpr and type(n.target) is cst.Name:
                env = {**env, n.target.value: bind(n.value, env)}
        return env

    def calls_in(self, node: cst.BaseExpression, ctx: Formula, env: Env) -> Env:
        """Record the calls of an expression; fields they may write read, after them, as they leave them."""
        written: dict[str, Rewritten] = {}
        for n, when in self._calls(node, ctx, env):
            self.order += 1
            writes = self.scope.call_writes(n, env) if self.scope.call_writes is not None else frozenset()
            self.summary.calls.append(CallEvent(when, n, env, 0, self.order, writes, self.catching))
            for name in writes:
                written[FIELD_KEY + name] = Rewritten(name, self.order)
        return {**env, **written} if written else env

    def _calls(self, node: cst.BaseExpression, ctx: Formula, env: Env):
        """The calls of an expression in evaluation order, each with when it is made: a branch of
        `a if t else b` under its test, the right side of `and`/`or` when the left does not decide
        (`get_dsa_index_head_dim(c) if is_deepseek_dsa(c) else None` calls the first only then)."""
        stack: list[tuple[cst.CSTNode, Formula]] = [(node, ctx)]
        while stack:
            n, when = stack.pop()
            kind = type(n)
            if kind is cst.IfExp and (has_call(n.body) or has_call(n.orelse)):
                test = to_formula(n.test, self.scope, env)
                stack += [(n.orelse, conj(when, neg(test))), (n.body, conj(when, test)), (n.test, when)]
                continue
            if kind is cst.BooleanOperation and has_call(n.right):
                left = to_formula(n.left, self.scope, env)
                right = conj(when, left if type(n.operator) is cst.And else neg(left))
                stack += [(n.right, right), (n.left, when)]
                continue
            if kind is cst.Call:
                yield n, when
            for child in reversed(list(expression_children(n))):
                stack.append((child, when))


def _without_change_test(ctx: Formula, field: str, local: set[str]) -> Formula:
    """`if page_size != view.page_size: return {"page_size": page_size}`: writing the value the field
    holds changes nothing, so the write needs no such test (left opaque when the local's value is too
    path-dependent to spell out, it would leave the write undecided)."""
    dropped = ctx
    for atom in set(atoms(ctx)):
        if atom.op != "!=":
            continue
        sides = (atom.term, atom.other)
        if any(isinstance(t, Term) and t.kind is TermKind.FIELD and t.name == field and not t.transforms for t in sides) \
                and any(isinstance(t, Term) and t.kind is TermKind.OPAQUE and t.text in local for t in sides):
            dropped = replaced(dropped, atom, TRUE)
    return dropped
