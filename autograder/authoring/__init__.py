"""What a unit's suite authors use: `checks` (assertions whose messages speak to the
student) and `public_plugin` (the fixtures of the public tests when a student runs them
with plain pytest).

Kept empty: the worker imports `checks` through the unit's helpers, and must load nothing
else of the engine with it."""
