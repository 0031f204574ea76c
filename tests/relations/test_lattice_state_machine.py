"""A state machine registers dtypes and declares edges, legal and not.

Against a model written here from the definitions alone (the order is the
transitive closure of the edges; a pair's join is the least of its common
upper bounds; a declaration is legal when it loses no value (or is lossy in
a lattice of one's own), takes dtypes the lattice admits, closes no cycle,
leaves every pair that has common upper bounds with a least one, and
changes no defined result).  After every step: the lattice accepted exactly
the legal declarations, its joins are the model's for every pair of the
dtypes in play, no result defined earlier changed, and a refused step left
the lattice as it was (the default lattice: the very same object).

The default lattice is the process's, so that machine runs in a fresh
interpreter; the machine over a lattice of one's own runs here.
"""
import itertools

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    rule,
    run_state_machine_as_test,
)

from support import unique_name
from support.relations import extension_with_record
from stride_weave.dtypes import (
    DType,
    PromotionError,
    can_cast,
    declare_promotions,
    default_lattice,
)
from stride_weave.numerics import NumericInfo, numeric_info


def admitted_by_default(d):
    """The default lattice's admission rule, from the record."""
    if not d.is_simple():
        return False
    try:
        r = numeric_info(d)
    except LookupError:
        return False
    if r.kind in ("float", "complex"):
        width = r.bits // 2 if r.kind == "complex" else r.bits
        return width >= 16 and r.nan_encoding != "negative_zero"
    return r.bits >= 8


class Model:
    """The order and joins of a set of edges, from the definitions."""

    def __init__(self, edges=()):
        self.edges = set(edges)

    def above(self, dtypes):
        """{d: every dtype at or above d}; `dtypes` holds every endpoint."""
        up = {d: {d} for d in dtypes}
        changed = True
        while changed:
            changed = False
            for lower, upper in self.edges:
                for d in dtypes:
                    if lower in up[d] and not up[upper] <= up[d]:
                        up[d] |= up[upper]
                        changed = True
        return up

    def joins(self, dtypes):
        """{(a, b): join, None (no common upper bound) or "ambiguous"}."""
        nodes = set(dtypes) | {d for e in self.edges for d in e}
        up = self.above(nodes)
        table = {}
        for a, b in itertools.product(dtypes, repeat=2):
            common = up[a] & up[b]
            least = [c for c in common if common <= up[c]]
            table[a, b] = least[0] if least else ("ambiguous" if common else None)
        return table

    def cyclic(self, dtypes):
        up = self.above(set(dtypes) | {d for e in self.edges for d in e})
        return any(lower in up[upper] for lower, upper in self.edges)


@st.composite
def records(draw):
    if draw(st.booleans()):
        e = draw(st.integers(5, 8))
        m = draw(st.integers(2, 12))
        nan = draw(st.sampled_from(["ieee", "ieee", "all_ones", "negative_zero"]))
        return NumericInfo.floating(unique_name("sm"), exponent_bits=e, mantissa_bits=m,
                                    bias=2 ** (e - 1) - 1, nan_encoding=nan)
    return NumericInfo.integer(draw(st.sampled_from([6, 8, 12, 16, 24, 32, 40])),
                               signed=draw(st.booleans()))


class PromotionMachine(RuleBasedStateMachine):
    """Declares into the default lattice (own=False) or into a lattice of
    one's own that it keeps (own=True)."""

    own = True
    dtypes = Bundle("dtypes")

    def __init__(self):
        super().__init__()
        self.lattice = default_lattice().extend() if self.own else default_lattice()
        self.model = Model(self.lattice.edges)
        import stride_weave.formats as F

        # The built-ins and the pack (other tests' extensions stay out), and
        # dtypes the default lattice does not admit.
        self.pool = [d for d in self.lattice.dtypes
                     if getattr(DType, d.name, None) is d or d in F.FORMATS]
        self.pool += [DType.E4M3, DType.E8M0, F.Int4, F.E4M3FNUZ, DType.MXFP4]
        self.defined = {}           # (a, b) -> the result it had

    def current(self):
        return self.lattice if self.own else default_lattice()

    def c_joins(self):
        lattice = self.current()
        table = {}
        for a, b in itertools.product(self.pool, repeat=2):
            try:
                table[a, b] = lattice.promote_types(a, b)
            except PromotionError:
                table[a, b] = None
        return table

    @rule(target=dtypes, record=records())
    def register(self, record):
        d = extension_with_record(unique_name("SM"), record)
        before = self.c_joins()
        self.pool.append(d)
        after = self.c_joins()
        assert all(after[pair] is result for pair, result in before.items())
        return d

    @rule(target=dtypes, index=st.integers(0, 10 ** 6))
    def pick_existing(self, index):
        return self.pool[index % len(self.pool)]

    def legal(self, edges, lossy):
        for lower, upper in edges:
            if lower is upper:
                return False
            if not (lossy and self.own) and not can_cast(lower, upper):
                return False
            if not self.own and not (admitted_by_default(lower)
                                     and admitted_by_default(upper)):
                return False
        new = Model(self.model.edges | set(edges))
        if new.cyclic(self.pool):
            return False
        old_table = self.model.joins(self.pool)
        new_table = new.joins(self.pool)
        if "ambiguous" in new_table.values():
            return False
        return all(new_table[pair] is j for pair, j in old_table.items()
                   if j is not None)

    @rule(edges=st.lists(st.tuples(dtypes, dtypes), min_size=1, max_size=3),
          lossy=st.booleans())
    def declare(self, edges, lossy):
        expected = self.legal(edges, lossy)
        before = self.current()
        try:
            if self.own:
                self.lattice = self.lattice.extend(edges, lossy=lossy)
            else:
                declare_promotions(edges)
        except (ValueError, TypeError):
            assert not expected, f"refused a legal declaration of {edges}"
            assert self.current() is before       # nothing of it is kept
            return
        assert expected, f"took an illegal declaration of {edges}"
        self.model.edges |= set(edges)

    @invariant()
    def joins_are_the_models_and_never_change(self):
        if len(self.pool) > 40:
            return
        table = self.c_joins()
        model = self.model.joins(self.pool)
        assert table == model
        for pair, result in self.defined.items():
            assert table[pair] is result, (pair, result, table[pair])
        self.defined.update({p: r for p, r in table.items() if r is not None})


SETTINGS = settings(max_examples=30, stateful_step_count=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
def test_a_lattice_of_ones_own():
    run_state_machine_as_test(PromotionMachine, settings=SETTINGS)


class DefaultLatticeMachine(PromotionMachine):
    own = False


@pytest.mark.slow
@pytest.mark.fresh_interpreter
def test_the_default_lattice():
    import stride_weave.formats  # noqa: F401  (its dtypes join the pool)

    assert DType.registered()
    run_state_machine_as_test(DefaultLatticeMachine, settings=SETTINGS)
