"""No untyped exception from any public decoder, verifier or encoder: 10,000 generated inputs each, wrong types
and deep nesting included. Allowed: the protocol's own error (TLVError, AmortError), PqlabError subclasses for
inputs, and ValueError / TypeError for caller misuse (pqlab/errors.py). The TLV edge cases of issue 16 are here too.
"""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from pqlab import io, params
from pqlab.amort import merkle
from pqlab.amort.errors import AmortError, Code
from pqlab.case import tlv
from pqlab.case.tlv import ContextTag, Element, ElementType, TLVError, TLVValueError
from pqlab.errors import InputError, ParamsError
from tests.conftest import FUZZ, REPO

# --- TLV edges ---------------------------------------------------------------------------------------------------


def _nested(depth: int, kind: int = 0x16) -> bytes:
    return bytes([kind]) * depth + b"\x18" * depth


@pytest.mark.parametrize("depth", [300, 5_000, pytest.param(100_000, marks=pytest.mark.slow)])  # 100,000: a stress run
def test_deeply_nested_elements_compare_hash_and_print(depth):
    """From a 600-byte input (depth 300) upwards: no RecursionError in ==, hash or repr."""
    a, b = tlv.decode(_nested(depth)), tlv.decode(_nested(depth))
    assert a == b and not a != b and hash(a) == hash(b)
    assert a != tlv.decode(_nested(depth - 1)) and a != tlv.decode(_nested(depth, 0x17))
    text = repr(a)
    assert text.count("Element(") == depth and text.startswith("Element(type=<ElementType.ARRAY")
    assert len({a, b}) == 1
    assert tlv.encode(a) == _nested(depth)


def test_repr_and_equality_keep_their_shallow_meaning():
    one = tlv.structure(None, tlv.uint(5, 1), tlv.utf8("x", 2))
    assert repr(tlv.uint(5, 1)) == ("Element(type=<ElementType.UNSIGNED: 'unsigned'>, value=5, "
                                    "tag=ContextTag(number=1), width=None)")
    assert repr(tlv.array(None, tlv.null())).endswith("value=(Element(type=<ElementType.NULL: 'null'>, value=None, "
                                                      "tag=ANONYMOUS, width=None),), tag=ANONYMOUS, width=None)")
    assert one == tlv.decode(tlv.encode(one))  # widths read back do not matter
    assert tlv.uint(5, width=1) == tlv.uint(5, width=8) and hash(tlv.uint(5, width=1)) == hash(tlv.uint(5, width=8))
    assert tlv.uint(1) != tlv.boolean(True) and tlv.uint(1) != 1


@pytest.mark.parametrize("element", [
    tlv.boolean(2), tlv.boolean(0), tlv.octets(5), tlv.float32("1.5"), tlv.float64(None), tlv.uint(1.5),
    tlv.sint("3"), tlv.utf8(b"bytes"), tlv.uint(1, ContextTag("x")), tlv.uint(1, ContextTag(1.5)),
    tlv.structure(None, tlv.uint(1, tlv.CommonProfileTag("x"))), tlv.uint(1, tlv.FullyQualifiedTag(1, None, 2)),
    tlv.uint(1, tlv.ImplicitProfileTag(2, width="4")), Element(ElementType.UNSIGNED, 1, width=1.0),
    Element(ElementType.FLOAT32, 1.0, raw=b"\x00"), Element(ElementType.FLOAT32, 1.0, raw="abcd"),
    Element(ElementType.NULL, 0), Element("struct", ()), Element(ElementType.STRUCT, "members"),
    Element(ElementType.ARRAY, (1, 2)), Element(ElementType.UNSIGNED, 1, tag=[1]),
    tlv.structure(None, tlv.uint(1, [1])), tlv.uint(1 << 64), tlv.sint(-(1 << 63) - 1), tlv.float32(1e300),
    tlv.uint(1, ContextTag(-1)), tlv.utf8("\ud800"),
])
def test_encode_rejects_wrong_types_and_out_of_range_values_with_tlverror(element):
    with pytest.raises(TLVValueError) as caught:
        tlv.encode(element)
    assert "\n" not in str(caught.value)


def test_a_self_referential_list_cannot_loop():
    members: list = []
    element = Element(ElementType.LIST, members)
    members.append(element)  # the element froze its members when it was built: no cycle
    assert element.value == () and tlv.encode(element) == b"\x17\x18"
    # forced past the frozen dataclass, a cycle is refused rather than followed forever
    inner = tlv.tlv_list(None)
    outer = tlv.tlv_list(None, inner)
    object.__setattr__(inner, "value", (outer,))
    with pytest.raises(TLVValueError, match="contains itself"):
        tlv.encode(outer)
    with pytest.raises(ValueError):
        hash(outer)
    assert "Element(...)" in repr(outer)
    assert outer == outer and (outer == tlv.tlv_list(None, tlv.tlv_list(None))) is False


# --- generated inputs, 10,000 each ---------------------------------------------------------------------------------

_junk = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=4),
                  st.binary(max_size=8), st.lists(st.integers(), max_size=2), st.just(object()))
_tags = st.one_of(st.just(tlv.ANONYMOUS), st.integers(-2, 300).map(ContextTag), _junk.map(ContextTag),
                  st.builds(tlv.CommonProfileTag, st.integers(-1, 2**33), st.sampled_from([None, 2, 4, 3, "2"])),
                  st.builds(tlv.ImplicitProfileTag, _junk), st.builds(tlv.FullyQualifiedTag, _junk, _junk, _junk),
                  _junk)


def _wild_elements():
    leaf = st.builds(Element, st.one_of(st.sampled_from(ElementType), _junk), _junk, _tags,
                     st.one_of(st.none(), st.sampled_from([1, 2, 4, 8, 3, 0, -1]), _junk), st.one_of(st.none(), _junk))
    good = st.one_of(leaf, st.builds(lambda e, t: Element(e.type, e.value, t), leaf, _tags))

    def extend(children):
        return st.builds(Element, st.sampled_from(tlv.CONTAINERS), st.lists(st.one_of(children, _junk), max_size=4)
                         .map(tuple), _tags)
    return st.recursive(good, extend, max_leaves=12)


@FUZZ
@given(_wild_elements())
def test_encode_equality_hash_and_repr_of_anything_never_crash(element):
    """Each generated element goes through both checks (one generation serves both: most of the time is
    hypothesis building the element): ``encode`` returns bytes that decode and re-encode the same, or raises
    TLVError; ``==``, ``repr`` and ``hash`` never raise anything but TypeError for an unhashable value inside."""
    assert element == element
    assert isinstance(repr(element), str)
    try:
        hash(element)
    except TypeError:  # an unhashable value (a list) inside: caller misuse, typed
        pass
    try:
        encoded = tlv.encode(element)
    except TLVError:
        return
    assert tlv.encode(tlv.decode(encoded)) == encoded


_deep = st.builds(lambda depth, kind, tail, cut: (bytes([kind]) * depth + tail + b"\x18" * depth)[:cut],
                  st.integers(0, 3000), st.sampled_from([0x15, 0x16, 0x17]), st.binary(max_size=24),
                  st.integers(0, 7000))


@FUZZ
@given(st.one_of(_deep, st.binary(max_size=64)))
def test_decode_of_deep_or_arbitrary_bytes_gives_an_element_or_tlverror(data):
    try:
        element = tlv.decode(data)
    except TLVError as exc:
        assert exc.offset is not None
        return
    assert element == tlv.decode(data) and hash(element) == hash(tlv.decode(data))
    assert repr(element) and tlv.encode(element) == data


_maybe_hash = st.one_of(st.binary(min_size=32, max_size=32), st.binary(max_size=40), _junk)


def _misuse(*checks: tuple[str, str, object]) -> tuple[type[Exception], str] | None:
    """The caller-misuse error the verifier must raise first, checking (kind, name, value) in its order: bytes-like
    values, sizes (a non-negative int, not a bool) and an iterable proof; None when every argument is well formed."""
    for kind, name, value in checks:
        if kind == "bytes" and not isinstance(value, (bytes, bytearray, memoryview)):
            return TypeError, f"{name} must be bytes"
        if kind == "size" and (isinstance(value, bool) or not isinstance(value, int)):
            return TypeError, f"{name} must be an int"
        if kind == "size" and value < 0:
            return ValueError, f"{name} must be >= 0"
        if kind == "iterable":
            try:
                iter(value)
            except TypeError:
                return TypeError, "not iterable"
    return None


def _raises_exactly(call, expected: tuple[type[Exception], str] | None) -> None:
    """Misuse: exactly the expected built-in error naming the argument. Well-formed input: None or PROOF_FAIL."""
    try:
        call()
    except AmortError as exc:
        assert expected is None, (expected, exc)
        assert exc.reason is Code.PROOF_FAIL and exc.field
    except (TypeError, ValueError) as exc:
        assert expected is not None and type(exc) is expected[0] and expected[1] in str(exc), (expected, exc)
    else:
        assert expected is None


@FUZZ
@given(leaf=st.one_of(st.binary(max_size=16), _junk), index=st.one_of(st.integers(-3, 40), _junk),
       size=st.one_of(st.integers(-3, 40), _junk), proof=st.one_of(st.lists(_maybe_hash, max_size=8), _junk),
       head=_maybe_hash)
def test_verify_inclusion_is_typed(leaf, index, size, proof, head):
    expected = _misuse(("bytes", "root", head), ("bytes", "leaf_data", leaf), ("size", "index", index),
                       ("size", "tree_size", size), ("iterable", "proof", proof))
    _raises_exactly(lambda: merkle.verify_inclusion(leaf, index, size, proof, head), expected)


@FUZZ
@given(old=st.one_of(st.integers(-3, 40), _junk), new=st.one_of(st.integers(-3, 40), _junk),
       old_root=_maybe_hash, new_root=_maybe_hash, proof=st.one_of(st.lists(_maybe_hash, max_size=8), _junk))
def test_verify_consistency_is_typed(old, new, old_root, new_root, proof):
    expected = _misuse(("bytes", "old_root", old_root), ("bytes", "new_root", new_root), ("size", "old_size", old),
                       ("size", "new_size", new), ("iterable", "proof", proof))
    _raises_exactly(lambda: merkle.verify_consistency(old, new, old_root, new_root, proof), expected)


_REPO_RAW = yaml.safe_load((REPO / "params" / "params.yaml").read_text())
_paths = [("costs", "kem"), ("costs", "signers"), ("costs", "profiles", "smoke", "reps"), ("design_space", "noc"),
          ("design_space", "modes"), ("design_space", "icac"), ("case_sizes", "profiles", "quick", "real_material"),
          ("transport", "hops"), ("transport", "scenarios"), ("transport", "figure_configs"),
          ("transport", "max_sim_time_s"),
          ("transport", "profiles", "paper", "runs"), ("framing", "iphc_bytes"), ("seed",), ("execution_timeout_s",),
          ("profile",), ("profiles",), ("inputs",), ("attack_matrix", "profiles")]
_plain = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=4))
_names = st.sampled_from(["ML-DSA-44", "B", "sig/none", "none", "P-256+ML-KEM-768"])
_values = st.recursive(st.one_of(_plain, _names),
                       lambda c: st.one_of(st.lists(c, max_size=4),
                                           st.dictionaries(st.text(max_size=6), c, max_size=3)),
                       max_leaves=8)


def _with(document: dict, path: tuple[str, ...], value: object) -> dict:
    """``document`` with ``value`` at ``path``: the dictionaries on the path are copied, the rest is shared (loading
    never changes its input: test_loading_leaves_its_input_unchanged)."""
    head, *rest = path
    return {**document, head: _with(document[head], tuple(rest), value) if rest else value}


@pytest.mark.parametrize("path", _paths, ids=".".join)
def test_loading_leaves_its_input_unchanged(path):
    for value in (None, -1, ["ML-DSA-44", {"x": 1.5}], {"smoke": {"reps": 2}}):
        raw = _with(_REPO_RAW, path, value)
        before = copy.deepcopy(raw)
        try:
            params.resolve(raw, "quick")
        except ParamsError:
            pass
        assert raw == before
    assert _REPO_RAW == yaml.safe_load((REPO / "params" / "params.yaml").read_text())


@FUZZ
@given(path=st.sampled_from(_paths), value=_values)
def test_params_documents_load_or_raise_one_params_error(path, value):
    raw = _with(_REPO_RAW, path, value)
    try:
        params.resolve(raw, "quick")
    except ParamsError as exc:
        assert "\n" not in str(exc)


@FUZZ
@given(data=st.one_of(st.binary(max_size=64), st.binary(max_size=32).map(lambda b: b"PAR1" + b + b"PAR1"),
                      st.integers(0, 10_000).map(lambda n: json.dumps([0] * 3).encode() * (n % 7))))
def test_file_readers_return_data_or_raise_input_error(tmp_path_factory, data):
    folder = tmp_path_factory.getbasetemp() / "readers"
    folder.mkdir(exist_ok=True)
    path = folder / "input"
    path.write_bytes(data)
    for read in (io.read_json, io.read_parquet, io.read_parquet_metadata):
        try:
            read(path)
        except InputError as exc:
            assert str(path) in str(exc) and "\n" not in str(exc)


def test_reading_a_json_nested_beyond_the_interpreter_limit_is_an_input_error(tmp_path):
    path = tmp_path / "m.json"
    path.write_text("[" * 1_000_000)
    with pytest.raises(InputError, match=r"m\.json"):
        io.read_json(path)


@FUZZ
@given(st.one_of(_values, st.dictionaries(st.one_of(st.text(max_size=4), _plain),
                                          st.fixed_dictionaries({"sizes": _values}, optional={
                                              "device_compute_ms": _values}), max_size=3)))
def test_transport_configs_documents_parse_or_raise_one_params_error(document):
    from pqlab.transport.case_inputs import parse_configs

    try:
        configs, compute = parse_configs(document, "configs.yaml")
    except ParamsError as exc:
        assert "\n" not in str(exc)
        return
    assert all(len(sizes) == 4 for sizes in configs.values()) and set(compute) == set(configs)
