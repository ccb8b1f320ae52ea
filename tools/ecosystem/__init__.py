"""Run the JAX ecosystem's own test suites on plait and on JAX (issue 25).

One idea per module: ``libraries`` (what is tested, pinned), ``sources`` (the
test files, from each library's sdist on the package index), ``record`` (a
pytest plugin writing each test's outcome as it happens, under a time budget),
``run`` (one suite, on plait via ``plait.compat`` or on JAX), ``causes`` (a
failure's cause, grouped) and ``report`` (the table).  The nox session
``ecosystem`` drives them; ``python -m tools.ecosystem.run --help`` by hand.
"""
