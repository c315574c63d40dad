"""A Jinja sandbox with budgets: chat templates are code from strangers.

jinja2's ImmutableSandboxedEnvironment stops attribute and mutation escapes, but not work or memory:
`10**(10**10)`, `'a'*10**10`, `x|center(10**10)` or two nested `range(10**5)` loops hang or exhaust
memory. This environment refuses operations whose result would be huge before computing them
(power, repetition, concatenation, padding widths, replace, join, format widths), drops `lipsum`, and
`render_bounded` enforces a wall-clock deadline (checked by a line-trace hook installed only while
rendering, and between output chunks) and an output-size budget. Every failure becomes TemplateError.
"""

from __future__ import annotations

import math
import re
import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

import jinja2
from jinja2.compiler import CodeGenerator, Frame
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from atomicchat.engine.errors import EngineError

TIME_BUDGET_S = 2.0
OUTPUT_BUDGET = 1 << 20  # characters; raised for conversations that are themselves longer
MAX_INT_BITS = 1 << 16  # about 20,000 decimal digits
_TRACE_EVERY = 256  # line events between two clock reads
_WIDTH_METHODS = {"center", "ljust", "rjust", "zfill", "expandtabs"}
_NUMBER_RE = re.compile(r"\d+")


class TemplateError(EngineError):
    """The model's chat template failed to render (or tried to use too much time or memory)."""


class _OverBudget(BaseException):
    """Raised from the trace hook; a BaseException so no `except Exception` inside jinja swallows it."""


def _too_big(what: str) -> TemplateError:
    return TemplateError(f"The model's chat template tried to build {what}, which is more than a chat prompt needs.")


def _size(value: Any) -> int | None:
    return len(value) if isinstance(value, (str, bytes, list, tuple)) else None


def _check_widths(text: str, limit: int) -> None:
    """Refuse format strings with padding/precision numbers beyond `limit` ('%1000000000d', '{:>1e9}')."""
    if any(len(n) > 7 or int(n) > limit for n in _NUMBER_RE.findall(text)):
        raise _too_big("a string padded to an enormous width")


class _BoundedCodeGenerator(CodeGenerator):
    """Compiles `a ~ b` through the environment, so string concatenation is size-checked too."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.bounded_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """ImmutableSandboxedEnvironment plus size checks on every operation that can blow up."""

    code_generator_class = _BoundedCodeGenerator
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_size = OUTPUT_BUDGET
        self.globals.pop("lipsum", None)
        for name, fn in list(self.filters.items()):
            self.filters[name] = self._bounded_filter(fn)

    # -- operators
    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        limit = self.max_size
        if operator == "**" and isinstance(left, int) and isinstance(right, int) and not isinstance(right, bool):
            if right > 0 and abs(left) > 1 and right * math.log2(abs(left)) > MAX_INT_BITS:
                raise _too_big(f"a number with more than {MAX_INT_BITS} bits")
        elif operator == "*":
            for seq, n in ((left, right), (right, left)):
                size = _size(seq)
                if size is not None and isinstance(n, int) and size * max(0, n) > limit:
                    raise _too_big(f"a value of {size * n:,} items")
            if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_INT_BITS:
                raise _too_big(f"a number with more than {MAX_INT_BITS} bits")
        elif operator == "+":
            a, b = _size(left), _size(right)
            if a is not None and b is not None and a + b > limit:
                raise _too_big(f"a value of {a + b:,} items")
        elif operator == "%" and isinstance(left, str):
            _check_widths(left, limit)
        return super().call_binop(context, operator, left, right)

    def bounded_concat(self, parts: tuple[Any, ...]) -> str:
        out = [str(p) for p in parts]
        if sum(map(len, out)) > self.max_size:
            raise _too_big("a string longer than the output budget")
        return "".join(out)

    # -- calls: str methods that take a width or multiply their input
    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (jinja's signature)
        target = getattr(__obj, "__wrapped__", __obj)  # the sandbox wraps str.format at attribute access
        owner = getattr(target, "__self__", None)
        name = getattr(target, "__name__", "")
        if isinstance(owner, str):
            __self._check_str_call(owner, name, args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def _check_str_call(self, s: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        limit = self.max_size
        nums = [a for a in (*args, *kwargs.values()) if isinstance(a, int) and not isinstance(a, bool)]
        if name in _WIDTH_METHODS and any(n > limit or (name == "expandtabs" and n * (s.count("\t") + 1) > limit) for n in nums):
            raise _too_big("a string padded to an enormous width")
        if name in ("format", "format_map"):
            _check_widths(s, limit)
            if any(n > limit for n in nums):  # '{0:>{1}}'.format(x, 10**9)
                raise _too_big("a string padded to an enormous width")
        if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
            hits = len(s) + 1 if args[0] == "" else s.count(args[0])
            if len(s) + hits * len(args[1]) > limit:
                raise _too_big("a string longer than the output budget")
        if name == "join" and args:
            items = args[0]
            if isinstance(items, range) and len(items) * (len(s) + 8) > limit:
                raise _too_big("a string longer than the output budget")
            if isinstance(items, (list, tuple)) and len(items) * len(s) + sum(len(x) for x in items if isinstance(x, str)) > limit:
                raise _too_big("a string longer than the output budget")

    def _bounded_filter(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """A filter whose numeric arguments (widths, indents, counts) stay within the budget."""

        skip = 2 if hasattr(fn, "jinja_pass_arg") else 1  # (context,) value
        fn_name = getattr(fn, "__name__", "")

        def bounded(*args: Any, **kwargs: Any) -> Any:
            if fn_name == "do_format" and len(args) >= skip and isinstance(args[skip - 1], str):
                _check_widths(args[skip - 1], self.max_size)
            for a in (*args[skip:], *kwargs.values()):
                if isinstance(a, int) and not isinstance(a, bool) and abs(a) > self.max_size:
                    raise _too_big(f"something sized {a:,}")
                if isinstance(a, str) and len(a) > self.max_size:
                    raise _too_big("a string longer than the output budget")
            out = fn(*args, **kwargs)
            if isinstance(out, str) and len(out) > self.max_size:
                raise _too_big("a string longer than the output budget")
            return out

        for attr in ("jinja_pass_arg",):  # keep pass_context / pass_eval_context / pass_environment markers
            if hasattr(fn, attr):
                setattr(bounded, attr, getattr(fn, attr))
        bounded.__name__ = getattr(fn, "__name__", "filter")
        return bounded


def _deadline_tracer(deadline: float) -> Callable[[FrameType, str, Any], Any]:
    count = [0]
    clock = time.monotonic

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        count[0] += 1
        if count[0] % _TRACE_EVERY == 0 and clock() > deadline:
            raise _OverBudget
        return trace

    return trace


def render_bounded(template: jinja2.Template, env: BoundedSandbox, budget_chars: int, **kwargs: Any) -> str:
    """Render within TIME_BUDGET_S and `budget_chars`; any failure is a TemplateError."""
    env.max_size = budget_chars
    deadline = time.monotonic() + TIME_BUDGET_S
    previous = sys.gettrace()
    parts: list[str] = []
    total = 0
    gen = template.generate(**kwargs)
    sys.settrace(_deadline_tracer(deadline))
    try:
        for chunk in gen:
            total += len(chunk)
            if total > budget_chars:
                raise _too_big(f"a prompt longer than {budget_chars:,} characters")
            if time.monotonic() > deadline:
                raise _OverBudget
            parts.append(chunk)
    except _OverBudget:
        raise TemplateError(f"The model's chat template took longer than {TIME_BUDGET_S:g} s to render.") from None
    except TemplateError:
        raise
    except RecursionError:
        raise TemplateError("The model's chat template recursed too deeply.") from None
    except MemoryError:
        raise TemplateError("The model's chat template ran out of memory.") from None
    except jinja2.TemplateError as exc:
        raise TemplateError(f"The model's chat template failed to render: {exc}.") from None
    except Exception as exc:  # template code can raise anything: ZeroDivisionError, OverflowError, ...
        raise TemplateError(f"The model's chat template failed to render ({type(exc).__name__}: {exc}).") from None
    finally:
        sys.settrace(previous)
        gen.close()  # closed here, untraced: a generator finalised later would meet the tracer and print
    return "".join(parts)
