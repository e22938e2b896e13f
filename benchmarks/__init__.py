"""Speed benchmarks run by ``make perf*``: each script prints figures and asserts nothing.

Kept outside the installed packages (they are not in the wheel) because they reach into kinds'
own modules to time them; nothing in the wheel may import them.
"""
