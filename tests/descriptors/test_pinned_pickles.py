"""Requirement: every existing structure, record and pickle is unchanged.

The built-in descriptors and those of the formats pack write, under every
protocol, the bytes the release before N-D blocks wrote, and those bytes
load as the same descriptors (docs/pickling.md, docs/structure.md).  The
bytes are in ``_pinned_pickles``, made once by that release.

One change is by design: a descriptor with a numeric record that is not
a built-in (the pack's Float16, say) now states its record after the
record of that release, so a process with another definition refuses it;
everything before that statement is the pinned record, byte for byte.
"""
import hashlib
import io
import pickle

import pytest

import _pinned_pickles as pinned
import stride_weave.formats  # noqa: F401 (registers the pack's descriptors)
from stride_weave import _dtypes
from stride_weave.dtypes import DType, SymbolicBits, Whole

PINNED = sorted(pinned.DIGESTS)


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def test_the_pins_cover_every_builtin_and_every_format_of_the_pack_of_that_release():
    builtins = {d.name for d in DType.registered() if d.__reduce_ex__(2)[1][1:] == ()}
    assert builtins <= set(PINNED)
    assert len(PINNED) == 36
    assert set(pinned.PROTOCOL_0) == set(pinned.PROTOCOL_2) == set(pinned.STRUCTURES) \
        == set(PINNED)


@pytest.mark.parametrize("name", PINNED)
def test_structure_is_unchanged(name):
    d = DType.from_name(name)
    assert _sha(repr(d.structure()).encode()) == pinned.STRUCTURES[name]


def _pinned_arguments(data):
    """The arguments the pinned pickle passes to the reconstructor."""
    class Recorder(pickle.Unpickler):
        def find_class(self, module, name):
            return lambda *args: args
    return Recorder(io.BytesIO(data)).load()


def _states_a_record(d):
    record = d.__reduce_ex__(2)[1][0]
    return type(record[-1]) is tuple and len(record[-1]) > 0 and all(
        s is None or type(s) is tuple for s in record[-1]) and record[-1] != ()


@pytest.mark.parametrize("name", PINNED)
def test_every_protocol_writes_the_pinned_bytes(name):
    d = DType.from_name(name)
    if not _states_a_record(d):
        assert pickle.dumps(d, 0) == pinned.PROTOCOL_0[name]
        assert pickle.dumps(d, 2) == pinned.PROTOCOL_2[name]
        assert tuple(_sha(pickle.dumps(d, p)) for p in range(6)) == pinned.DIGESTS[name]
        return
    # the pinned record, then the statement of its numeric record
    old = _pinned_arguments(pinned.PROTOCOL_2[name])
    new = d.__reduce_ex__(2)[1]
    assert new[0][:-1] == old[0] and new[1:] == old[1:]
    r = _dtypes.numeric_info(d)
    assert new[0][-1] == ((r.kind, r.encoding, r.bits, r.signed, r.exponent_bits,
                           r.mantissa_bits, r.bias, r.nan_encoding),)


@pytest.mark.parametrize("name", PINNED)
def test_the_pinned_bytes_load_as_the_registered_descriptor(name):
    d = DType.from_name(name)
    assert pickle.loads(pinned.PROTOCOL_0[name]) is d
    assert pickle.loads(pinned.PROTOCOL_2[name]) is d


BLOCK_SCALED = {
    "MXFP8_E4M3": (("E4M3", "E8M0"), (32,), 8.25),
    "MXFP8_E5M2": (("E5M2", "E8M0"), (32,), 8.25),
    "MXFP6_E3M2": (("E3M2", "E8M0"), (32,), 6.25),
    "MXFP6_E2M3": (("E2M3", "E8M0"), (32,), 6.25),
    "MXFP4": (("E2M1", "E8M0"), (32,), 4.25),
    "MXINT8": (("Int8", "E8M0"), (32,), 8.25),
    "NVFP4": (("E2M1", "E4M3", "Float32"), (16, Whole), SymbolicBits(4.5, 32)),
}


@pytest.mark.parametrize("name", sorted(BLOCK_SCALED))
def test_builtin_block_scaled_formats_keep_blocks_planes_and_bits(name):
    d = DType.from_name(name)
    planes, blocks, bits = BLOCK_SCALED[name]
    assert tuple(p.name for p in d.simple_types) == planes
    assert tuple(level.block for level in d.levels) == blocks
    assert type(d.bits_per_element) is type(bits) and d.bits_per_element == bits
