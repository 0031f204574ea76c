"""stride-weave: process-unique dtype descriptors for tensor frameworks.

The descriptor model is implemented in the C extension
``stride_weave._dtypes``; import the public names from
``stride_weave.dtypes``. ``python -m stride_weave.dtypes`` prints the
registered descriptor graph.
"""

__version__ = "0.1.0"
