"""Parameter loading: profiles merge, and every malformed field is a ParamsError naming it."""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from pqlab import params
from pqlab.errors import ParamsError
from pqlab.params.loader import _yaml_lists_to_tuples
from pqlab.paths import find_params, project_root

DS = params.DesignSpaceParams()  # the design space's defaults (params.yaml sets none of them)
ROLES = {"classical": "B", "drop_in": "D3", "smallest": "C5", "key_exchange": "C1"}  # the default roles
REPO_PARAMS = Path(__file__).resolve().parent.parent / "params" / "params.yaml"


@functools.cache
def _parsed() -> dict:
    return yaml.safe_load(REPO_PARAMS.read_text())


def _raw() -> dict:
    """A fresh copy of the repository's params document (parsed once: the hypothesis tests edit hundreds)."""
    return copy.deepcopy(_parsed())


def test_repo_params_load_for_every_profile():
    raw = _raw()
    for name in raw["profiles"]:
        loaded = params.resolve(raw, name)
        assert loaded.profile == name
        assert loaded.costs.trials == raw["costs"]["profiles"][name]["trials"]
        assert loaded.costs.kem == "ML-KEM-768"  # the default, written once in pqlab.params


def test_params_file_restates_no_default():
    """Defaults are written once, in pqlab.params: the file sets only what differs from them."""
    raw = _raw()
    for section, body in raw.items():
        if section in ("profile", "seed", "profiles", "execution_timeout_s"):
            continue
        model = params.StudyParams.model_fields[section].annotation
        for key, value in body.items():
            if key == "profiles":
                continue
            default = model.model_fields[key].get_default(call_default_factory=True)
            assert _yaml_lists_to_tuples(value) != default, f"{section}.{key} restates its default"


def test_shared_blocks_reach_the_simulator():
    raw = _raw()
    raw["seed"] = 7
    raw["framing"]["iphc_bytes"] = 11
    loaded = params.resolve(raw, "quick")
    assert loaded.transport.seed == 7 and loaded.transport.framing == loaded.framing
    assert loaded.transport.framing.iphc_bytes == 11


@pytest.mark.parametrize("field", ["framing", "seed"])
def test_injected_fields_cannot_be_set_inside_the_transport_section(field):
    raw = _raw()
    raw["transport"][field] = raw[field]
    with pytest.raises(ParamsError, match=rf"transport\.{field}: set at the top level"):
        params.resolve(raw, "quick")


def test_an_old_thread_section_is_refused_in_one_line_naming_its_new_name(tmp_path):
    """The section was `thread:` before it took its stage's name: an old params.yaml says what to rename."""
    raw = _raw()
    raw["thread"] = raw.pop("transport")
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ParamsError) as caught:
        params.load(path)
    message = str(caught.value)
    assert message.count("\n") == 0
    assert message == f"{path}: thread: unknown section; it is now `transport:` (rename `thread:`)"


def test_an_error_in_a_profile_that_is_not_selected_still_stops_the_run():
    raw = _raw()
    raw["costs"]["profiles"]["paper"]["reps"] = -1000
    with pytest.raises(ParamsError, match=r"costs\.profiles\.paper\.reps"):
        params.resolve(raw, "quick")


@pytest.mark.parametrize("name", ["quick\nmore", "", "tab\there"])
def test_a_profile_name_that_cannot_head_an_error_line_is_refused_at_its_index(name):
    raw = _raw()
    raw["profiles"] = ["smoke", name, "paper"]
    with pytest.raises(ParamsError) as caught:
        params.resolve(raw, "smoke")
    assert str(caught.value).count("\n") == 0 and "profiles[1]" in str(caught.value)
    assert "a name is" in str(caught.value)


def test_an_error_in_the_common_section_is_named_there():
    raw = _raw()
    raw["costs"]["sign_message_octets"] = 0
    with pytest.raises(ParamsError) as caught:
        params.resolve(raw, "quick")
    assert "costs.sign_message_octets" in str(caught.value) and "profiles" not in str(caught.value)


def test_duplicate_yaml_keys_are_rejected(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(REPO_PARAMS.read_text() + "\nseed: 5\n")
    with pytest.raises(ParamsError, match="duplicate key 'seed'"):
        params.load(path)


def test_find_params_walks_up_from_any_folder(tmp_path):
    (tmp_path / "params").mkdir()
    (tmp_path / "params" / "params.yaml").write_text(REPO_PARAMS.read_text())
    deep = tmp_path / "notebooks" / "sub"
    deep.mkdir(parents=True)
    assert find_params(deep) == (tmp_path / "params" / "params.yaml").resolve()
    with pytest.raises(ParamsError, match=r"no params/params\.yaml"):
        find_params(Path("/"))


def test_default_profile_comes_from_file():
    assert params.load(REPO_PARAMS).profile == _raw()["profile"]


def test_paper_profile_has_the_papers_sample_sizes():
    # AMORT-V1 §V-C: five trials, 1 000 repetitions, 200 for SLH-DSA and the storage probe.
    paper = params.resolve(_raw(), "paper").costs
    assert (paper.trials, paper.reps, paper.reps_slow, paper.bootstrap_resamples) == (5, 1000, 200, 10000)


@pytest.mark.parametrize(
    ("mutate", "field_fragment"),
    [
        (lambda r: r["costs"].__setitem__("repetitions", 3), "costs.repetitions"),
        (lambda r: r["costs"]["profiles"]["quick"].__setitem__("reps", "10"), "costs.profiles.quick.reps"),
        (lambda r: r["costs"]["profiles"]["quick"].__setitem__("reps", 0), "costs.profiles.quick.reps"),
        (lambda r: r["costs"]["profiles"]["quick"].__setitem__("reps", -5), "costs.profiles.quick.reps"),
        (lambda r: r["costs"]["profiles"]["quick"].__setitem__("trials", 2.5), "costs.profiles.quick.trials"),
        (lambda r: r["costs"].__setitem__("signers", "ML-DSA-65"), "costs.signers"),
        (lambda r: r["costs"].__setitem__("backend", "openssl3"), "costs.backend"),
        (lambda r: r["costs"].__setitem__("confidence", 1.5), "costs.confidence"),
        (lambda r: r.__setitem__("seed", -1), "seed"),
        (lambda r: r.__setitem__("profile", "fast"), "profile"),
        (lambda r: r["costs"]["profiles"].__setitem__("fast", {}), "costs.profiles"),
        (lambda r: r.__setitem__("no_such_study", {}), "no_such_study"),
        # names checked against the registries that use them, ranges and repeated members (once via `pqlab params`
        # in tests/test_entry_points.py: the same validation, printed as one line)
        (lambda r: r["design_space"].__setitem__("noc", [*DS.noc, "ML-DSA-99"]), "design_space.noc[5]"),
        (lambda r: r["design_space"].__setitem__("modes", ["sig/none", "sig/always"]), "design_space.modes[1]"),
        (lambda r: r["design_space"].__setitem__("static_kem", "P-256"), "design_space.static_kem"),
        (lambda r: r["case_sizes"]["profiles"]["quick"]["real_material"].append("Z9"),
         "case_sizes.profiles.quick.real_material[12]"),
        (lambda r: r["transport"].__setitem__("hops", [1, 2, 2]), "transport.hops[2]"),
        (lambda r: r["transport"].__setitem__("hops", [0, 1]), "transport.hops[0]"),
        (lambda r: r["costs"].__setitem__("signers", ["ML-DSA-65", "ML-DSA-65"]), "costs.signers[1]"),
        (lambda r: r["transport"].__setitem__("max_sim_time_s", float("inf")), "transport.max_sim_time_s"),
        (lambda r: r.__setitem__("execution_timeout_s", 0), "execution_timeout_s"),
    ],
)
def test_bad_values_name_their_field(mutate, field_fragment):
    raw = _raw()
    raw["profile"] = "quick"
    mutate(raw)
    with pytest.raises(ParamsError) as caught:
        params.resolve(raw)
    assert field_fragment in str(caught.value)
    assert "\n" not in str(caught.value)


def test_missing_file_is_a_params_error(tmp_path):
    with pytest.raises(ParamsError, match="cannot read"):
        params.load(tmp_path / "absent.yaml")


def test_invalid_yaml_is_a_params_error(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("costs: [unclosed\n")
    with pytest.raises(ParamsError, match="not valid YAML"):
        params.load(path)


def test_project_root_is_parent_of_params_folder(tmp_path):
    assert project_root(tmp_path / "params" / "params.yaml") == tmp_path.resolve()


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**7), st.floats(allow_nan=True),
                     st.text(max_size=8), st.lists(st.integers(), max_size=3))


@given(key=st.sampled_from(["trials", "reps", "reps_slow", "warmup", "bootstrap_resamples", "kem", "signers",
                            "backend", "confidence", "sign_message_octets", "unknown_key"]),
       value=_scalars)
def test_any_value_either_validates_or_raises_params_error(key, value):
    raw = _raw()
    raw["costs"]["profiles"]["quick"][key] = value
    try:
        loaded = params.resolve(raw, "quick")
    except ParamsError as exc:
        assert key in str(exc)
    else:  # strict models: what validates is kept exactly as written (a YAML list becomes a tuple)
        assert key != "unknown_key"
        kept = getattr(loaded.costs, key)
        assert kept == (tuple(value) if isinstance(value, list) else value)


def test_the_names_checked_at_load_are_the_domain_registries():
    """The loader checks names against the domain modules' own registries (one definition each), and what is
    still written twice by nature agrees: the backends' maps with the crypto names, Table I's rows with its names."""
    from pqlab.case import algorithms, configurations, design_tables
    from pqlab.case import config as case_config
    from pqlab.crypto import liboqs_backend, names, openssl_backend, pqcrypto_backend
    from pqlab.transport import config as thread_config
    from pqlab.transport import model

    backends = (liboqs_backend, openssl_backend, pqcrypto_backend)
    assert set(names.KEMS) == {k for b in backends for k in b._KEMS}
    assert set(names.SIGNATURES) == {s for b in backends for s in b._SIGNERS}
    assert design_tables.AUTH_MODES is case_config.AUTH_MODES and design_tables.CACHE_MODES is case_config.CACHE_MODES
    assert model.TRANSPORTS is thread_config.TRANSPORTS
    assert case_config.TABLE1_NAMES == tuple(c.name for c in configurations.TABLE1)
    raw = _raw()
    raw["design_space"]["static_kem"] = "ML-KEM-7680"
    with pytest.raises(ParamsError) as caught:
        params.resolve(raw, "quick")
    assert f"design_space.static_kem: 'ML-KEM-7680' is not a CASE KEM; known: {', '.join(algorithms.KEMS)}" \
        in str(caught.value)


@pytest.mark.parametrize(("mutate", "fragment"), [
    (lambda r: r["costs"].__setitem__("kem", "ML-KEM-777"), "costs.kem: 'ML-KEM-777' is not a KEM"),
    (lambda r: r["costs"].__setitem__("signers", ["ML-DSA-65", "SLH-DSA-SHA2-128f", "ML-DSA-65"]),
     "costs.signers[2]: 'ML-DSA-65' is listed twice (first at [0])"),
    (lambda r: r["case_sizes"].__setitem__("configurations", ["B", "X1"]), "case_sizes.configurations[1]"),
    (lambda r: r["case_sizes"]["profiles"]["smoke"].__setitem__("real_material", ["B", "D33"]),
     "case_sizes.profiles.smoke.real_material[1]: 'D33' is not a Table I configuration"),
    (lambda r: r["case_sizes"].__setitem__("resumption_key_exchanges", ["P-256+P-256"]),
     "case_sizes.resumption_key_exchanges[0]"),
    (lambda r: r["design_space"].__setitem__("key_exchanges", [*DS.key_exchanges, "X25519"]),
     "design_space.key_exchanges[3]"),
    (lambda r: r["design_space"].__setitem__("icac", [*DS.icac, None]), "design_space.icac[6]: None is listed twice"),
    (lambda r: r["design_space"].__setitem__("rcac", ["RSA-2048", *DS.rcac[1:]]), "design_space.rcac[0]"),
    (lambda r: r["design_space"].__setitem__("modes", ["kem/all", *DS.modes[1:]]), "design_space.modes[0]"),
    (lambda r: r["design_space"].__setitem__("static_kem", "ML-KEM-7680"), "design_space.static_kem"),
    (lambda r: r["transport"].__setitem__("configurations", ["B", "B"]), "transport.configurations[1]"),
    (lambda r: r["transport"].__setitem__("hops", [1, 17]), "transport.hops[1]"),
    (lambda r: r["transport"].__setitem__("ratio_hops", [0]), "transport.ratio_hops[0]"),
    (lambda r: r["transport"].__setitem__("figure_configs", {**ROLES, "drop_in": "Z3"}),
     "transport.figure_configs.drop_in"),
    (lambda r: r["transport"].__setitem__("figure_configs", {**ROLES, "fastest": "B"}),
     "transport.figure_configs.fastest"),
    (lambda r: r["transport"].__setitem__("scenarios", {"x": {"p_good": 1.5}}), "transport.scenarios.x.p_good"),
    (lambda r: r["transport"].__setitem__("scenarios", {"x": {"p_good": float("nan")}}),
     "transport.scenarios.x.p_good"),
    (lambda r: r["transport"].__setitem__("mrp_jitter", float("-inf")), "transport.mrp_jitter"),
    (lambda r: r["transport"].__setitem__("max_sim_time_s", 0.0), "transport.max_sim_time_s"),
    (lambda r: r["transport"]["profiles"]["paper"].__setitem__("hops", [2, 2]), "transport.profiles.paper.hops[1]"),
    (lambda r: r.__setitem__("execution_timeout_s", 5), "execution_timeout_s"),
])
def test_names_ranges_and_duplicates_are_checked_at_load_with_the_exact_path(mutate, fragment):
    raw = _raw()
    mutate(raw)
    with pytest.raises(ParamsError) as caught:
        params.resolve(raw, "quick")
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_the_execution_timeout_is_a_validated_top_level_value():
    assert params.resolve(_raw(), "smoke").execution_timeout_s == _raw()["execution_timeout_s"] >= 600
