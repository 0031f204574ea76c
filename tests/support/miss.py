"""What a lookup miss says, computed independently of the extension.

`expected_message` is the message of the ``UnknownNameError`` raised by
``from_name(name)`` when the registered names were ``registered`` (in
registration order), as docs/design.md describes it: the names equal to the
query ignoring case (each character compared after its Unicode lowercase
mapping), else ``difflib.get_close_matches`` with its defaults (at most 3,
ratio at least 0.6, best first); the first 256 and the latest 4096
registered names are the candidates, names longer than 200 characters are
neither matched nor suggested, and the query itself is never suggested.
The names of the formats pack (``stride_weave._packs``) that are not
registered are candidates too, after the registered ones; a miss on one of
them says which import registers it, and suggestions among them say so.
A query that is another library's name for a built-in or pack format
(``float8_e4m3fn``, ``torch.bfloat16``: the extension's table of such
names, ``_dtypes._FOREIGN_NAMES``) suggests that format first, when it is a
candidate, then the names equal to it ignoring case, and no close name.
The extension computes this in C; ``difflib`` here is the reference it is
checked against.
"""
import difflib

from stride_weave import _dtypes, _packs

PACK_MODULE, PACK_NAMES = _packs.PACKS[0]

HEAD, TAIL, MAX_LENGTH, COUNT, CUTOFF = 256, 4096, 200, 3, 0.6

#: What may stand before a foreign name: str() of a torch dtype writes
#: "torch.", and code spells the modules so.
FOREIGN_PREFIXES = ("", "torch.", "np.", "numpy.", "jnp.", "ml_dtypes.")


def foreign_target(name):
    """The built-in or pack format ``name`` is another library's name for,
    or None."""
    table = dict(_dtypes._FOREIGN_NAMES)
    for prefix in FOREIGN_PREFIXES:
        if name.startswith(prefix) and name[len(prefix):] in table:
            return table[name[len(prefix):]]
    return None


def fold(text):
    """``text`` with each character replaced by the first character of its
    lowercase mapping (the simple mapping, as C's ``Py_UNICODE_TOLOWER``)."""
    return "".join(c.lower()[0] for c in text)


def close_names(name, registered):
    """The names a miss on ``name`` suggests among ``registered``."""
    if len(name) > MAX_LENGTH:
        return []
    registered = list(registered)
    if len(registered) > HEAD + TAIL:
        registered = registered[:HEAD] + registered[-TAIL:]
    candidates = [n for n in registered if len(n) <= MAX_LENGTH and n != name]
    now = registered_now()
    candidates += [n for n in PACK_NAMES if n not in now and n != name]
    folded = fold(name)
    same = [n for n in candidates if len(n) == len(name) and fold(n) == folded]
    target = foreign_target(name)
    if target is not None and target in candidates:
        return ([target] + [n for n in same if n != target])[:COUNT]
    return same[:COUNT] or difflib.get_close_matches(name, candidates, COUNT, CUTOFF)


def registered_now():
    """The names registered in this process (the pack's names a miss
    offers are those not registered when the message is made)."""
    from stride_weave.dtypes import DType

    return {d.name for d in DType.registered()}


def _listing(names):
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def miss_message(name, suggested=(), from_pack=()):
    """The message of a miss on ``name`` suggesting ``suggested``, of which
    ``from_pack`` only the formats pack registers."""
    text = f"no descriptor is registered under the name {name!r}"
    names = [repr(s) for s in suggested]
    if names:
        text += "; did you mean " + (
            names[0] if len(names) == 1
            else ", ".join(names[:-1]) + " or " + names[-1]) + "?"
    if from_pack:
        text += f" (import {PACK_MODULE} registers {_listing([repr(n) for n in from_pack])})"
    return text


def expected_message(name, registered):
    """The message of a miss on ``name`` with ``registered`` registered."""
    now = registered_now()
    if name in PACK_NAMES and name not in now:
        return (f"no descriptor is registered under the name {name!r}; "
                f"import {PACK_MODULE} registers it")
    suggested = close_names(name, registered)
    return miss_message(name, suggested,
                        [n for n in suggested if n in PACK_NAMES and n not in now])
