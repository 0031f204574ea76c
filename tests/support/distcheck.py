"""What a built wheel and sdist must (and must not) contain.

    python tests/support/distcheck.py --source ROOT ARTEFACT...

scripts/build-wheels runs this on every wheel and the sdist it builds;
tests/surfaces/test_packaging.py checks the checker.  Standard library
only: it runs with whichever interpreter builds the wheels.

* a wheel holds the Python package, its typing files, the public header
  (stride_weave/include/stride_weave/*.h, found by
  ``stride_weave.get_include()``) and one compiled extension; no C source
  and no private header of the extension;
* the compiled extension carries no DWARF debug information (release
  wheels are built with ``-g0``, as the large numeric wheels ship theirs);
* the sdist holds every C source and header of the source tree, so a build
  from it is complete.

Exit status 0 when every artefact passes, 1 otherwise (each problem on its
own line), 2 for bad arguments.
"""
import argparse
import pathlib
import struct
import sys
import tarfile
import zipfile

EXT_SOURCES = "src/stride_weave/_dtypes"
PUBLIC_HEADERS = "include/stride_weave"


def elf_section_names(data):
    """The section names of an ELF shared object (bytes); ValueError when
    `data` is not a 32- or 64-bit little- or big-endian ELF file."""
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        raise ValueError("not an ELF file")
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if is64:
        shoff, = struct.unpack_from(end + "Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 0x3A)
        name_at, offset_at, offset_fmt = 0, 0x18, "Q"
        size_at = 0x20
    else:
        shoff, = struct.unpack_from(end + "I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 0x2E)
        name_at, offset_at, offset_fmt = 0, 0x10, "I"
        size_at = 0x14

    def header(i):
        base = shoff + i * shentsize
        name, = struct.unpack_from(end + "I", data, base + name_at)
        offset, = struct.unpack_from(end + offset_fmt, data, base + offset_at)
        size, = struct.unpack_from(end + offset_fmt, data, base + size_at)
        return name, offset, size

    _, str_offset, str_size = header(shstrndx)
    strtab = data[str_offset:str_offset + str_size]
    names = []
    for i in range(shnum):
        name = header(i)[0]
        names.append(strtab[name:strtab.index(b"\0", name)].decode("ascii", "replace"))
    return names


def wheel_problems(path):
    """The problems of the wheel at `path`, as a list of sentences."""
    problems = []
    with zipfile.ZipFile(path) as whl:
        names = whl.namelist()
        extensions = [n for n in names if n.startswith("stride_weave/_dtypes.")
                      and n.endswith(".so")]
        for name in names:
            if name.endswith(".dist-info/") or ".dist-info/" in name:
                continue
            if name.endswith((".c", ".cc", ".cpp")):
                problems.append(f"{name}: a C source in the wheel")
            elif name.endswith(".h") and not name.startswith(
                    "stride_weave/include/stride_weave/"):
                problems.append(f"{name}: a private header in the wheel")
        if "stride_weave/include/stride_weave/dtypes.h" not in names:
            problems.append("the public header stride_weave/include/stride_weave/"
                            "dtypes.h is missing")
        if len(extensions) != 1:
            problems.append(f"expected one compiled extension stride_weave/"
                            f"_dtypes.*.so, found {extensions}")
        for name in extensions:
            try:
                sections = elf_section_names(whl.read(name))
            except (ValueError, struct.error, IndexError) as e:
                problems.append(f"{name}: cannot read its ELF sections ({e})")
                continue
            debug = sorted(s for s in sections if s.startswith((".debug_", ".zdebug_")))
            if debug:
                problems.append(f"{name}: carries debug information ({', '.join(debug)})")
    return problems


def sdist_problems(path, source):
    """The C sources and headers of the tree at `source` that the sdist at
    `path` lacks, as a list of sentences."""
    expected = set()
    for folder, patterns in ((EXT_SOURCES, ("*.c", "*.h")), (PUBLIC_HEADERS, ("*.h",))):
        for pattern in patterns:
            expected.update(p.relative_to(source).as_posix()
                            for p in (source / folder).glob(pattern))
    with tarfile.open(path) as sdist:
        # Members are "<name>-<version>/<path>".
        present = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    return [f"{name}: missing from the sdist" for name in sorted(expected - present)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=pathlib.Path, required=True,
                        help="the source tree the artefacts were built from")
    parser.add_argument("artefacts", nargs="+", type=pathlib.Path)
    args = parser.parse_args(argv)
    failed = False
    for path in args.artefacts:
        if path.suffix == ".whl":
            problems = wheel_problems(path)
        elif path.name.endswith(".tar.gz"):
            problems = sdist_problems(path, args.source)
        else:
            parser.error(f"{path}: neither a wheel nor an sdist")
        for problem in problems:
            print(f"{path.name}: {problem}")
        if not problems:
            print(f"{path.name}: contents as expected")
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
