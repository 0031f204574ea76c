# Builds the swcheck example against the installed stride_weave:
#     python setup.py build_ext --inplace
import stride_weave
from setuptools import Extension, setup

setup(
    name="swcheck",
    ext_modules=[
        Extension(
            "swcheck",
            sources=["swcheck.c"],
            include_dirs=[stride_weave.get_include()],
        )
    ],
)
