"""stride-weave: process-unique dtype descriptors for tensor frameworks.

The descriptor model is implemented in the C extension
``stride_weave._dtypes``; import the public names from
``stride_weave.dtypes``. ``python -m stride_weave`` prints the
registered descriptor graph. C extensions use the C API in
``<stride_weave/dtypes.h>``, found through :func:`get_include`.
"""

import os

__version__ = "0.1.0"

__all__ = ["get_include"]


def get_include() -> str:
    """Return the directory that holds ``stride_weave/dtypes.h``, the C API
    header, for a C extension's include path (docs/c-api.md).

    In an installed package that is ``stride_weave/include`` inside the
    package; when the package is imported from a source checkout
    (``src/stride_weave``), it is the checkout's ``include`` directory.
    Raises FileNotFoundError when neither holds the header.
    """
    package = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(package, "include")]
    src = os.path.dirname(package)
    if os.path.basename(src) == "src":
        candidates.append(os.path.join(os.path.dirname(src), "include"))
    for directory in candidates:
        if os.path.isfile(os.path.join(directory, "stride_weave", "dtypes.h")):
            return directory
    raise FileNotFoundError(
        "stride_weave.get_include(): stride_weave/dtypes.h is not in "
        + " or ".join(candidates)
        + "; reinstall stride-weave with pip"
    )
