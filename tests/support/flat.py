"""Nested values as flat token lists, without recursion.

A structure thousands of levels deep cannot go through ``json.loads``,
``ast.literal_eval`` or ``==`` (each recurses), so the tests compare it
token by token: `flatten` turns a value into tokens, `json_tokens` a JSON
document (checking its syntax) and `literal_tokens` the Python literal that
the command line pretty-prints, into the same tokens.

Tokens: ``("[",)`` and ``("]",)`` around a list or tuple, ``("{",)`` and
``("}",)`` around a dict, ``("key", k)`` before each value of a dict,
``("value", v)`` for anything else.
"""
import ast
import json
import re


def flatten(value):
    """The tokens of ``value`` (tuples and lists alike are arrays)."""
    tokens, stack = [], [value]
    while stack:
        item = stack.pop()
        if type(item) is _Token:
            tokens.append(item.token)
        elif isinstance(item, (list, tuple)):
            stack.append(_Token(("]",)))
            stack.extend(reversed(item))
            tokens.append(("[",))
        elif isinstance(item, dict):
            stack.append(_Token(("}",)))
            for key, member in reversed(list(item.items())):
                stack.append(member)
                stack.append(_Token(("key", key)))
            tokens.append(("{",))
        else:
            tokens.append(("value", item))
    return tokens


class _Token:
    __slots__ = ("token",)

    def __init__(self, token):
        self.token = token


_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def json_tokens(text):
    """The tokens of the JSON document ``text``; AssertionError unless it is
    exactly one valid JSON value."""
    decoder = json.JSONDecoder()
    tokens, open_containers = [], []
    i = _JSON_SPACE.match(text, 0).end()
    state = "value"
    while True:
        if state == "value":
            opening = text[i:i + 1]
            if opening in ("[", "{"):
                closing = "]" if opening == "[" else "}"
                tokens.append((opening,))
                i = _JSON_SPACE.match(text, i + 1).end()
                if text[i:i + 1] == closing:
                    tokens.append((closing,))
                    i = _JSON_SPACE.match(text, i + 1).end()
                    state = "after"
                else:
                    open_containers.append(closing)
                    state = "value" if opening == "[" else "key"
                continue
            value, i = decoder.raw_decode(text, i)
            tokens.append(("value", value))
            i = _JSON_SPACE.match(text, i).end()
            state = "after"
        elif state == "key":
            key, i = decoder.raw_decode(text, i)
            assert type(key) is str, f"a key that is not a string at {i}"
            i = _JSON_SPACE.match(text, i).end()
            assert text[i:i + 1] == ":", f"no ':' at {i}: {text[i:i + 40]!r}"
            i = _JSON_SPACE.match(text, i + 1).end()
            tokens.append(("key", key))
            state = "value"
        else:
            if not open_containers:
                assert i == len(text), f"text after the document at {i}: {text[i:i + 40]!r}"
                return tokens
            mark = text[i:i + 1]
            if mark == ",":
                i = _JSON_SPACE.match(text, i + 1).end()
                state = "value" if open_containers[-1] == "]" else "key"
            else:
                assert mark == open_containers[-1], f"{mark!r} at {i}: {text[i:i + 40]!r}"
                open_containers.pop()
                tokens.append((mark,))
                i = _JSON_SPACE.match(text, i + 1).end()


_LITERAL = re.compile(r"""(\s+)|([(\[])|([)\]])|(,)|('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
                      r"""|([^\s()\[\],'"]+)""")


def literal_tokens(text):
    """The tokens of a Python literal of nested tuples and lists of strs
    and scalars, as pprint writes it (adjacent string literals are one
    string); AssertionError on anything else."""
    tokens, pos, after_string = [], 0, False
    for match in _LITERAL.finditer(text):
        assert match.start() == pos, f"not a literal at {pos}: {text[pos:pos + 40]!r}"
        pos = match.end()
        space, opening, closing, comma, string, scalar = match.groups()
        if space:
            continue
        if string:
            value = ast.literal_eval(string)
            if after_string:
                tokens[-1] = ("value", tokens[-1][1] + value)
            else:
                tokens.append(("value", value))
            after_string = True
            continue
        after_string = False
        if opening:
            tokens.append(("[",))
        elif closing:
            tokens.append(("]",))
        elif scalar:
            tokens.append(("value", ast.literal_eval(scalar)))
    assert pos == len(text), f"not a literal at {pos}: {text[pos:pos + 40]!r}"
    return tokens
