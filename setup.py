"""Build script for the ``stride_weave._dtypes`` C extension.

Project metadata lives in pyproject.toml; this file only declares the
extension module. Warnings: ``-Wall -Wextra`` always; ``-Werror`` as well when
the environment sets ``STRIDE_WEAVE_WERROR=1`` (``.ci/run`` does).
"""
import os
from glob import glob

from setuptools import Extension, setup

EXT_DIR = "src/stride_weave/_dtypes"

extra_compile_args = ["-Wall", "-Wextra"]
if os.environ.get("STRIDE_WEAVE_WERROR") == "1":
    extra_compile_args.append("-Werror")

dtypes_ext = Extension(
    "stride_weave._dtypes",
    sources=sorted(glob(f"{EXT_DIR}/*.c")),
    include_dirs=[EXT_DIR, "include"],
    depends=sorted(glob(f"{EXT_DIR}/*.h") + glob("include/**/*.h", recursive=True)),
    extra_compile_args=extra_compile_args,
)

setup(ext_modules=[dtypes_ext])
