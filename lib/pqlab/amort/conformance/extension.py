"""The extension set of differential vectors: beyond the paper's 149 — the explicit wire format, the hardened variant
and issue 27's defects that the fast path holds (timestamps, sequence limits, the link, span epochs).

Each entry is (case function, category, description, profile); cases of the paper's catalogue are reused under
another profile where that is what is being tested.
"""

from __future__ import annotations

from collections.abc import Callable

from pqlab.amort.conformance import cases
from pqlab.amort.conformance.builder import Builder
from pqlab.amort.fastpath.api import NO_EXPIRY
from pqlab.amort.profile import EXPLICIT, HARDENED, IMPLIED, PAPER, PAPER_PROFILE, Profile

Case = Callable[[Builder], None]
DEFAULT = PAPER_PROFILE
EXPLICIT_WIRE = Profile(PAPER, EXPLICIT)
HARDENED_IMPLIED = Profile(HARDENED, IMPLIED)
HARDENED_EXPLICIT = Profile(HARDENED, EXPLICIT)
EXTENSION: list[tuple[Case, str, str, Profile, str]] = []  # (fn, category, description, profile, name)


def case(category: str, description: str, profile: Profile = DEFAULT) -> Callable[[Case], Case]:
    def register(fn: Case) -> Case:
        EXTENSION.append((fn, category, description, profile, fn.__name__))
        return fn
    return register


def reuse(names: list[str], profile: Profile, suffix: str) -> None:
    """Paper-catalogue cases again under ``profile`` (named ``<case>_<suffix>``)."""
    by_name = {fn.__name__: (fn, category, description) for fn, category, description in cases.CASES}
    for name in names:
        fn, category, description = by_name[name]
        EXTENSION.append((fn, category, f"{description} [{suffix.replace('_', ' ')}]", profile, f"{name}_{suffix}"))


# --- the explicit wire format (pqlab's earlier encoding, a named variant) -------------------------------------------
reuse(["device_two_tags_tag8", "device_two_tags_tag12", "device_two_tags_tag16", "device_one_and_two_tags",
       "honest_single_device_tag16", "honest_mixed_tag_lengths", "honest_sixteen_devices", "honest_framed_buffer",
       "decode_empty", "decode_field_epoch", "decode_field_flags", "decode_tag_length", "decode_tag_truncated",
       "decode_dtag_length", "decode_dtag_truncated", "decode_trailing", "decode_before_device",
       "revocation_precedence", "check_tag_length_8_in_16_epoch", "check_tag_length_16_in_12_epoch",
       "check_mac_bit_flips", "check_disclosure_tag_not_verified", "check_mac_before_sequence", "sequence_zero",
       "epoch_change_among_others", "checkpoint_tree_shapes", "batch_all_refused"], EXPLICIT_WIRE, "explicit")

# --- the hardened variant: the evidence tag covers the disclosure tag -----------------------------------------------
reuse(["device_two_tags_tag8", "device_two_tags_tag16", "device_one_and_two_tags", "honest_single_device_tag8",
       "honest_single_device_tag12", "honest_single_device_tag16", "honest_evidence_only", "honest_mixed_tag_lengths",
       "check_mac_bit_flips", "check_disclosure_tag_not_verified", "check_mac_before_sequence",
       "epoch_change_among_others"], HARDENED_IMPLIED, "hardened")
reuse(["device_two_tags_tag12", "honest_mixed_tag_lengths", "check_disclosure_tag_not_verified"], HARDENED_EXPLICIT,
      "hardened_explicit")


@case("hardened", "every octet of a disclosure tag flipped in turn: MAC_FAIL under the hardened variant (N05)",
      HARDENED_IMPLIED)
def hardened_dtag_flips(b: Builder) -> None:
    (dev,) = cases.honest_setup(b)
    good = b.reports(dev, 2)
    b.ingest([good[0][:at] + bytes([good[0][at] ^ 0x40]) + good[0][at + 1:] for at in range(99, 115)] + good)
    b.checkpoint()


@case("hardened", "the same flips under the paper variant: accepted (the dtag is outside the evidence MAC, N05)")
def paper_dtag_flip_accepted(b: Builder) -> None:
    (dev,) = cases.honest_setup(b)
    good = b.reports(dev, 2)
    b.ingest([good[0][:-1] + bytes([good[0][-1] ^ 0x40]), good[1]])
    b.checkpoint()


# --- timestamps (N09) -----------------------------------------------------------------------------------------------
@case("timestamps", "monotonic timestamps: an equal one is accepted, an earlier one is EPOCH_STALE after the MAC "
      "and sequence checks")
def timestamps_monotonic(b: Builder) -> None:
    (dev,) = cases.honest_setup(b)
    first = b.reports(dev, 2)
    same = dev.report(b.material.octets("same"), b.clock)
    earlier = dev.report(b.material.octets("earlier"), b.clock - 1)
    b.ingest([*first, same, earlier, earlier[:40] + b"\x00" + earlier[41:]])
    b.checkpoint()


@case("timestamps", "not before the epoch opened: zero and open time - 1 are EPOCH_STALE, the open time passes")
def timestamps_not_before(b: Builder) -> None:
    b.open_controller()
    open_at = b.clock + 1
    b.register(b.device(1), not_before=open_at)
    for stamp in (0, open_at - 1):  # each a first report (seq 1) from a fresh device object with the same keys
        b.ingest([b.device(1).report(bytes(32), stamp)])
    third = b.device(1)
    b.ingest([third.report(bytes(32), open_at), *b.reports(third, 2)])
    b.checkpoint()


@case("timestamps", "freshness with the controller's clock: max_report_age old passes, one ms more is EPOCH_STALE, "
      "a future stamp passes; without a clock the batch is refused")
def timestamps_freshness(b: Builder) -> None:
    b.open_controller(max_report_age=5_000)
    devs = [b.device(i + 1) for i in range(3)]
    for dev in devs:
        b.register(dev)
    stamp = b.clock
    a, c, d = (dev.report(b.material.octets(f"fresh/{i}"), stamp) for i, dev in enumerate(devs))
    b.ingest([a], now=stamp + 5_000)  # exactly max_report_age old: accepted
    b.ingest([c], now=stamp + 5_001)  # one ms more: EPOCH_STALE
    b.ingest([d], now=stamp - 10)  # the controller's clock behind the device's: accepted
    b.ingest([c], now=None)  # no clock: the batch is refused (ClockRequired), nothing is accepted
    b.ingest([c])  # the builder's clock: accepted
    b.checkpoint()


@case("timestamps", "a new epoch starts its timestamp order afresh; the old epoch's last stamp does not carry over")
def timestamps_after_epoch_change(b: Builder) -> None:
    (dev,) = cases.honest_setup(b)
    b.ingest(b.reports(dev, 3))
    nxt = b.device(1, 2)
    b.register(nxt, not_before=b.clock - 10_000)
    b.ingest([nxt.report(bytes(32), b.clock - 5_000), *b.reports(nxt, 1)])
    b.checkpoint()


# --- sequence and epoch limits (N11) --------------------------------------------------------------------------------
@case("limits", "device path: an epoch resumed at seq 2^64 - 1 sends one more report, then EPOCH_STALE")
def device_seq_exhaustion(b: Builder) -> None:
    b.open_device(chain_length=4, next_seq=(1 << 64) - 1)
    b.report()  # beyond the chain: CHAIN_FAIL
    b.report(disclosure_tag=False)
    b.report(disclosure_tag=False)
    b.report(disclosure_tag=False)
    b.open_device(chain_length=4, next_seq=0)
    b.open_device(chain_length=4, next_seq=1 << 64)


@case("limits", "device path: epochs resumed at seq 7 and 20 of a 30-key chain (the traversal starts mid-segment)")
def device_resume_mid_chain(b: Builder) -> None:
    for start in (7, 20, 30, 31):
        b.open_device(chain_length=30, next_seq=start)
        for _ in range(4):
            b.report()
        b.chain_key(start)


@case("limits", "controller: a resumed device's reports at seq 2^64 - 2 and 2^64 - 1 are a gap after seq 0")
def controller_seq_extremes(b: Builder) -> None:
    b.open_controller()
    dev = b.device(1, next_seq=(1 << 64) - 2)
    b.register(dev)
    b.ingest(b.reports(dev, 2, disclosure_tag=False))
    b.checkpoint()


@case("limits", "open_controller and register_epoch refusals for the new arguments")
def argument_refusals(b: Builder) -> None:
    b.open_controller(variant="strict")
    b.open_controller(wire_format="tlv")
    b.open_controller(max_report_age=-1)
    b.open_controller()
    dev = b.device(1)
    b.register(dev, not_before=-1)
    b.register(dev, not_before=1 << 64)
    b.register(dev, not_before=(1 << 64) - 1)
    b.ingest(b.reports(dev, 1), now=-5)
    b.ingest(b.reports(dev, 1))


# --- checkpoint encoding: the epoch stated once, the link over the body (N08) ---------------------------------------
@case("checkpoint", "spans in several epochs: the first span's epoch is the base, the others are exceptions")
def checkpoint_epoch_exceptions(b: Builder) -> None:
    b.open_controller()
    devs = [b.device(i + 1, epoch) for i, epoch in enumerate((3, 1, 1, 7, 1, 3))]
    for dev in devs:
        b.register(dev)
    b.ingest([r for dev in devs for r in b.reports(dev, 2)])
    b.checkpoint()
    b.ingest([r for dev in devs[1:3] for r in b.reports(dev, 1)])
    b.checkpoint()


@case("checkpoint", "48 devices in random epochs, three checkpoints (many exceptions)")
def checkpoint_epoch_exceptions_many(b: Builder) -> None:
    b.open_controller()
    devs = [b.device(i + 1, b.rng.choice((1, 1, 1, 2, 5, 0xFFFFFFFF))) for i in range(48)]
    for dev in devs:
        b.register(dev, expiry=NO_EXPIRY)
    for _ in range(3):
        b.ingest([b.reports(dev, 1, disclosure_tag=False)[0] for dev in devs if b.rng.random() < 0.7])
        b.checkpoint()


@case("checkpoint", "the same batch committed by two controllers with different signatures chains the same "
      "prev_hash (the link covers the body, not the randomised signature)")
def checkpoint_link_over_body(b: Builder) -> None:
    devs = cases.honest_setup(b, 2)
    reports = [r for dev in devs for r in b.reports(dev, 3)]
    for _ in range(2):
        b.open_controller()
        for dev in devs:
            b.register(dev)
        b.ingest(reports)
        b.checkpoint(real_size=True)
        b.checkpoint()


# --- mixed streams under every profile ------------------------------------------------------------------------------
MIXED = ((EXPLICIT_WIRE, "explicit", 8), (HARDENED_IMPLIED, "hardened", 8),
         (HARDENED_EXPLICIT, "hardened_explicit", 4), (DEFAULT, "timestamps", 6))


def mixed(b: Builder) -> None:
    """A seeded mixed stream (the clocked one, with open times and the controller's clock, for "timestamps")."""
    cases.mixed_stream(b, clocked=b.name.startswith("mixed_timestamps"))
