"""The direct renderer of normalized expressions says what libcst's transformer and code generation say.

`conditions.normalize` writes common expression nodes itself (ten times cheaper than a libcst
transformer plus `code_for_node`) and falls back to the transformer for the rest. The transformer is
the reference: on every expression here, and on every test and assigned value of real releases, both
must give the same Python (compared as `ast` trees, since spacing may differ) and the same fields.
"""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from extractor.analysis.normalize import _Normalizer, normalize
from extractor.analysis.scope import Bound, Choice, Env, Scope, Unknown, code
from extractor.core.model import TRUE
from extractor.sources.layout import find_layout
from extractor.sources.trees import release_tree

SCOPE = Scope(aliases=frozenset({"self", "server_args"}), constants={})


def reference(node: cst.BaseExpression, scope: Scope, env: Env) -> tuple[str, tuple[str, ...]]:
    """What normalize gave before the direct renderer: the transformer, then libcst's code."""
    normalizer = _Normalizer(scope, env)
    rewritten = node.visit(normalizer)
    if getattr(rewritten, "lpar", None) and not (isinstance(rewritten, cst.Tuple) and not rewritten.elements):
        rewritten = rewritten.with_changes(lpar=[], rpar=[])
    return code(rewritten), tuple(sorted(normalizer.fields))


def same_python(a: str, b: str) -> bool:
    def tree(text: str) -> str:  # parenthesized: a top-level `x := y` is an expression only inside them
        return ast.dump(ast.parse(f"({text.strip()})", mode="eval"))
    return tree(a) == tree(b)


def assert_same(node: cst.BaseExpression, env: Env, scope: Scope = SCOPE) -> str:
    text, fields = normalize(node, scope, env)
    expected_text, expected_fields = reference(node, scope, env)
    assert same_python(text, expected_text), (text, expected_text)
    assert fields == expected_fields
    return text


EXPRESSIONS = [
    "self.tp_size > 1 and self.dp_size == 1",
    "server_args.x is None or not server_args.y",
    "(self.a or self.b) and self.c",
    "not (self.a and self.b)",
    "self.mode in ('a', 'b') and self.mode not in [\"c\"]",
    "self.page_size % 64 != 0",
    "-self.a < +self.b ** 2 // 3",
    "~self.flags & 0x4 | self.other ^ 1 << 2 >> 1",
    "self.get_mode() == 'x'",
    "getattr(self, 'speculative_algorithm', None) == 'EAGLE'",
    "getattr(self, '_private', 3) == 3",
    "self.device.startswith('cuda') and self.device.lower() != 'cpu'",
    "len(self.lora_paths or []) > 0",
    "self.json_config['key'][1:2] == self.values[::2]",
    "self.a[1:] and self.b[:-1] and self.c[x, y]",
    "self.a if self.b else self.c",
    "{'a': self.a, **self.extra} != {}",
    "{self.a, self.b} - {1}",
    "[*self.items, 1]",
    "(self.a,) == (1,)",
    "() == ()",
    "f'{self.a}-{self.b}' == 'x-y'",
    "'a' 'b' == self.name",
    "lambda v: v > self.a",
    "[x for x in self.items if x > 1]",
    "any(x > 0 for x in self.sizes)",
    "(y := self.a) > 1",
    "self.a is not None and self.b is None",
    "1.5 < self.ratio <= 2j.imag",
    "self.a.b.c == server_args.d.e",
    "envs.SGLANG_X.get() and os.environ.get('Y', '0') == '1'",
    "fn(self.a, key=self.b, *self.c, **self.d)",
    "self.x == ...",
    "(\n    self.a  # why\n    and self.b\n)",
    "self.obj.method(self.a)",
    "await_like(self).x",
]


@pytest.mark.parametrize("source", EXPRESSIONS)
def test_renderer_matches_the_transformer(source: str) -> None:
    assert_same(cst.parse_expression(source), {})


def test_bound_locals_are_substituted_with_parentheses_where_needed() -> None:
    env: Env = {
        "loose": Bound(cst.parse_expression("self.a or self.b"), {}),
        "tight": Bound(cst.parse_expression("self.c"), {}),
        "chain": Bound(cst.parse_expression("loose"), {"loose": Bound(cst.parse_expression("self.a or self.b"), {})}),
        "gone": Unknown("gone", ("d",)),
        "either": Choice(((TRUE, Bound(cst.parse_expression("self.e"), {})),)),
    }
    for source, expected in [
        ("loose and tight", "(a or b) and c"),
        ("loose", "a or b"),
        ("chain == 1", "(a or b) == 1"),
        ("tight.lower() == 'x'", "c.lower() == 'x'"),
        ("loose.x", "(a or b).x"),
        ("gone > 1", "gone > 1"),
        ("either == 2", "either == 2"),
    ]:
        text = assert_same(cst.parse_expression(source), env)
        assert text == expected


def test_an_or_a_call_site_decides_is_written_as_its_operand() -> None:
    """`model_path or cfg.model_path` called with its default (None) or with the very field reads
    the field: one spelling, so every test of it is one atom, not three."""
    for argument, call, comprehension in [
        ("None", "check_gguf_file(model_path)", "any(p for p in [model_path])"),
        ("self.model_path", "check_gguf_file(model_path)", "any(p for p in [model_path])"),
        ("self.other", "check_gguf_file((other or model_path))", "any(p for p in [(other or model_path)])"),
    ]:
        inner: Env = {"model_path": Bound(cst.parse_expression(argument), {})}
        env: Env = {"path": Bound(cst.parse_expression("model_path or self.model_path"), inner)}
        assert assert_same(cst.parse_expression("check_gguf_file(path)"), env) == call
        assert assert_same(cst.parse_expression("any(p for p in [path])"), env) == comprehension
    # What Python would not give the same is kept: `x or None` is None where x is falsy, `None and x`
    # is None, and `a or b or a` is the second `a` where both are falsy.
    for source in ("self.a or None", "None and self.a", "self.a or self.b or self.a"):
        assert assert_same(cst.parse_expression(source), {}) == source.replace("self.", "")


def test_fields_read_through_locals_are_collected() -> None:
    env: Env = {"gone": Unknown("gone", ("d",)), "either": Choice(((TRUE, Bound(cst.parse_expression("self.e"), {})),))}
    assert normalize(cst.parse_expression("gone and either and self.f"), SCOPE, env)[1] == ("d", "e", "f")


def test_spacing_is_normalized_and_comments_dropped() -> None:
    node = cst.parse_expression("with_phase(\n    self.cfg,   # keep\n    Phase.DECODE,\n)")
    assert normalize(node, SCOPE, {})[0] == "with_phase(cfg, Phase.DECODE)"


def _expressions(module: cst.Module):
    """Every `if`/`elif`/`assert` test and every assigned value of a module."""
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.If, cst.While)):
            yield node.test
        elif isinstance(node, cst.Assert):
            yield node.test
        elif isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and node.value is not None:
            yield node.value
        stack.extend(node.children)


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.5.18", "0.5.23"])
def test_renderer_matches_the_transformer_on_a_real_release(version: str) -> None:
    tree = release_tree(version)
    count = 0
    for path in find_layout(tree.paths()).files:
        for node in _expressions(cst.parse_module(tree.read_text(path))):
            assert_same(node, {})
            count += 1
    assert count > 1000


def test_a_local_is_rendered_once_per_walk() -> None:
    """With the walk's `renders` memo, a local read by several tests is rendered once: the same
    texts and fields as without, and a second read takes the kept text."""
    memo: dict = {}
    with_memo = Scope(aliases=frozenset({"self"}), constants={}, renders=lambda: memo)
    plain = Scope(aliases=frozenset({"self"}), constants={})
    env: Env = {"n": Bound(cst.parse_expression("self.tp_size * self.pp_size"), {})}
    for text in ("n > 1 and n < 8", "n % 2 == 0", "not n"):
        node = cst.parse_expression(text)
        assert normalize(node, with_memo, env) == normalize(node, plain, env)
    locals_kept = {key: kept for key, kept in memo.items() if key[0] != "normalize"}  # beside each test's own text
    assert len(locals_kept) == 1
    (key, (value, scope, _, _)), = locals_kept.items()
    memo[key] = (value, scope, "KEPT * 1", frozenset({"kept"}))
    assert normalize(cst.parse_expression("n > 2"), with_memo, env) == ("(KEPT * 1) > 2", ("kept",))
    # Another local bound to the same text is another object: rendered for itself.
    other: Env = {"n": Bound(cst.parse_expression("self.tp_size * self.pp_size"), {})}
    assert normalize(cst.parse_expression("n > 2"), with_memo, other) == ("(tp_size * pp_size) > 2", ("pp_size", "tp_size"))


def test_an_expression_is_rendered_once_per_walk_for_one_env() -> None:
    """A test the walk reads again with the same env (on another path) takes the text kept for it;
    another env object, or no walk (a question's own work), renders it again."""
    memo: dict = {}
    frame: list = [memo]
    with_memo = Scope(aliases=frozenset({"self"}), constants={}, renders=lambda: frame[0])
    env: Env = {"n": Bound(cst.parse_expression("self.tp_size"), {})}
    node = cst.parse_expression("n > 1 and self.pp_size == 2")
    first = normalize(node, with_memo, env)
    assert first == ("tp_size > 1 and pp_size == 2", ("pp_size", "tp_size"))
    key = ("normalize", id(node), id(with_memo), id(env))
    assert memo[key][3] == first
    memo[key] = (*memo[key][:3], ("KEPT", ()))
    assert normalize(node, with_memo, env) == ("KEPT", ())
    assert normalize(node, with_memo, dict(env)) == first  # an equal env, another object
    frame[0] = None
    assert normalize(node, with_memo, env) == first
