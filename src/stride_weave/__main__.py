"""``python -m stride_weave``: print the registered descriptor graph.

The same command as ``python -m stride_weave.dtypes``; see
``python -m stride_weave --help``.
"""
from stride_weave._cli import main

if __name__ == "__main__":
    raise SystemExit(main())
