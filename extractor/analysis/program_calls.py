"""The program's calls: a call resolved to the function it reaches and its bound arguments, helpers
inlined or read as the values they return, the fields a call writes, the registered functions and
the notices of an extraction. A mixin of `callgraph.Program`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import libcst as cst

from ..core.formula import conj, disj, fields_read, neg, render
from ..core.model import FALSE, TRUE, Flag, Notice, Rule, TermKind
from .conditions import to_formula
from .events import CallEvent, FunctionInfo, FunctionSummary
from .object_locals import object_local
from .normalize import classify, normalize
from .scope import FIELD_KEY, Bound, Choice, Env, Scope, bind, code, dotted_name, field_of, is_alias
from .registry import has_loop_items, registry_of, runs_call

MAX_INLINE = 6  # nested predicate inlining
MAX_RETURNS = 24  # a helper read as the values it returns has at most this many `return`s


class CallQueries:
    """Calls resolved over the program (mixed into `callgraph.Program`)."""

    def resolve(self, info: FunctionInfo, func: cst.BaseExpression, env: Env) -> tuple[FunctionInfo, dict[str, Bound]] | None:
        """The function a call expression calls, and the implicit `self` binding if any."""
        if type(func) is cst.Name:
            found = self._lookup(info, func.value)
            if found and found[0] == "function":
                target = self._function_by_key(found[1])
                return (target, {}) if target else None
            if found and found[0] == "class":
                target = self._method(found[1], "__init__")  # `ModelConfig(...)`: its constructor runs
                return (target, {}) if target else None
            return None
        if not type(func) is cst.Attribute:
            return None
        method = func.attr.value
        owner = func.value
        if type(owner) is cst.Name:
            if info.class_name and info.params and owner.value == info.params[0] and owner.value not in env:
                target = self._method(f"{info.module}:{info.class_name}", method)
                return (target, {}) if target else None
            if owner.value in info.aliases and owner.value not in env and self._record_class is not None:
                # `view._get_default_attn_backend(...)` in a hook handed the arguments: a method of ServerArgs.
                target = self._method(self._record_class, method)
                return (target, {}) if target else None
            if owner.value in env:
                class_key = self._class_of_value(info, owner, env)
                if class_key is not None:
                    target = self._method(class_key, method)
                    if target is not None and target.params:
                        return target, {target.params[0]: env[owner.value]}  # type: ignore[dict-item]
                return None
            found = self._lookup(info, owner.value)
            if found and found[0] == "class":
                target = self._method(found[1], method)
                return (target, {}) if target else None
            if found and found[0] == "module":
                target = self.function(found[1], method)
                return (target, {}) if target else None
        return None

    # --- calls ---------------------------------------------------------------------------------

    def _bindings(self, caller: FunctionInfo, caller_scope: Scope, target: FunctionInfo, call: cst.Call, env: Env,
                  implicit: dict[str, Bound], skip_self: bool) -> tuple[dict, tuple, frozenset[str]]:
        """Callee parameters bound to the caller's arguments: aliases stay aliases, the rest become locals.
        A method called on the caller's own instance (`self._verify_quantization()`) gets its attributes."""
        params = list(target.params)
        if (skip_self or target.name == "__init__") and params and params[0] in ("self", "cls"):
            params = params[1:]
        callee_env: dict = {name: _with_scope(value, caller_scope) for name, value in implicit.items()}
        receiver = receiver_of(caller)
        if receiver is not None and type(call.func) is cst.Attribute and type(call.func.value) is cst.Name \
                and call.func.value.value == receiver and receiver_of(target) == receiver:
            prefix = object_local(receiver, "")
            callee_env.update({k: _with_scope(v, caller_scope) for k, v in env.items() if k.startswith(prefix)})
        aliases: set[str] = set()
        positional = [a for a in call.args if a.keyword is None and not a.star]
        named = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        pairs = list(zip(params, (a.value for a in positional))) + [(k, v) for k, v in named.items() if k in target.params]
        for param, arg in pairs:
            if is_alias(arg, caller_scope, env):
                aliases.add(param)
            elif param not in target.aliases:
                callee_env[param] = bind(arg, env, caller_scope, reading=caller_scope)
        key = tuple(sorted((p, _value_key(v, caller_scope)) for p, v in callee_env.items()))
        return callee_env, key, frozenset(aliases - target.aliases)

    def callees(self, summary: FunctionSummary, call: CallEvent) -> Iterator[tuple[FunctionInfo, dict, tuple, frozenset]]:
        """Functions a call event leads to: the callee itself, and functions passed as arguments (`run_hook(h, sa)`)."""
        with self._loading(self._reaches_arguments(call.node, summary.scope, call.env)):
            yield from self._callees(summary, call)

    def _reaches_arguments(self, call: cst.Call, scope: Scope, env: Env) -> bool:
        """Does the call hand over the server arguments, a value read from them, or a dispatch object?"""
        func = call.func
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value in env:
            return True
        # A helper handed only a field value (`is_sm100_supported(cfg.device)`) stays an opaque atom:
        # following every utility module would parse most of the package.
        return any(is_alias(a.value, scope, env) for a in call.args)

    @staticmethod
    def _reads_fields(call: cst.Call, scope: Scope, env: Env) -> bool:
        """Is the call handed a server argument's value (`parse_connector_type(cfg.model_path)`)? A small
        helper of it is read through, from whatever module defines it."""
        return any(field_of(a.value, scope, env) is not None for a in call.args)

    def _callees(self, summary: FunctionSummary, call: CallEvent):
        info = summary.info
        resolved = self.resolve(info, call.node.func, call.env)
        if resolved is not None:
            target, implicit = resolved
            skip_self = type(call.node.func) is cst.Attribute
            yield (target, *self._bindings(info, summary.scope, target, call.node, call.env, implicit, skip_self), TRUE)
        else:
            for target, when in self._dispatched(info, summary.scope, call.node.func, call.env):
                yield (target, *self._bindings(info, summary.scope, target, call.node, call.env, {}, True), when)
        for arg in call.node.args:
            if type(arg.value) in (cst.Name, cst.Attribute) and not is_alias(arg.value, summary.scope, call.env):
                if type(arg.value) is cst.Name and arg.value.value in call.env:
                    continue
                passed = self.resolve(info, arg.value, call.env)
                if passed is not None and passed[0] is not (resolved[0] if resolved else None):
                    implicit = {k: _with_scope(v, summary.scope) for k, v in passed[1].items()}
                    yield passed[0], implicit, tuple(sorted((k, _value_key(v, summary.scope)) for k, v in implicit.items())), \
                        frozenset(), TRUE

    def _dispatched(self, info: FunctionInfo, scope: Scope, func: cst.BaseExpression, env: Env):
        """`parser.parse(...)` of `parser = get_model_config_parser(name)`: a factory that gives back the
        class a decorator of its module registered under `name` (`@register_model_config_parser("hf")`).
        The call reaches each registered class's own method, when `name` is its key: (method, when).
        Registered classes are looked for in the caller's module and the factory's, not in every module
        loaded so far (which would depend on what was read before)."""
        if type(func) is not cst.Attribute or type(func.value) is not cst.Name:
            return
        value = env.get(func.value.value)
        # One factory call, or the same call under several paths (its argument bound on each).
        options = value.options if isinstance(value, Choice) else ((TRUE, value),)
        if not options or not all(isinstance(v, Bound) and type(v.node) is cst.Call and v.node.args
                                  and v.node.args[0].keyword is None and not v.node.args[0].star
                                  and code(v.node.func) == code(options[0][1].node.func) for _, v in options):
            return
        first: Bound = options[0][1]  # type: ignore[assignment]
        factory = self.resolve(info, first.node.func, first.env)
        if factory is None or factory[0].class_name is not None:
            return
        method, home = func.attr.value, factory[0].module
        found = self._ask(("dispatch", info.module, home, method),
                          lambda: tuple(self._registered_methods((info.module, home), home, method)))
        for class_key, key in found:
            target = self._method(class_key, method)
            if target is None:
                continue
            tests = []
            for condition, bound in options:
                test = cst.Comparison(bound.node.args[0].value,  # type: ignore[union-attr]
                                      [cst.ComparisonTarget(cst.Equal(), cst.SimpleString(repr(key)))])
                tests.append(conj(condition, to_formula(test, scope, bound.env)))  # type: ignore[union-attr]
            yield target, disj(*tests)

    def _registered_methods(self, modules: tuple[str, ...], home: str, method: str) -> Iterator[tuple[str, str]]:
        """(class key, registry key) of the classes of `modules` that a decorator defined in module `home`
        registers and that define `method` themselves."""
        for dotted in sorted(set(modules)):
            module = self.module(dotted)
            for qualname, cls in sorted(module.classes.items()) if module is not None else ():
                if cls.registered is None or method not in cls.methods:
                    continue
                decorator, key = cls.registered
                head = decorator.split(".")[0]
                found = self._resolve_dotted(module.imports.get(head, f"{dotted}.{head}") + decorator[len(head):])
                if found is not None and found[0] == "function" and found[1].partition(":")[0] == home:
                    yield f"{dotted}:{qualname}", key

    def _inline_target(self, info: FunctionInfo, scope: Scope, call: cst.Call, env: Env, depth: int):
        """The function a call to inline reaches (and its implicit bindings), within the depth limit."""
        if depth >= MAX_INLINE:
            return None
        if classify(f"{dotted_name(call.func)}()", ()).kind is TermKind.PLATFORM:
            # `is_host_cpu_arm64()`, `get_device_memory_capacity(cfg.device)`: a platform fact, kept by
            # the name the profiles answer.
            return None
        with self._loading(self._reaches_arguments(call, scope, env) or self._reads_fields(call, scope, env)):
            return self.resolve(info, call.func, env)

    def _inline(self, info: FunctionInfo, scope: Scope, call: cst.Call, env: Env, depth: int):
        """A call to a one-`return` predicate, as its returned expression in the callee's terms."""
        resolved = self._inline_target(info, scope, call, env, depth)
        if resolved is None:
            return None
        target, implicit = resolved
        found = target.straight_return
        if found is None:
            return None
        assignments, expr = found
        callee_env, _, aliases = self._bindings(info, scope, target, call, env, implicit, type(call.func) is cst.Attribute)
        callee_env = {**_assigned_fields(env, scope), **_left_out(target, call, callee_env, aliases), **callee_env}
        callee_scope = self.scope(target, aliases, depth + 1)
        for name, value in assignments:
            if name in callee_scope.aliases and is_alias(value, callee_scope, callee_env):
                continue  # `cfg = resolving_view(server_args)`: a view, read as the arguments
            callee_env = {**callee_env, name: bind(value, callee_env)}
        return expr, callee_scope, callee_env

    def _inline_cases(self, info: FunctionInfo, scope: Scope, call: cst.Call, env: Env, depth: int):
        """A call to a small pure helper with several returns (`_resolve_alias(cfg.algo, ...)`), as the
        values it returns, each with when: [(condition, returned expression, its scope, its locals)]."""
        full = self._ask(("inlining", "full"), lambda: len(self._inlining) >= MAX_INLINE)
        resolved = None if full else self._inline_target(info, scope, call, env, depth)
        if resolved is None:
            return None
        target, implicit = resolved
        inside = self._ask(("inlining", "in", target.key), lambda: target.key in self._inlining)
        if inside or not target.returns_value or target.straight_return is not None:
            return None
        callee_env, key, aliases = self._bindings(info, scope, target, call, env, implicit,
                                                  type(call.func) is cst.Attribute)
        assigned = _assigned_fields(env, scope)
        if assigned:
            callee_env = {**assigned, **callee_env}
            key = (*key, ("<fields>", _value_key_of(assigned, scope)))
        self._ask(("push", target.key), lambda: None)
        self._inlining.add(target.key)
        try:
            summary = self.summary(target, callee_env, key, aliases)
        except RecursionError:
            return None
        finally:
            self._inlining.discard(target.key)
            self._ask(("pop", target.key), lambda: None)
        written = {w.field for w in summary.writes}.union(*(c.writes for c in summary.calls))
        if any(name in summary.scope.fields for name in written) or not summary.returns \
                or len(summary.returns) > MAX_RETURNS:
            # Not a pure helper: it changes server arguments, or its value is not one of a few expressions
            # over its inputs. (A cache it fills, 0.5.10's `self.model_config` that `get_model_config()`
            # sets on first use, changes no argument.)
            return None
        if any(has_loop_items(r.condition) for r in summary.returns):
            return None  # a value found by a loop (`for key in KEYS: ... return val`): a term `check` reads
        cases = [(r.condition, r.node if r.node is not None else cst.Name("None"), summary.scope, r.env)
                 for r in summary.returns if r.condition != FALSE]
        rest = neg(disj(*(r.condition for r in summary.returns)))
        if rest != FALSE:
            cases.append((rest, cst.Name("None"), summary.scope, {}))  # it falls off its end
        return cases

    # --- what calls may write ------------------------------------------------------------------

    def call_writes(self, info: FunctionInfo, scope: Scope, call: cst.Call, env: Env) -> frozenset[str]:
        """The server-argument fields a call may write: through the function it calls, the functions it
        is handed (`run_hook(step, server_args)`), or the registered functions a call of a variable runs."""
        with self._loading(self._reaches_arguments(call, scope, env)):
            targets = [target for target, _ in self._call_targets(info, scope, call, env)]
        if not targets and type(call.func) is cst.Name and (call.func.value in info.params or call.func.value in env):
            targets = [fn for fn in self.registered() if runs_call(call, fn)]
        found: set[str] = set()
        for target in targets:
            found |= self.writes_of(target)
        return frozenset(found)

    def _call_targets(self, info: FunctionInfo, scope: Scope, call: cst.Call, env: Env):
        resolved = self.resolve(info, call.func, env)
        if resolved is not None:
            yield resolved
        for arg in call.args:
            if type(arg.value) in (cst.Name, cst.Attribute) and not is_alias(arg.value, scope, env):
                if type(arg.value) is cst.Name and arg.value.value in env:
                    continue
                passed = self.resolve(info, arg.value, env)
                if passed is not None and passed[0] is not (resolved[0] if resolved else None):
                    yield passed

    def writes_of(self, fn: FunctionInfo) -> frozenset[str]:
        """Every field the function, or a function it calls, may write (a cycle adds nothing)."""
        return self._ask(("writes", fn.key, self._may_load), lambda: self._writes_of(fn), revive=frozenset)

    def _writes_of(self, fn: FunctionInfo) -> frozenset[str]:
        found = self._writes.get(fn.key)
        if found is not None:
            return found
        if fn.key in self._writing:
            return frozenset()
        self._writing.add(fn.key)
        try:
            walk = self.walk(fn)
            names = {w.field for w in walk.writes if not w.field.startswith("_")}
            for call in walk.calls:
                names |= call.writes
        except RecursionError:
            names = set()
        finally:
            self._writing.discard(fn.key)
        found = frozenset(names)
        self._writes[fn.key] = found
        return found

    def registered(self) -> list[FunctionInfo]:
        """Functions of the read modules that a decorator puts in a registry, in file order."""
        if self._registered is None and self._script is None:
            self._registered = []
            for dotted in self.read:
                module = self.modules[dotted]
                for key in module.functions:
                    # Only a decorator that says "register" registers: the others' functions stay unparsed.
                    if module.functions.registers(key):
                        fn = module.functions[key]
                        if registry_of(fn) is not None:
                            self._registered.append(fn)
        return self._ask(("registered",), lambda: self._registered, registered_answer,
                         lambda kept: [self._function_of(key) for key, _ in kept])

    def notices(self, rules: list[Rule], flags: Iterable[Flag]) -> list[Notice]:
        """Field atoms with no flag in the catalog, one notice per field name."""
        known = {f.name for f in flags}
        missing: dict[str, set[str]] = {}
        for rule in rules:
            for name in set(fields_read(rule.condition)) | set(fields_read(rule.trigger or rule.condition)):
                if name not in known:
                    missing.setdefault(name, set()).add(rule.id)
        return [
            Notice("unresolved-field", f"field {name!r} is read by {len(ids)} rule(s) but has no flag in the catalog",
                   name, tuple(sorted(ids)))
            for name, ids in sorted(missing.items())
        ]


def _assigned_fields(env: Env, scope: Scope) -> dict:
    """The fields the caller assigned or had rewritten, for a helper it hands the arguments to."""
    return {k: _with_scope(v, scope) for k, v in env.items() if k.startswith(FIELD_KEY)}


def _value_key_of(values: dict, scope: Scope) -> str:
    return ";".join(f"{k}={_value_key(v, scope)}" for k, v in sorted(values.items()))


def _with_scope(value, scope: Scope):
    """A local's value as it crosses into another function: it keeps the scope it was written in."""
    if isinstance(value, Bound) and value.scope is None:
        return Bound(value.node, value.env, scope)
    if isinstance(value, Choice):
        return Choice(tuple((c, _with_scope(v, scope)) for c, v in value.options))
    return value


def _value_key(value, scope: Scope) -> str:
    """A text that tells bound argument values apart, for memoizing walks per call context."""
    if isinstance(value, Bound):
        text, fields = normalize(value.node, value.scope or scope, value.env)
        # `helper(self.x)` before and after the function assigned x are different contexts.
        assigned = [f"{f}={_value_key(value.env[FIELD_KEY + f], scope)}" for f in fields if FIELD_KEY + f in value.env]
        return ";".join([text, *assigned])
    if isinstance(value, Choice):
        return "|".join(f"{render(c)}=>{_value_key(v, scope)}" for c, v in value.options)
    return repr(value)


def receiver_of(info: FunctionInfo) -> str | None:
    """The instance parameter of a method (`self`), else None (functions, static and class methods)."""
    if not info.class_name or not info.params or info.params[0] != "self":
        return None
    return None if any(d.rsplit(".", 1)[-1] in ("staticmethod", "classmethod", "property") for d in info.decorators) \
        else "self"


def registered_answer(functions: list[FunctionInfo]) -> tuple:
    """What a walk reads of the registered functions: which, and the parameters a call passes by name."""
    return tuple((fn.key, fn.params) for fn in functions)


def _left_out(target: FunctionInfo, call: cst.Call, bound: Env, aliases: frozenset[str]) -> dict[str, Bound]:
    """The parameters an inlined call leaves out, bound to their defaults, and a `**kwargs` it passes
    nothing to bound to `{}`: else the returned expression reads them as free names (0.5.20's
    `ModelConfig.from_server_args(server_args, model_path=...)` returns `ModelConfig(...,
    is_draft_model=is_draft_model, **kwargs)`), and a free name that is also a field's reads the field."""
    params = target.node.params
    left = {p.name.value: Bound(p.default, {})
            for p in (*params.posonly_params, *params.params, *params.kwonly_params)
            if p.default is not None and p.name.value not in bound and p.name.value not in target.aliases | aliases}
    star = params.star_kwarg
    named = {a.keyword.value for a in call.args if a.keyword is not None}
    if star is not None and not any(a.star == "**" for a in call.args) and named <= set(target.params):
        left[star.name.value] = Bound(cst.Dict([]), {})
    return left

