"""Arrow's compute functions without importing :mod:`pyarrow.compute`.

Importing :mod:`pyarrow.compute` wraps each of Arrow's ~290 compute functions in Python with a
signature and a docstring built from its documentation, about 70 ms of CPU at every start: a
fifth of what a command costs on a small file. The compiled functions themselves live in
``pyarrow._compute``; :data:`pc` calls them the way :mod:`pyarrow.compute` does (positional
arrays, then the options of the function's options class, positional or by keyword) and
builds the wrapper of a function only when it is first used.

Examples
--------
>>> import pyarrow as pa
>>> values = pa.array(["a", "b", "c"])
>>> pc.is_in(values, value_set=pa.array(["b"])).to_pylist()
[False, True, False]
>>> pc.sum(pc.invert(pc.is_valid(pa.array([1, None, None])))).as_py()
2
>>> pc.utf8_ltrim(pa.array(["  #x"]), characters=" ").to_pylist()
['#x']
>>> pc.and_(pa.array([True, True]), pa.array([True, False])).to_pylist()
[True, False]
>>> pc.no_such_function
Traceback (most recent call last):
...
AttributeError: Arrow has no compute function 'no_such_function'.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any

import pyarrow._compute as _compute

__all__ = ["pc"]


def _wrapper(name: str, function: Any, options_class: Any) -> Callable[..., Any]:
    """The function ``name`` called as :mod:`pyarrow.compute`'s wrapper of it calls it."""
    arity = function.arity

    def call(*args: Any, memory_pool: Any = None, options: Any = None, **kwargs: Any) -> Any:
        option_args: tuple[Any, ...] = ()
        if arity is not Ellipsis:
            if len(args) < arity or (options_class is None and len(args) != arity):
                raise TypeError(
                    f"{name} takes {arity} positional argument(s), but {len(args)} were given"
                )
            args, option_args = args[:arity], args[arity:]
        if option_args or kwargs:
            if options_class is None:
                raise TypeError(f"{name} takes no options")
            if options is not None:
                raise TypeError(
                    f"Function {name!r} called with both an 'options' argument and additional"
                    " arguments"
                )
            options = options_class(*option_args, **kwargs)
        elif isinstance(options, dict):
            options = options_class(**options)
        return function.call(args, options, memory_pool)

    call.__name__ = call.__qualname__ = name
    return call


class _Compute:
    """The namespace of Arrow's compute functions, each wrapped on first use."""

    @staticmethod
    def cast(values: Any, target_type: Any, safe: bool = True) -> Any:
        """``values`` cast to ``target_type`` (``Array.cast`` imports :mod:`pyarrow.compute`).

        >>> import pyarrow as pa
        >>> pc.cast(pa.array(["7", "-2"]), pa.int64()).to_pylist()
        [7, -2]
        """
        options = (_compute.CastOptions.safe if safe else _compute.CastOptions.unsafe)(target_type)
        return _compute.call_function("cast", [values], options)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("__"):
            raise AttributeError(name)
        # ``and``, ``or``, ... are Python keywords: pyarrow.compute calls them ``and_``, ...
        arrow_name = name[:-1] if keyword.iskeyword(name[:-1]) else name
        try:
            function = _compute.get_function(arrow_name)
        except Exception:  # ArrowKeyError: no such function
            raise AttributeError(f"Arrow has no compute function {name!r}.") from None
        class_name = function._doc.options_class
        options_class = getattr(_compute, class_name) if class_name else None
        wrapped = _wrapper(arrow_name, function, options_class)
        setattr(self, name, wrapped)
        return wrapped


#: Use as ``pc.is_in(values, value_set=...)``, like :mod:`pyarrow.compute`.
pc: Any = _Compute()
