"""What a test holds instead of the student's module: a `StudentModule` per topic module
(`bptt.rnn_forward(x, h0, Wx, Wh, b)`), whose attributes are `StudentFunction`s that run each
call in the worker through the `Sandbox`, and `Pending`, the result of a background call.
"""

from __future__ import annotations

from typing import Protocol


class Runs(Protocol):
    """What a proxy asks of the `Sandbox` that made it (sandbox.py imports this module, so the
    proxies name the calls they make rather than the class)."""

    def call(self, module, name, args, kwargs, *rest, **options): ...
    def call_replaced(self, module, name, args, *rest, **options): ...
    def submit(self, module, name, args, *rest, **options): ...
    def call_many(self, module, name, calls, *rest, **options): ...


class Pending:
    """A result to come: `make()` runs when `result()` is first asked (it may wait for a
    background call), and its value or exception is kept for later asks."""

    def __init__(self, make):
        self._make, self._outcome = make, None

    def result(self):
        if self._outcome is None:
            try:
                self._outcome = (True, self._make())
            except Exception as exc:  # noqa: BLE001 - raised again to whoever asks
                self._outcome = (False, exc)
        ok, value = self._outcome
        if not ok:
            raise value
        return value


class StudentFunction:
    def __init__(self, module: StudentModule, name: str, patches: dict | None = None, replace: dict | None = None,
                 follow: tuple | None = None):
        self._module, self._name, self._patches, self._replace = module, name, patches, replace
        self._follow = follow

    def __call__(self, *args, **kwargs):
        if self._replace:
            result, mutated, notes = self._module._sandbox.call_replaced(self._module._name, self._name, args,
                                                                         self._replace, self._patches)
        else:
            result, mutated, notes = self._module._sandbox.call(self._module._name, self._name, args, kwargs,
                                                                self._patches, self._follow)
        self._module.last_mutated, self._module.last_notes = mutated, notes
        return result

    def submit(self, *args) -> Pending:
        """self(*args), run in the background on a second worker (see `Sandbox.submit`): its
        `result()` is the call's result, or raises what the call raised."""
        call = self._module._sandbox.submit(self._module._name, self._name, args, self._patches, self._replace)
        return Pending(lambda: call.result()[0])

    def map(self, arg_lists) -> list:
        """[f(*args) for args in arg_lists], in one exchange with the worker. The first
        failing call raises, as in that loop."""
        calls: list[tuple[tuple, dict]] = [(tuple(args), {}) for args in arg_lists]
        replies = self._module._sandbox.call_many(self._module._name, self._name, calls, self._patches)
        self._module.last_mutated = list(dict.fromkeys(name for _result, mutated, _notes in replies for name in mutated))
        return [reply[0] for reply in replies]

    def patched(self, patches: dict) -> StudentFunction:
        """The same function, run with module attributes replaced, e.g.
        {"fault_injection.clip_grad_norm": BrokenClip()}: a callable replacement stays in the
        grader and is lent for the call (the worker gets a proxy, revoked when the call
        ends); a plain value (a number, an array) is set as it is."""
        return StudentFunction(self._module, self._name, patches, self._replace)

    def followed(self, function: str, argument: int, result: int) -> StudentFunction:
        """The same function, watching what the module's `function` is handed when this one calls
        it: after a call, last_notes["followed"] says for each call of `function` whether its
        argument `argument` was element `result` of what its previous call returned (the same
        objects; None for the first call). See isolation/follow.py."""
        return StudentFunction(self._module, self._name, self._patches, self._replace, (function, argument, result))

    def replaced(self, replace: dict) -> StudentFunction:
        """The same function, each call in a fresh worker whose module has other code in the
        functions of `replace` ({"module.function": rewrite.Body}; see `Sandbox.call_replaced`)."""
        return StudentFunction(self._module, self._name, self._patches, replace)

    def __repr__(self):
        return f"<student function {self._module._name}.{self._name}>"


class StudentModule:
    """Looks like the student's module; every function call runs in the worker."""

    def __init__(self, sandbox: Runs, name: str):
        self._sandbox, self._name = sandbox, name
        self.last_mutated: list[str] = []   # names of the arguments the last call modified
        self.last_notes: dict = {}          # of the last call: "aliased" arguments handed back, "warnings" raised

    def __getattr__(self, name: str) -> StudentFunction:
        if name.startswith("_"):
            raise AttributeError(name)
        return StudentFunction(self, name)

    def __repr__(self):
        return f"<student module {self._name} (in the worker)>"
