"""Build script for the ``stride_weave._dtypes`` C extension.

Project metadata lives in pyproject.toml; this file only declares the
extension module and ships the public C headers. Warnings: ``-Wall -Wextra``
always; ``-Werror`` as well when the environment sets ``STRIDE_WEAVE_WERROR=1``
(``.ci/run`` does). The flags go to this extension only, never to
dependencies that pip builds in the same run: set these variables, not
``CFLAGS``.

``STRIDE_WEAVE_RELEASE=1`` (``scripts/build-wheels`` and cibuildwheel set it)
builds a release wheel: ``-g0`` after the interpreter's own flags, so the
extension carries no debug information (a fifth of the size). A build from
the sdist or a checkout keeps the interpreter's ``-g``.
"""
import os
from glob import glob

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

EXT_DIR = "src/stride_weave/_dtypes"

extra_compile_args = ["-Wall", "-Wextra"]
if os.environ.get("STRIDE_WEAVE_WERROR") == "1":
    extra_compile_args.append("-Werror")
if os.environ.get("STRIDE_WEAVE_RELEASE") == "1":
    extra_compile_args.append("-g0")

dtypes_ext = Extension(
    "stride_weave._dtypes",
    # the descriptor core, and the codec engine in codec/
    sources=sorted(glob(f"{EXT_DIR}/*.c") + glob(f"{EXT_DIR}/codec/*.c")),
    include_dirs=[EXT_DIR, "include"],
    depends=sorted(glob(f"{EXT_DIR}/*.h") + glob(f"{EXT_DIR}/codec/*.h")
                   + glob("include/**/*.h", recursive=True)),
    extra_compile_args=extra_compile_args + ["-pthread"],
    # the codecs start threads for large arrays
    extra_link_args=["-pthread"],
)


class build_py_with_headers(build_py):
    """Copy the public C headers (include/stride_weave/*.h) into the package
    as stride_weave/include/stride_weave/, where stride_weave.get_include()
    finds them in an installed wheel. include/ stays their one source."""

    def run(self):
        super().run()
        for header in sorted(glob("include/stride_weave/*.h")):
            target = os.path.join(self.build_lib, "stride_weave", header)
            self.mkpath(os.path.dirname(target))
            self.copy_file(header, target, preserve_mode=False)

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + [
            os.path.join(self.build_lib, "stride_weave", header)
            for header in sorted(glob("include/stride_weave/*.h"))
        ]


setup(ext_modules=[dtypes_ext], cmdclass={"build_py": build_py_with_headers})
