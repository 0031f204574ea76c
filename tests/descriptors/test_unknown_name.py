"""A from_name miss: an UnknownNameError (a LookupError) whose message is
formatted when first read, from the registry as it was at the miss."""
import copy
import io
import pickle
import traceback

import pytest

from stride_weave import _dtypes
from stride_weave.dtypes import DType, SimpleDType
from support import child_report, unique_name


def miss(name, cls=DType):
    with pytest.raises(LookupError) as info:
        cls.from_name(name)
    return info.value


def test_a_miss_is_a_lookup_error_exported_by_the_public_module():
    e = miss("float32")
    assert type(e) is _dtypes.UnknownNameError
    assert isinstance(e, LookupError) and not isinstance(e, KeyError)
    assert __import__("stride_weave.dtypes").dtypes.UnknownNameError is _dtypes.UnknownNameError


@pytest.mark.parametrize("read", [
    lambda e: e.args[0], str, lambda e: repr(e).split("(", 1)[1][1:-2],
    lambda e: pickle.loads(pickle.dumps(e)).args[0],
    lambda e: traceback.format_exception_only(type(e), e)[-1].split(": ", 1)[1].rstrip("\n"),
])
def test_every_read_gives_the_full_message(read):
    expected = ("no descriptor is registered under the name 'float32'; "
                "did you mean 'Float32'?")
    assert read(miss("float32")) == expected
    assert read(miss("float32", SimpleDType)) == expected


def test_a_printed_traceback_has_the_message():
    try:
        DType.from_name("Flaot32")
    except LookupError:
        buf = io.StringIO()
        traceback.print_exc(file=buf)
    assert buf.getvalue().rstrip().endswith(
        "UnknownNameError: no descriptor is registered under the name "
        "'Flaot32'; did you mean 'Float32'?")


def test_the_message_reflects_the_registry_at_the_miss():
    name = unique_name("LateName")
    query = name.lower()
    formatted_then = str(miss(query))     # read before the registration
    unread = miss(query)                  # read after it
    SimpleDType(name, bits=8, supertype=DType.Integer)
    # the miss reads as if it had been formatted when it happened: the
    # name registered since is not among its suggestions
    assert str(unread) == formatted_then
    assert repr(name) not in formatted_then
    # a miss after the registration suggests it (a case-insensitive match)
    assert str(miss(query)) == (
        f"no descriptor is registered under the name {query!r}; "
        f"did you mean {name!r}?")


def test_a_name_registered_after_its_own_miss_is_never_suggested_to_itself():
    name = unique_name("Itself")
    e = miss(name)
    SimpleDType(name, bits=8, supertype=DType.Integer)
    message = str(e)
    assert message.startswith(f"no descriptor is registered under the name {name!r}")
    assert repr(name) not in message.partition(";")[2]
    assert DType.from_name(name).name == name


def test_args_stored_past_the_miss_own_init_are_kept():
    """LookupError.__init__ called directly (not the miss's own __init__)
    stores args the miss then keeps: its message is never made over them."""
    e = miss("float32")
    LookupError.__init__(e, "stored", 2)
    assert e.args == ("stored", 2)
    assert str(e) == "('stored', 2)"
    assert repr(e) == "UnknownNameError('stored', 2)"
    assert pickle.loads(pickle.dumps(e)).args == ("stored", 2)


def test_init_refuses_keywords_as_lookup_error_does_and_changes_nothing():
    e = miss("float32")
    with pytest.raises(TypeError) as info:
        e.__init__("x", key=1)
    with pytest.raises(TypeError) as plain:
        LookupError().__init__("x", key=1)
    assert str(info.value) == str(plain.value).replace(
        "LookupError", "stride_weave.dtypes.UnknownNameError")
    assert e.args == ("no descriptor is registered under the name 'float32'; "
                      "did you mean 'Float32'?",)


def test_attributes_and_notes_pickle_and_copy_with_the_message():
    e = miss("float32")
    e.detail = [1, 2]
    e.add_note("while loading a checkpoint")
    for twin in (pickle.loads(pickle.dumps(e)), copy.copy(e), copy.deepcopy(e)):
        assert type(twin) is type(e) and twin.args == e.args
        assert twin.detail == [1, 2]
        assert twin.__notes__ == ["while loading a checkpoint"]
    assert e.args[0].endswith("did you mean 'Float32'?")


def test_kind_mismatch_is_still_a_plain_lookup_error():
    with pytest.raises(LookupError) as info:
        SimpleDType.from_name("Floating")
    assert type(info.value) is LookupError


def test_suggestions_match_difflib_and_case_folding():
    """The suggestions, chosen in C, are those support.miss computes with
    difflib: on a registry of names that are near each other (case variants,
    one- or two-character edits, non-ASCII letters with and without case,
    long names of a few repeated letters, where difflib ignores a long
    query's frequent letters), for queries made from them by more edits."""
    report = child_report('''
        import json, random
        from hypothesis import given, settings, strategies as st
        from stride_weave.dtypes import DType, SimpleDType
        from support.miss import expected_message

        rng = random.Random(20240611)
        LETTERS = "abcxyzABCXYZ019_" + "\\u00e9\\u00c9\\u03a3\\u03c3\\u03c2\\u00df\\u1e9e\\u0130i\\U0001d518"

        def edit(text, r, count):
            text = list(text)
            for _ in range(count):
                op = r.randrange(4)
                at = r.randrange(len(text) + 1)
                if op == 0 or not text:
                    text.insert(at, r.choice(LETTERS))
                elif op == 1:
                    text[min(at, len(text) - 1)] = r.choice(LETTERS)
                elif op == 2:
                    del text[min(at, len(text) - 1)]
                else:
                    i = min(at, len(text) - 1)
                    text[i] = text[i].swapcase()
            return "".join(text) or "x"

        stems = ["".join(rng.choice(LETTERS) for _ in range(rng.randrange(2, 12)))
                 for _ in range(40)]
        stems += ["".join(rng.choice("ab") for _ in range(rng.randrange(180, 201)))
                  for _ in range(6)]
        names = []
        for stem in stems:
            for variant in [stem, stem.upper(), stem.lower(), stem.swapcase()] + [
                    edit(stem, rng, rng.randrange(1, 3)) for _ in range(6)]:
                if variant not in names and len(variant) <= 201:
                    names.append(variant)
        for name in names:
            SimpleDType(name, bits=8, supertype=DType.Integer)
        registered = [d.name for d in DType.registered()]
        checked = []
        wrong = []

        def message_of(query):
            try:
                DType.from_name(query)
            except LookupError as e:
                return str(e)
            return None

        @settings(max_examples=1000, derandomize=True, deadline=None, database=None)
        @given(st.sampled_from(names), st.integers(1, 3), st.integers(0, 2**32),
               st.booleans())
        def check(name, edits, seed, to_200):
            query = edit(name, random.Random(seed), edits)
            if to_200 and len(name) > 100:  # 200 characters: difflib's autojunk
                query = (query + name)[:200]
            got = message_of(query)
            if got is None:
                return      # a hit
            checked.append(query)
            if got != expected_message(query, registered):
                wrong.append([query, got, expected_message(query, registered)])

        check()
        suggested = [q for q in checked if "did you mean" in expected_message(q, registered)]
        three = [q for q in checked if expected_message(q, registered).count("'") >= 8]
        print(json.dumps({"wrong": wrong[:3], "checked": len(checked),
                          "suggested": len(suggested), "three": len(three),
                          "long": sum(len(q) == 200 for q in suggested)}))
    ''', timeout=600)
    assert report["wrong"] == []
    # the examples reach every kind of answer
    assert report["checked"] > 800
    assert report["suggested"] > 400 and report["three"] > 100 and report["long"] > 15


# ---- the names of the formats pack --------------------------------------

def test_the_core_knows_the_pack_names_the_pack_declares():
    """The miss's message is made in C, from the core's own copy of the
    pack's names: it is the pack's table, in order."""
    from stride_weave import _packs

    assert _dtypes._PACK_NAMES == dict(_packs.PACKS)["stride_weave.formats"]
    assert all(type(n) is str for n in _dtypes._PACK_NAMES)


_MISSES_IN_A_FRESH_PROCESS = """
import json, sys
from stride_weave.dtypes import DType, SimpleDType
if sys.argv[1] == "pack":
    import stride_weave.formats
elif sys.argv[1] == "16x16 taken":
    # Another module holds a block-scaled name of the pack.
    from stride_weave.dtypes import BlockScaledDType, Level
    BlockScaledDType("NVFP4_16x16", element=DType.E2M1, levels=[Level(DType.E4M3, 16)])
elif sys.argv[1] == "Int16 taken":
    # Another module holds one of the pack's names: the pack's import fails.
    SimpleDType("Int16", bits=16, supertype=DType.Integer)
    try:
        import stride_weave.formats
    except ValueError:
        pass
    else:
        raise AssertionError("the pack was imported over a name it does not own")
out = []
for name in sys.argv[2:]:
    try:
        DType.from_name(name)
    except LookupError as e:
        out.append(str(e))
print(json.dumps(out))
"""


def test_a_miss_on_a_pack_name_says_which_import_registers_it():
    assert child_report(_MISSES_IN_A_FRESH_PROCESS, "no pack", "Float16", "UInt4") == [
        "no descriptor is registered under the name 'Float16'; "
        "import stride_weave.formats registers it",
        "no descriptor is registered under the name 'UInt4'; "
        "import stride_weave.formats registers it",
    ]


def test_suggestions_include_the_pack_names_and_say_where_they_come_from():
    assert child_report(_MISSES_IN_A_FRESH_PROCESS, "no pack", "Flaot16", "Flaot32") == [
        "no descriptor is registered under the name 'Flaot16'; did you mean "
        "'Float16', 'BFloat16' or 'Float64'? (import stride_weave.formats "
        "registers 'Float16' and 'BFloat16')",
        "no descriptor is registered under the name 'Flaot32'; did you mean "
        "'Float32'?",
    ]


def test_once_the_pack_is_imported_its_names_are_suggested_without_the_hint():
    assert child_report(_MISSES_IN_A_FRESH_PROCESS, "pack", "Flaot16") == [
        "no descriptor is registered under the name 'Flaot16'; did you mean "
        "'Float16', 'BFloat16' or 'Float64'?",
    ]


def test_no_miss_advises_a_pack_import_that_cannot_succeed():
    """Once another module registered one of the pack's names, importing the
    pack fails: a miss on a pack name says so and names the holder, and no
    suggestion offers a pack name that cannot be registered."""
    assert child_report(_MISSES_IN_A_FRESH_PROCESS, "Int16 taken", "BFloat16",
                        "Flaot16") == [
        "no descriptor is registered under the name 'BFloat16'; "
        "stride_weave.formats defines it, but cannot be imported in this "
        "process: another module registered 'Int16', one of its names",
        "no descriptor is registered under the name 'Flaot16'; did you mean "
        "'Float64'?",
    ]


def test_after_a_pack_import_stopped_half_way_a_miss_still_advises_the_import():
    """The pack adopts the names its own stopped import registered, so a
    miss on a pack name still advises importing it, and importing it again
    succeeds."""
    report = child_report("""
        import json, sys
        from stride_weave.dtypes import DType

        def hook(frame, event, arg):
            # Stop the pack's import at its first format's mapping: its
            # category and that format are registered, the rest are not.
            if (event == "call" and frame.f_code.co_name == "_publish"
                    and frame.f_back.f_code.co_name == "_register"):
                raise RuntimeError("interrupted")

        sys.setprofile(hook)
        try:
            import stride_weave.formats
        except RuntimeError:
            pass
        finally:
            sys.setprofile(None)
        registered = [d.name for d in DType.registered() if d.name in ("Complex", "Float16")]
        try:
            DType.from_name("Int64")
        except LookupError as exc:
            message = str(exc)
        sys.modules.pop("stride_weave.formats", None)
        import stride_weave.formats as formats
        print(json.dumps({"message": message, "registered": registered,
                          "reimported": formats.Int64 is DType.from_name("Int64")}))
    """)
    assert report["registered"], "the import was not stopped half-way"
    assert report["message"] == (
        "no descriptor is registered under the name 'Int64'; "
        "import stride_weave.formats registers it")
    assert report["reimported"]


def test_a_miss_on_a_block_scaled_pack_name_says_which_import_registers_it():
    assert child_report(_MISSES_IN_A_FRESH_PROCESS, "no pack", "NVFP4_16x16",
                        "FP8_E4M3_1x128") == [
        "no descriptor is registered under the name 'NVFP4_16x16'; "
        "import stride_weave.formats registers it",
        "no descriptor is registered under the name 'FP8_E4M3_1x128'; "
        "import stride_weave.formats registers it",
    ]


def test_a_block_scaled_pack_name_another_module_holds_blocks_the_advice():
    assert child_report(_MISSES_IN_A_FRESH_PROCESS, "16x16 taken", "Float16") == [
        "no descriptor is registered under the name 'Float16'; "
        "stride_weave.formats defines it, but cannot be imported in this "
        "process: another module registered 'NVFP4_16x16', one of its names",
    ]


def test_after_a_pack_import_stopped_among_its_block_scaled_formats_the_advice_stays():
    """The pack's own block-scaled formats left by a stopped import block
    nothing: a miss still advises the import, which then completes."""
    report = child_report(r"""
        import json, sys
        from stride_weave import _dtypes
        from stride_weave.dtypes import DType

        # Stop the pack's import at its second block-scaled format: the
        # stand-in runs as code of the pack's module, as the pack's call does.
        real = _dtypes.BlockScaledDType
        pack = {"__name__": "stride_weave.formats", "real": real}
        exec("def stopping(name, **kwargs):\n"
             "    if name == 'MXFP8_E4M3_32x32':\n"
             "        raise RuntimeError('interrupted')\n"
             "    return real(name, **kwargs)\n", pack)
        pack["stopping"].registered = real.registered
        _dtypes.BlockScaledDType = pack["stopping"]
        try:
            import stride_weave.formats
        except RuntimeError:
            pass
        finally:
            _dtypes.BlockScaledDType = real
        registered = [d.name for d in DType.registered()
                      if d.name in ("NVFP4_16x16", "MXFP8_E4M3_32x32")]
        try:
            DType.from_name("FP8_E4M3_128x128")
        except LookupError as exc:
            message = str(exc)
        sys.modules.pop("stride_weave.formats", None)
        import stride_weave.formats as formats
        print(json.dumps({"message": message, "registered": registered,
                          "reimported": [d.name for d in formats.BLOCK_SCALED]}))
    """)
    assert report["registered"] == ["NVFP4_16x16"]
    assert report["message"] == (
        "no descriptor is registered under the name 'FP8_E4M3_128x128'; "
        "import stride_weave.formats registers it")
    assert report["reimported"] == ["NVFP4_16x16", "MXFP8_E4M3_32x32",
                                    "FP8_E4M3_128x128", "FP8_E4M3_1x128"]


# ---- other libraries' names ------------------------------------------------

_FOREIGN_QUERIES = ("float8_e4m3fn", "torch.float8_e4m3fn", "float4_e2m1fn",
                    "float8_e8m0fnu", "float32", "int8", "bfloat16", "np.float16",
                    "half", "float8_e4m3")


def test_a_miss_on_another_librarys_name_suggests_its_format():
    """numpy's, ml_dtypes' and torch's names are natural first guesses: a
    miss on one suggests the format it names (a pack format with the import
    that registers it); a name that means another format suggests nothing
    (ml_dtypes' float8_e4m3 has infinities: it is not E4M3)."""
    assert child_report(_MISSES_IN_A_FRESH_PROCESS, "no pack", *_FOREIGN_QUERIES) == [
        "no descriptor is registered under the name 'float8_e4m3fn'; did you mean 'E4M3'?",
        "no descriptor is registered under the name 'torch.float8_e4m3fn'; did you mean "
        "'E4M3'?",
        "no descriptor is registered under the name 'float4_e2m1fn'; did you mean 'E2M1'?",
        "no descriptor is registered under the name 'float8_e8m0fnu'; did you mean 'E8M0'?",
        "no descriptor is registered under the name 'float32'; did you mean 'Float32'?",
        "no descriptor is registered under the name 'int8'; did you mean 'Int8'?",
        "no descriptor is registered under the name 'bfloat16'; did you mean 'BFloat16'? "
        "(import stride_weave.formats registers 'BFloat16')",
        "no descriptor is registered under the name 'np.float16'; did you mean 'Float16'? "
        "(import stride_weave.formats registers 'Float16')",
        "no descriptor is registered under the name 'half'; did you mean 'Float16'? "
        "(import stride_weave.formats registers 'Float16')",
        "no descriptor is registered under the name 'float8_e4m3'",
    ]


def test_another_librarys_name_follows_the_pack_state():
    """Once the pack is imported its formats are suggested without the
    advice; once its import cannot succeed, they are not suggested."""
    assert child_report(_MISSES_IN_A_FRESH_PROCESS, "pack", "bfloat16", "short") == [
        "no descriptor is registered under the name 'bfloat16'; did you mean 'BFloat16'?",
        "no descriptor is registered under the name 'short'; did you mean 'Int16'?",
    ]
    assert child_report(_MISSES_IN_A_FRESH_PROCESS, "Int16 taken", "bfloat16",
                        "float16", "short") == [
        "no descriptor is registered under the name 'bfloat16'; did you mean 'Float64'?",
        "no descriptor is registered under the name 'float16'; did you mean 'Float64'?",
        "no descriptor is registered under the name 'short'; did you mean 'Int16'?",
    ]


def test_the_foreign_names_are_those_of_the_built_in_and_pack_formats():
    """Every numpy and torch name of a built-in or pack format's interop
    mapping is in the table, for that format; the other entries are numpy's
    synonyms of those names; every entry names a built-in or a pack format,
    and no foreign name is listed twice."""
    report = child_report('''
        import json
        import stride_weave.formats
        from stride_weave import _dtypes, _packs, interop
        from stride_weave.dtypes import DType

        table = dict(_dtypes._FOREIGN_NAMES)
        mapped, wrong = set(), []
        for d in DType.registered():
            if not d.is_simple():
                continue
            m = interop.mapping(d)
            for foreign in (m.numpy, m.torch):
                if foreign is not None:
                    mapped.add(foreign)
                    if table.get(foreign) != d.name:
                        wrong.append([foreign, d.name, table.get(foreign)])
        synonyms = {}
        try:
            import numpy as np
        except ImportError:
            np = None
        for foreign, ours in table.items():
            if foreign not in mapped and np is not None:
                synonyms[foreign] = [str(np.dtype(foreign)),
                                     interop.mapping(DType.from_name(ours)).numpy]
        print(json.dumps({"wrong": wrong, "pairs": len(_dtypes._FOREIGN_NAMES),
                          "names": len(table), "synonyms": synonyms,
                          "targets": sorted(set(table.values())),
                          "known": sorted({d.name for d in DType.registered()}),
                          "numpy": np is not None}))
    ''')
    assert report["wrong"] == []
    assert report["pairs"] == report["names"]
    assert set(report["targets"]) <= set(report["known"])
    if report["numpy"]:
        assert sorted(report["synonyms"]) == ["bool_", "cdouble", "double", "half",
                                              "short", "single"]
        assert all(a == b for a, b in report["synonyms"].values()), report["synonyms"]
