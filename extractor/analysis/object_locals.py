"""Attributes of an object a function builds (`self.quantization` of a config object) walked as locals
(`self__quantization`), so the walk follows their values like any other local's."""

from __future__ import annotations


import re

import libcst as cst

from .lines import Span, iter_statements


OBJECT_SEPARATOR = "__"  # `self.quantization` is walked as the local `self__quantization`


OBJECT_PREFIX = "self" + OBJECT_SEPARATOR


def object_local(receiver: str, attribute: str) -> str:
    return f"{receiver}{OBJECT_SEPARATOR}{attribute}"


def object_locals(node: cst.FunctionDef, receiver: str, spans: dict[int, Span]) -> cst.FunctionDef:
    """A method of some other class than ServerArgs with each `self.x` that is no method call written
    as the local `self__x`: `ModelConfig.__init__` assigns `self.quantization = quantization` and
    `_verify_quantization` tests `self.quantization`; as locals, the walk follows the value from the
    flag to the test, and a call of another method of the instance hands them over
    (`Program._bindings`). The new statements take the lines of the ones they replace."""
    renamed = node.visit(_ObjectLocals(receiver))
    for old, new in zip(iter_statements(node.body.body), iter_statements(renamed.body.body)):
        if id(old) in spans:
            spans[id(new)] = spans[id(old)]
    return renamed


class _ObjectLocals(cst.CSTTransformer):
    def __init__(self, receiver: str) -> None:
        super().__init__()
        self.receiver = receiver
        self.called: set[int] = set()
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.depth += 1
        return self.depth == 1  # a nested function's `self` is not the instance

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self.depth -= 1
        return updated_node

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        if type(node.func) is cst.Attribute:
            self.called.add(id(node.func))  # `self.m(...)` stays a method call
        return True

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        if id(original_node) in self.called or type(updated_node.value) is not cst.Name \
                or updated_node.value.value != self.receiver:
            return updated_node
        return cst.Name(object_local(self.receiver, updated_node.attr.value), lpar=updated_node.lpar,
                        rpar=updated_node.rpar)


OBJECT_LOCAL = re.compile(r"(?<![\w.])" + OBJECT_PREFIX + r"(?=[A-Za-z_])")
