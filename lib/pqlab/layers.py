"""pqlab's layers, lowest first, and the import rule: a module imports only from its own layer or a lower rank.

Experiments and analysis share a rank and never import each other: an analysis never measures, and what a measuring
stage runs never depends on how its samples are analysed; a study (above both) joins them.

tests/test_import_graph.py checks every import of lib/pqlab against this table (lazy imports and
``importlib.import_module`` with a literal or f-string name included), and docs/architecture.md is generated from it.
A module belongs to the layer of the longest prefix below that names it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Layer:
    """One layer: its rank (lowest 0), name, what belongs there, and the module prefixes it holds."""

    rank: int
    name: str
    holds: str
    prefixes: tuple[str, ...]


LAYERS: tuple[Layer, ...] = (
    Layer(0, "base", "errors, atomic I/O, paths, typed-config base, statistics, framing constants, provenance, "
          "progress bars: what every layer uses",
          ("pqlab", "pqlab.errors", "pqlab.bounded", "pqlab.config", "pqlab.validation", "pqlab.framing", "pqlab.io",
           "pqlab.paths", "pqlab.stats", "pqlab.provenance", "pqlab.machine", "pqlab.progress", "pqlab.cache",
           "pqlab.child_processes", "pqlab.native_override", "pqlab.generated", "pqlab.notebook", "pqlab.layers",
           "pqlab.raw_labels", "pqlab.seeds")),
    Layer(1, "models", "the domain models: the AMORT-V1 protocol and its fast path, Matter CASE sizes and codecs, the "
          "Thread transport simulator, the crypto backends",
          ("pqlab.amort", "pqlab.case", "pqlab.transport", "pqlab.crypto")),
    Layer(2, "params", "the study parameters: params.yaml's strict models, composed from the models' configs",
          ("pqlab.params",)),
    Layer(3, "pipeline", "the stage registry, raw-sample provenance and checked reading, output sets, metrics models, "
          "dvc.yaml and this page's generators",
          ("pqlab.pipeline",)),
    Layer(4, "experiments", "what a measuring stage runs: timing harnesses, trials, attack cases, conformance vectors "
          "and fuzzing, the ns-3 runs",
          ("pqlab.experiments", "pqlab.attacks", "pqlab.amort.conformance", "pqlab.crosscheck")),
    Layer(4, "analysis", "statistics, tables and model fits computed from raw samples or models; never measures, "
          "never writes", ("pqlab.analysis", "pqlab.crosscheck.analysis")),
    Layer(5, "what-if", "the what-if tools: a deployment's answer from the models, the stages' derived files and, "
          "where a cost is missing, a short probe of the cost experiment", ("pqlab.whatif",)),
    Layer(6, "figures", "one module per stage, one function per figure", ("pqlab.figures",)),
    Layer(7, "studies", "one module per stage: load, compute, write (the only code that writes outputs); the report",
          ("pqlab.studies", "pqlab.report")),
    Layer(8, "interfaces", "the pqlab command and the notebooks' entry points",
          ("pqlab.cli", "pqlab.cli_whatif", "pqlab.cli_studies")),
)
ROOT = "pqlab"  # the package itself holds only its __init__: every other module needs a prefix of its own
RANK: dict[str, int] = {layer.name: layer.rank for layer in LAYERS}


def layer_of(module: str) -> str:
    """The layer ``module`` belongs to: the layer of the longest prefix that names it or one of its parents."""
    best, found = -1, None
    for layer in LAYERS:
        for prefix in layer.prefixes:
            holds = module == prefix or (prefix != ROOT and module.startswith(prefix + "."))
            if holds and len(prefix) > best:
                best, found = len(prefix), layer.name
    if found is None:
        raise KeyError(f"{module} is in no layer of pqlab.layers.LAYERS")
    return found


def against_the_order(importer: str, imported: str) -> bool:
    """True when ``importer`` reaches up or sideways: ``imported`` sits in another layer of the same or a higher
    rank."""
    mine, theirs = layer_of(importer), layer_of(imported)
    return mine != theirs and RANK[theirs] >= RANK[mine]
