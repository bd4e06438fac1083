"""The catalogue of differential-vector cases: each function writes the inputs of one vector into a Builder."""

from __future__ import annotations

from collections.abc import Callable

from pqlab.amort.conformance.builder import Builder
from pqlab.amort.conformance.mutations import mutate
from pqlab.amort.device import encode_report
from pqlab.amort.fastpath.api import MAX_BATCH, NO_EXPIRY, ReportDevice
from pqlab.amort.messages import RECORD_OCTETS

Case = Callable[[Builder], None]
CASES: list[tuple[Case, str, str]] = []


def case(category: str, description: str) -> Callable[[Case], Case]:
    def register(fn: Case) -> Case:
        CASES.append((fn, category, description))
        return fn
    return register


def honest_setup(b: Builder, n: int = 1, **device: object) -> list:
    """An open controller with ``n`` registered devices (the same keyword settings for each)."""
    b.open_controller()
    devices = [b.device(i + 1, **device) for i in range(n)]
    for dev in devices:
        b.register(dev)
    return devices


def new_epoch(b: Builder, n: int, epoch: int, **device: object) -> ReportDevice:
    """Device ``n`` moved to ``epoch`` (its register_epoch step); the device that reports in that epoch."""
    dev = b.device(n, epoch, **device)
    b.register(dev)
    return dev


# --- device path ---------------------------------------------------------------------------------------------

for _tag in (8, 12, 16):
    def _device_tag(b: Builder, tag: int = _tag) -> None:
        b.open_device(tag_len=tag)
        for _ in range(6):
            b.report()
    _device_tag.__name__ = f"device_two_tags_tag{_tag}"
    case("device", f"device path: six two-tag reports with {_tag}-octet tags")(_device_tag)


@case("device", "device path: evidence tag only (no disclosure tag), then both, alternating")
def device_one_and_two_tags(b: Builder) -> None:
    b.open_device()
    for i in range(8):
        b.report(disclosure_tag=i % 2 == 1)


for _length in (1, 2, 5, 16, 17, 100):
    def _device_chain(b: Builder, length: int = _length) -> None:
        b.open_device(chain_length=length)
        for _ in range(length):
            b.report()
        b.report()  # one past the chain: CHAIN_FAIL, state unchanged
        b.report(disclosure_tag=False)  # an evidence-only report still goes out
        for j in sorted({0, 1, length // 2, length - 1, length, length + 1}):
            b.chain_key(j)
    _device_chain.__name__ = f"device_chain_length_{_length}"
    case("device", f"device path: a disclosure chain of {_length} keys used to its end, then exhausted "
         "(CHAIN_FAIL), an evidence-only report after it, and chain keys around the segment edges")(_device_chain)


@case("device", "device path: chain keys requested between reports do not disturb the traversal")
def device_chain_keys_interleaved(b: Builder) -> None:
    b.open_device(chain_length=40)
    for i in range(1, 41):
        b.report()
        b.chain_key(b.rng.randrange(0, 41))
        if i % 7 == 0:
            b.chain_key(i)


@case("device", "device path: extreme field values (epoch 2^32-1, policy 65535, timestamps 0 and 2^64-1, flags)")
def device_extreme_fields(b: Builder) -> None:
    b.open_device(epoch=(1 << 32) - 1, policy_id=0xFFFF, tag_len=12, chain_length=8)
    b.report(timestamp=0, flags=0)
    b.report(timestamp=(1 << 64) - 1, flags=255)
    b.report(timestamp=1, flags=128, digest=bytes(32))
    b.report(timestamp=2, flags=1, digest=b"\xff" * 32)


@case("device", "device path: bad report arguments name the field and leave the sequence untouched")
def device_bad_arguments(b: Builder) -> None:
    b.open_device(chain_length=8)
    b.report()
    b.report(digest=bytes(31))
    b.report(digest=bytes(33))
    b.report(timestamp=-1)
    b.report(timestamp=1 << 64)
    b.report(flags=256)
    b.report(flags=-1)
    b.report()


@case("device", "device path: refused openings (tag length, chain length, seed, epoch, policy), then a valid one")
def device_open_errors(b: Builder) -> None:
    b.open_device(tag_len=10)
    b.open_device(tag_len=0)
    b.open_device(chain_length=0)
    b.open_device(chain_seed=bytes(31))
    b.open_device(epoch=0)
    b.open_device(epoch=1 << 32)
    b.open_device(policy_id=1 << 16)
    b.open_device(k_evid=bytes(16))
    b.open_device(dev_id=b"PLC-1")
    b.open_device(chain_length=(1 << 24) + 1)
    b.open_device(chain_length=3)
    b.report()


@case("device", "device path: 200 reports over a 200-key chain (15 segments of the O(sqrt L) traversal)")
def device_long_chain(b: Builder) -> None:
    b.open_device(chain_length=200, tag_len=8)
    for _ in range(200):
        b.report()
    b.report()


# --- honest streams --------------------------------------------------------------------------------------------

for _tag in (8, 12, 16):
    def _honest(b: Builder, tag: int = _tag) -> None:
        (dev,) = honest_setup(b, tag_len=tag)
        b.ingest(b.reports(dev, 10))
        b.checkpoint(real_size=True)
    _honest.__name__ = f"honest_single_device_tag{_tag}"
    case("honest", f"one device, ten two-tag reports with {_tag}-octet tags, one checkpoint (ML-DSA-65-sized "
         "signature)")(_honest)


@case("honest", "three devices with 8-, 12- and 16-octet tags interleaved; two checkpoints")
def honest_mixed_tag_lengths(b: Builder) -> None:
    b.open_controller()
    devs = [b.device(i + 1, tag_len=t) for i, t in enumerate((8, 12, 16))]
    for dev in devs:
        b.register(dev)
    for _ in range(2):
        b.ingest([r for _ in range(3) for dev in devs for r in b.reports(dev)])
        b.checkpoint()


@case("honest", "evidence-tag-only reports (no disclosure tag)")
def honest_evidence_only(b: Builder) -> None:
    (dev,) = honest_setup(b)
    b.ingest(b.reports(dev, 7, disclosure_tag=False))
    b.checkpoint()


@case("honest", "sixteen devices round-robin, three checkpoints")
def honest_sixteen_devices(b: Builder) -> None:
    devs = honest_setup(b, 16)
    for _ in range(3):
        b.ingest([r for dev in devs for r in b.reports(dev, 2)])
        b.checkpoint()


@case("honest", "the same stream as one framed buffer per batch")
def honest_framed_buffer(b: Builder) -> None:
    devs = honest_setup(b, 3)
    for _ in range(2):
        b.ingest([r for dev in devs for r in b.reports(dev, 3)], framed=True)
        b.checkpoint()


@case("honest", "reports handed in as bytearray and memoryview objects")
def honest_buffer_types(b: Builder) -> None:
    (dev,) = honest_setup(b)
    reports = b.reports(dev, 4)
    b.ingest([{"bytearray": reports[0].hex()}, {"memoryview": reports[1].hex()},
              reports[2], {"bytearray": reports[3].hex()}])
    b.checkpoint()


@case("honest", "SLH-DSA-SHA2-128f controller (sig_alg 2, 17088-octet signatures)")
def honest_slh_dsa_controller(b: Builder) -> None:
    b.open_controller(sig_alg=2)
    devs = [b.device(i + 1) for i in range(2)]
    for dev in devs:
        b.register(dev)
    for _ in range(2):
        b.ingest([r for dev in devs for r in b.reports(dev, 2)])
        b.checkpoint(real_size=True)


@case("honest", "one checkpoint per report (k = 1), eight times")
def honest_checkpoint_every_report(b: Builder) -> None:
    (dev,) = honest_setup(b)
    for _ in range(8):
        b.ingest(b.reports(dev))
        b.checkpoint()


@case("honest", "uneven devices: 13 reports of one, 1 of another, 4 of a third (odd subtree sizes)")
def honest_uneven_devices(b: Builder) -> None:
    devs = honest_setup(b, 3)
    b.ingest(b.reports(devs[0], 13) + b.reports(devs[1], 1) + b.reports(devs[2], 4))
    b.checkpoint()


@case("honest", "spans sorted by dev_id octets, not by registration or arrival order")
def honest_span_order(b: Builder) -> None:
    b.open_controller()
    ids = [b"\xff\x00\x00\x00\x00\x00\x00\x01", b"PLC-0009", b"\x00\x00\x00\x00\x00\x00\x00\x00", b"PLC-0001",
           b"\x80PLC-002"]
    devs = [b.device(dev_id) for dev_id in ids]
    for dev in devs:
        b.register(dev)
    b.ingest([r for dev in devs for r in b.reports(dev, 2)])
    b.checkpoint()


@case("honest", "a different controller id and policy ids per device")
def honest_controller_id_and_policy(b: Builder) -> None:
    b.open_controller(controller_id=b"CTRL-\x00\xfe\x07")
    devs = [b.device(1, policy_id=0), b.device(2, policy_id=65535)]
    for dev in devs:
        b.register(dev)
    b.ingest([r for dev in devs for r in b.reports(dev, 3)])
    b.checkpoint()


@case("honest", "digests, timestamps and flags at their extremes (timestamps 0, 7, 2^64 - 1: monotonic; the "
      "controller's clock at 0, so none is too old)")
def honest_extreme_fields(b: Builder) -> None:
    (dev,) = honest_setup(b)
    reports = [dev.report(bytes(32), 0, flags=0), dev.report(bytes(range(32)), 7, flags=1),
               dev.report(b"\xff" * 32, (1 << 64) - 1, flags=255)]
    b.ingest(reports, now=0)
    b.checkpoint()


# --- decoding ----------------------------------------------------------------------------------------------------

def decode_case(name: str, description: str, broken: Callable[[bytes], list],
                implied: tuple[str, Callable[[bytes], list]] | None = None) -> None:
    """A decoding vector: ``broken`` copies of a good two-tag report; ``implied`` replaces description and copies
    where the implied wire format (no tag length octets) needs other ones."""
    def fn(b: Builder) -> None:
        (dev,) = honest_setup(b)
        good = b.reports(dev, 2)
        make = implied[1] if implied and not b.explicit else broken
        b.ingest([good[0], *make(good[1]), good[1]])  # the broken copies are refused; the original still counts
        b.checkpoint()
    fn.__name__ = name
    fn.implied_description = implied[0] if implied else description
    case("decode", description)(fn)


decode_case("decode_empty", "an empty report: TRUNCATED at the domain length", lambda r: [b""])
decode_case("decode_domain_length", "domain length 9, 11, 0, 255: BAD_DOMAIN at offset 0",
            lambda r: [bytes([n]) + r[1:] for n in (9, 11, 0, 255)])
decode_case("decode_domain_truncated", "input ends inside the domain tag: TRUNCATED",
            lambda r: [r[:1], r[:5], r[:10]])
decode_case("decode_domain_tag", "another domain tag (AMORT.EVIX, AMORT.CKPT, lower case): BAD_DOMAIN at offset 1",
            lambda r: [r[:1] + b"AMORT.EVIX" + r[11:], r[:1] + b"AMORT.CKPT" + r[11:], r[:1] + b"amort.evid" + r[11:]])
decode_case("decode_version_length", "version length prefix 0, 2, 255 and missing",
            lambda r: [r[:11] + bytes([n]) + r[12:] for n in (0, 2, 255)] + [r[:11]])
decode_case("decode_version", "version 0, 2, 255 and missing: BAD_VERSION / TRUNCATED at offset 12",
            lambda r: [r[:12] + bytes([n]) + r[13:] for n in (0, 2, 255)] + [r[:12]])

_FIELDS = (("dev_id", 13, 8), ("epoch", 22, 4), ("seq", 27, 8), ("timestamp", 36, 8), ("digest", 45, 32),
           ("policy_id", 78, 2), ("flags", 81, 1))
for _name, _at, _width in _FIELDS:
    def _field(r: bytes, at: int = _at, width: int = _width) -> list:
        return [r[:at],                                          # ends before the length octet
                r[:at] + bytes([width - 1]) + r[at + 1:],        # shorter prefix: TRUNCATED
                r[:at] + bytes([width + 1]) + r[at + 1:],        # longer prefix: TRAILING
                r[:at] + bytes([0]) + r[at + 1:],
                r[:at + 1 + width // 2]]                         # ends inside the value
    decode_case(f"decode_field_{_name}", f"the {_name} field at offset {_at}: missing length octet, length "
                f"{_width - 1}/{_width + 1}/0, value cut short", _field)

decode_case("decode_tag_length", "evidence tag length 0, 7, 9, 17, 32, 255 and missing",
            lambda r: [r[:RECORD_OCTETS] + bytes([n]) + r[RECORD_OCTETS + 1:] for n in (0, 7, 9, 17, 32, 255)]
            + [r[:RECORD_OCTETS]],
            ("tag sections of 0, 7, 8, 9, 12, 17, 24 and 33 octets in a 16-octet epoch: TRUNCATED, or "
             "TAGLEN_DOWNGRADE where the length is another epoch's, TRAILING past two tags",
             lambda r: [r[:RECORD_OCTETS] + (r[RECORD_OCTETS:] * 2)[:n] for n in (0, 7, 8, 9, 12, 17, 24, 33)]))
decode_case("decode_tag_truncated", "input ends inside the evidence tag",
            lambda r: [r[:RECORD_OCTETS + 1], r[:RECORD_OCTETS + 9], r[:RECORD_OCTETS + 16]],
            ("input ends inside the evidence tag (after 1, 9, 15 of its 16 octets)",
             lambda r: [r[:RECORD_OCTETS + 1], r[:RECORD_OCTETS + 9], r[:RECORD_OCTETS + 15]]))
decode_case("decode_dtag_length", "disclosure tag length 8, 12 (not the evidence tag's 16), 4, 255, missing",
            lambda r: [r[:100] + bytes([n]) + r[101:] for n in (8, 12, 4, 255)] + [r[:100]],
            ("a disclosure tag of 8 (TAGLEN_DOWNGRADE: 24 tag octets), 12, 4 (TRUNCATED) and 20 octets (TRAILING)",
             lambda r: [r[:99] + (r[99:] * 2)[:n] for n in (8, 12, 4, 20)]))
decode_case("decode_dtag_truncated", "input ends inside the disclosure tag", lambda r: [r[:101], r[:110], r[:116]],
            ("input ends inside the disclosure tag (after 1, 9, 15 of its 16 octets)",
             lambda r: [r[:100], r[:108], r[:114]]))
decode_case("decode_trailing", "octets after the disclosure tag, and after an absent one: TRAILING",
            lambda r: [r + b"\x00", r + bytes(40), r[:100] + b"\x00\x00"],
            ("octets after the disclosure tag (1, 40, 17): TRAILING; 2 octets after a lone evidence tag read as a "
             "disclosure tag cut short: TRUNCATED",
             lambda r: [r + b"\x00", r + bytes(40), r + bytes(17), r[:99] + b"\x00\x00"]))
decode_case("decode_not_octets", "items that are not octet strings: TRUNCATED at 'Report'",
            lambda r: [{"object": 5}, {"object": "report"}, {"object": None}, {"object": [1, 2]}])


@case("decode", "the decoder's refusals come before any controller check (an unknown device's broken report); "
      "implied format: the record's, as its tags need the device's epoch")
def decode_before_device(b: Builder) -> None:
    honest_setup(b)
    stranger = b.device(99)
    r = b.reports(stranger)[0]
    b.ingest([r, r[:50], r + b"\x01" if b.explicit else r[:82], bytes([9]) + r[1:]])


# --- controller checks ---------------------------------------------------------------------------------------------

@case("device_state", "a report from an unregistered device: DEVICE_UNKNOWN")
def check_device_unknown(b: Builder) -> None:
    (dev,) = honest_setup(b)
    b.ingest(b.reports(b.device(2), 2) + b.reports(dev, 1))
    b.checkpoint()


@case("revocation", "revoking one device mid-stream: its later reports are REVOKED, the other keeps attesting, "
      "its pending reports are still committed")
def revocation_mid_stream(b: Builder) -> None:
    a, c = honest_setup(b, 2)
    b.ingest(b.reports(a, 2) + b.reports(c, 2))
    b.revoke(a.dev_id)
    b.ingest(b.reports(a, 2) + b.reports(c, 2))
    b.checkpoint()
    b.ingest(b.reports(a, 1) + b.reports(c, 1))
    b.checkpoint()


@case("revocation", "revoking an unknown device (DEVICE_UNKNOWN), twice (REVOKED), and re-keying a revoked one")
def revocation_errors(b: Builder) -> None:
    (dev,) = honest_setup(b)
    b.revoke(b.dev_id(7))
    b.revoke(dev.dev_id)
    b.revoke(dev.dev_id)
    new_epoch(b, 1, 2)
    b.ingest(b.reports(dev))


@case("revocation", "REVOKED is checked before the epoch, the expiry, the tag and the sequence")
def revocation_precedence(b: Builder) -> None:
    (dev,) = honest_setup(b)
    reports = b.reports(dev, 3)
    b.revoke(dev.dev_id)
    b.ingest([reports[2], reports[0][:b.tag_at()] + bytes(16) + (b"\x00" if b.explicit else b""), reports[0]])


@case("revocation", "revocation among 32 devices: only the revoked one stops")
def revocation_isolation(b: Builder) -> None:
    devs = honest_setup(b, 32)
    b.ingest([r for d in devs for r in b.reports(d)])
    b.revoke(devs[17].dev_id)
    b.ingest([r for d in devs for r in b.reports(d)])
    b.checkpoint()


@case("epoch", "a record naming the next or a previous epoch: EPOCH_STALE")
def check_epoch_mismatch(b: Builder) -> None:
    (dev,) = honest_setup(b)
    ahead, behind = b.device(1, 2), b.device(1, 1)
    b.ingest(b.reports(ahead, 1) + b.reports(dev, 2))
    new_epoch(b, 1, 3)
    b.ingest(b.reports(behind, 1) + b.reports(dev, 1))
    b.checkpoint()


@case("epoch", "expiry: a timestamp equal to the expiry is accepted, one past it is EPOCH_STALE")
def check_expiry(b: Builder) -> None:
    b.open_controller()
    dev = b.device(1)
    b.register(dev, expiry=1_003_000)
    b.ingest(b.reports(dev, 4))
    b.checkpoint()


@case("epoch", "expiry 0: every report with a positive timestamp is stale, timestamp 0 passes")
def check_expiry_zero(b: Builder) -> None:
    b.open_controller()
    dev = b.device(1)
    b.register(dev, expiry=0)
    b.ingest([dev.report(bytes(32), 5), dev.report(bytes(32), 0)])
    b.checkpoint()


@case("epoch", "EPOCH_STALE (epoch) is checked before the expiry, and the expiry before the tag length")
def check_epoch_precedence(b: Builder) -> None:
    b.open_controller()
    dev = b.device(1, tag_len=16)
    b.register(dev, expiry=1_001_500)
    late = b.device(1, 1, tag_len=8)
    b.reports(late, 1)
    other = b.device(1, 5, tag_len=8)
    b.ingest(b.reports(other, 1) + b.reports(late, 1) + b.reports(dev, 1))


for _have, _epoch in ((8, 16), (16, 8), (12, 16), (16, 12)):
    def _taglen(b: Builder, have: int = _have, want: int = _epoch) -> None:
        b.open_controller()
        dev = b.device(1, tag_len=want)
        b.register(dev)
        forged = b.device(1, tag_len=have)
        b.ingest(b.reports(forged, 2) + b.reports(dev, 2))
        b.checkpoint()
    _taglen.__name__ = f"check_tag_length_{_have}_in_{_epoch}_epoch"
    case("tag_length", f"{_have}-octet tags in an epoch that fixes {_epoch}: TAGLEN_DOWNGRADE, before the MAC")(
        _taglen)


@case("mac", "one flipped bit in the evidence tag, in the digest, in the timestamp: MAC_FAIL")
def check_mac_bit_flips(b: Builder) -> None:
    (dev,) = honest_setup(b)
    r = b.reports(dev, 2)
    flips = [(b.tag_at(), 0x01), (b.tag_at() + 15, 0x80), (50, 0x04), (40, 0x10), (82, 0x01), (80, 0x02)]
    b.ingest([bytes(x ^ m if i == at else x for i, x in enumerate(r[0])) for at, m in flips] + r)
    b.checkpoint()


@case("mac", "a report tagged under another epoch's or another device's key: MAC_FAIL")
def check_mac_wrong_key(b: Builder) -> None:
    a, c = honest_setup(b, 2)
    ra = b.reports(a, 1)[0]
    rc = b.reports(c, 1)[0]
    relabelled = ra[:14] + c.dev_id + ra[22:]  # a's tag on a record naming c
    b.ingest([relabelled, rc, ra])
    b.checkpoint()


@case("mac", "the controller does not check the disclosure tag: a corrupted or dropped one is accepted and "
      "committed (hardened: the evidence tag covers it, MAC_FAIL)")
def check_disclosure_tag_not_verified(b: Builder) -> None:
    (dev,) = honest_setup(b)
    r = b.reports(dev, 2)
    b.ingest([r[0][:-1] + bytes([r[0][-1] ^ 0xFF]), r[1][:-17] + b"\x00" if b.explicit else r[1][:-16]])
    b.checkpoint()


@case("mac", "MAC_FAIL is checked before the sequence: a forged replay is MAC_FAIL, not SEQ_DUPLICATE")
def check_mac_before_sequence(b: Builder) -> None:
    (dev,) = honest_setup(b)
    r = b.reports(dev, 2)
    b.ingest(r)
    at = b.tag_at()
    b.ingest([r[0][:at] + bytes(16) + r[0][at + 16:], r[0], r[1][:28] + b"\x09" + r[1][29:]])
    b.checkpoint()


@case("sequence", "replays: the same report twice in a batch, again in the next batch, and after commit")
def sequence_replays(b: Builder) -> None:
    (dev,) = honest_setup(b)
    r = b.reports(dev, 3)
    b.ingest([r[0], r[0], r[1]])
    b.ingest([r[1], r[0], r[2]])
    b.checkpoint()
    b.ingest(r)


@case("sequence", "gaps: seq 3 after 1 is SEQ_GAP; 2 then 3 are accepted afterwards; a far jump")
def sequence_gaps(b: Builder) -> None:
    (dev,) = honest_setup(b)
    r = b.reports(dev, 12)
    b.ingest([r[0], r[2], r[1], r[2], r[11], r[3]])
    b.checkpoint()


@case("sequence", "a correctly tagged report of sequence 0 (a device never sends one) is SEQ_DUPLICATE")
def sequence_zero(b: Builder) -> None:
    (dev,) = honest_setup(b)
    key = b.k_evid(dev.dev_id, dev.epoch)
    zero = encode_report(dev.dev_id, dev.epoch, 0, 5, bytes(32), dev.policy_id, 0, key, dev.tag_len, None,
                         profile=b.profile)
    b.ingest([zero, *b.reports(dev, 1), zero])
    b.checkpoint()


@case("sequence", "the whole previous batch replayed after a checkpoint: every report SEQ_DUPLICATE")
def sequence_batch_replay(b: Builder) -> None:
    devs = honest_setup(b, 4)
    batch = [r for d in devs for r in b.reports(d, 3)]
    b.ingest(batch)
    b.checkpoint()
    b.ingest(batch)
    b.ingest([r for d in devs for r in b.reports(d, 1)])
    b.checkpoint()


@case("registration", "register_epoch refusals: same or older epoch (EPOCH_STALE), bad tag length "
      "(TAGLEN_DOWNGRADE), and bad arguments naming their field")
def registration_errors(b: Builder) -> None:
    (dev,) = honest_setup(b)
    key = b.k_evid(dev.dev_id, 1)
    b.register(dev)
    good = {"dev_id": b.dev_id(2), "epoch": 1, "k_evid": key, "tag_len": 16, "expiry": NO_EXPIRY, "policy_id": 1,
            "not_before": 0}
    b.step("register_epoch", **{**good, "dev_id": dev.dev_id, "epoch": 0})
    for tag in (0, 4, 10, 20, 255):
        b.step("register_epoch", **{**good, "tag_len": tag})
    b.step("register_epoch", **{**good, "k_evid": key[:16]})
    b.step("register_epoch", **{**good, "dev_id": b"PLC-2"})
    b.step("register_epoch", **{**good, "epoch": 1 << 32})
    b.step("register_epoch", **{**good, "expiry": -1})
    b.step("register_epoch", **{**good, "expiry": 1 << 64})
    b.step("register_epoch", **{**good, "policy_id": 1 << 16})
    b.step("register_epoch", **{**good, "not_before": -1})
    b.ingest(b.reports(dev))


@case("registration", "open_controller refusals: unknown signature algorithm (SIG_FAIL), short controller id")
def registration_controller_errors(b: Builder) -> None:
    b.open_controller(sig_alg=3)
    b.open_controller(sig_alg=0)
    b.open_controller(controller_id=b"CTRL")
    b.open_controller()
    (dev,) = [b.device(1)]
    b.register(dev)
    b.ingest(b.reports(dev))
    b.checkpoint()


# --- epoch changes -------------------------------------------------------------------------------------------------

@case("epoch_change", "new epoch with uncommitted reports: they are dropped and an EPOCH_CLOSE shows "
      "last_seen 3, last_committed 0")
def epoch_change_uncommitted(b: Builder) -> None:
    (dev,) = honest_setup(b)
    b.ingest(b.reports(dev, 3))
    nxt = new_epoch(b, 1, 2)
    b.ingest(b.reports(nxt, 2))
    b.checkpoint()


@case("epoch_change", "new epoch after everything was committed: the close shows last_seen = last_committed")
def epoch_change_committed(b: Builder) -> None:
    (dev,) = honest_setup(b)
    b.ingest(b.reports(dev, 4))
    b.checkpoint()
    new_epoch(b, 1, 2)
    b.checkpoint()


@case("epoch_change", "new epoch after a partial commit: 4 committed, 2 lost")
def epoch_change_partial(b: Builder) -> None:
    (dev,) = honest_setup(b)
    b.ingest(b.reports(dev, 4))
    b.checkpoint()
    b.ingest(b.reports(dev, 2))
    nxt = new_epoch(b, 1, 2)
    b.ingest(b.reports(nxt, 1))
    b.checkpoint()


@case("epoch_change", "new epoch while a body awaits its signature: the close sees that body's commitment")
def epoch_change_during_commit(b: Builder) -> None:
    (dev,) = honest_setup(b)
    b.ingest(b.reports(dev, 3))
    b.body()
    b.ingest(b.reports(dev, 2))
    nxt = new_epoch(b, 1, 2)
    b.commit()
    b.ingest(b.reports(nxt, 2))
    b.checkpoint()


@case("epoch_change", "two epoch changes before one checkpoint: two closes")
def epoch_change_twice(b: Builder) -> None:
    (dev,) = honest_setup(b)
    b.ingest(b.reports(dev, 2))
    second = new_epoch(b, 1, 2)
    b.ingest(b.reports(second, 3))
    third = new_epoch(b, 1, 3)
    b.ingest(b.reports(third, 1))
    b.checkpoint()


@case("epoch_change", "old-epoch reports after the change are EPOCH_STALE; the new epoch restarts at seq 1")
def epoch_change_stale_reports(b: Builder) -> None:
    (dev,) = honest_setup(b)
    old = b.reports(dev, 3)
    b.ingest(old[:1])
    nxt = new_epoch(b, 1, 2)
    b.ingest(old[1:] + b.reports(nxt, 2) + old[:1])
    b.checkpoint()


@case("epoch_change", "an epoch jump (1 to 7) with a new tag length and policy")
def epoch_change_jump(b: Builder) -> None:
    (dev,) = honest_setup(b)
    b.ingest(b.reports(dev, 2))
    b.checkpoint()
    nxt = new_epoch(b, 1, 7, tag_len=8, policy_id=9)
    b.ingest(b.reports(nxt, 3) + b.reports(dev, 1))
    b.checkpoint()


@case("epoch_change", "one device changes epoch while three others keep reporting in the same batches")
def epoch_change_among_others(b: Builder) -> None:
    devs = honest_setup(b, 4)
    b.ingest([r for d in devs for r in b.reports(d, 2)])
    nxt = new_epoch(b, 2, 2)
    b.ingest([r for d in (devs[0], nxt, devs[2], devs[3]) for r in b.reports(d, 2)])
    b.checkpoint()


@case("epoch_change", "an epoch change for a device whose previous body is committed and which then is revoked")
def epoch_change_then_revoke(b: Builder) -> None:
    (dev,) = honest_setup(b)
    b.ingest(b.reports(dev, 2))
    b.checkpoint()
    nxt = new_epoch(b, 1, 2)
    b.ingest(b.reports(nxt, 1))
    b.revoke(dev.dev_id)
    b.ingest(b.reports(nxt, 1))
    b.checkpoint()
    b.checkpoint()


# --- checkpoint boundaries -------------------------------------------------------------------------------------------

@case("checkpoint", "a checkpoint with no reports, twice, on a fresh controller")
def checkpoint_empty(b: Builder) -> None:
    b.open_controller()
    b.checkpoint()
    b.checkpoint()


@case("checkpoint", "calls out of order: commit without a body, a second body, a second commit")
def checkpoint_out_of_order(b: Builder) -> None:
    (dev,) = honest_setup(b)
    b.commit()
    b.ingest(b.reports(dev, 2))
    b.body()
    b.body()
    b.commit()
    b.commit()
    b.checkpoint()


@case("checkpoint", "reports arriving while a body awaits its signature go to the next checkpoint")
def checkpoint_ingest_while_outstanding(b: Builder) -> None:
    devs = honest_setup(b, 2)
    b.ingest([r for d in devs for r in b.reports(d, 2)])
    b.body()
    b.ingest([r for d in devs for r in b.reports(d, 2)])
    b.commit()
    b.checkpoint()


@case("checkpoint", "signatures of 0 and 65535 octets are carried; 65536 octets is refused")
def checkpoint_signature_sizes(b: Builder) -> None:
    (dev,) = honest_setup(b)
    b.ingest(b.reports(dev))
    b.body()
    b.commit(b"")
    b.ingest(b.reports(dev))
    b.body()
    b.step("commit", signature={"fill": "a5", "octets": 65536})
    b.step("commit", signature={"fill": "5a", "octets": 65535})


@case("checkpoint", "checkpoints of 1, 2, 3, 4, 5, 6, 7 and 9 reports (every tree shape up to a power of two + 1)")
def checkpoint_tree_shapes(b: Builder) -> None:
    (dev,) = honest_setup(b, chain_length=128)
    for n in (1, 2, 3, 4, 5, 6, 7, 9):
        b.ingest(b.reports(dev, n))
        b.checkpoint()


@case("checkpoint", "a checkpoint holding only an epoch close")
def checkpoint_only_closes(b: Builder) -> None:
    devs = honest_setup(b, 2)
    b.ingest(b.reports(devs[0], 2))
    b.checkpoint()
    new_epoch(b, 1, 2)
    new_epoch(b, 2, 2)
    b.checkpoint()


@case("checkpoint", "33 reports of one device in one checkpoint next to one of another (subtree depth 6)")
def checkpoint_deep_subtree(b: Builder) -> None:
    devs = honest_setup(b, 2)
    b.ingest(b.reports(devs[0], 33) + b.reports(devs[1], 1))
    b.checkpoint()


# --- batch shapes ----------------------------------------------------------------------------------------------------

@case("batch", "empty batches: an empty list and an empty framed buffer")
def batch_empty(b: Builder) -> None:
    (dev,) = honest_setup(b)
    b.ingest([])
    b.ingest([], framed=True)
    b.ingest(b.reports(dev))
    b.checkpoint()


@case("batch", "a maximal batch: 1024 reports from 32 devices in one call, then one checkpoint")
def batch_maximal(b: Builder) -> None:
    devs = honest_setup(b, 32, tag_len=8)  # 10 ms apart: the batch spans 10 s, all fresh at the clock
    b.ingest([r for _ in range(32) for d in devs for r in b.reports(d, disclosure_tag=False, step=10)])
    b.checkpoint()


@case("batch", "a maximal framed buffer of 1024 reports, honest ones mixed with replays and broken copies")
def batch_maximal_framed(b: Builder) -> None:
    devs = honest_setup(b, 8, tag_len=8)
    reports = []
    while len(reports) < MAX_BATCH:
        d = devs[b.rng.randrange(len(devs))]
        r = b.reports(d, disclosure_tag=False, step=10)[0]
        if b.rng.random() < 0.3:
            reports.append(mutate(r, b.rng, reports[-8:]) if b.rng.random() < 0.8 else b.rng.choice(reports or [r]))
        reports.append(r)
    reports = reports[:MAX_BATCH]
    b.ingest(reports, framed=True)
    b.checkpoint()


@case("batch", "1025 reports in one call is refused whole (FastpathError), as a list and as a buffer")
def batch_over_limit(b: Builder) -> None:
    (dev,) = honest_setup(b)
    b.ingest([b""] * (MAX_BATCH + 1))
    b.ingest([b""] * (MAX_BATCH + 1), framed=True)
    b.ingest(b.reports(dev))
    b.checkpoint()


@case("batch", "broken framing: a cut length, a frame longer than the buffer; nothing is ingested")
def batch_bad_framing(b: Builder) -> None:
    (dev,) = honest_setup(b)
    r = b.reports(dev, 2)
    framed = len(r[0]).to_bytes(2, "big") + r[0]
    b.ingest_raw({"framed": (framed + b"\x00").hex(), "now": b.clock})
    b.ingest_raw({"framed": (framed + (200).to_bytes(2, "big") + r[1]).hex(), "now": b.clock})
    b.ingest_raw({"framed": (framed + len(r[1]).to_bytes(2, "big") + r[1][:-1]).hex(), "now": b.clock})
    b.ingest_raw({"framed": (framed + (0).to_bytes(2, "big")).hex(), "now": b.clock})
    b.checkpoint()


@case("batch", "a batch in which every report is refused, each for a different reason")
def batch_all_refused(b: Builder) -> None:
    a, c = honest_setup(b, 2)
    ra = b.reports(a, 3)
    b.ingest([ra[0]])
    b.revoke(c.dev_id)
    b.ingest([ra[0], ra[2], ra[1][:60], b.reports(c)[0], b.reports(b.device(5))[0], ra[1][:-1] + b"\x00\x00",
              ra[1][:RECORD_OCTETS] + b"\x07" + ra[1][RECORD_OCTETS + 1:] if b.explicit else ra[1][:-8]])
    b.checkpoint()


# --- interleaving and replays ----------------------------------------------------------------------------------

@case("interleaved", "five devices in a shuffled order that keeps each device's own order")
def interleaved_shuffled(b: Builder) -> None:
    devs = honest_setup(b, 5)
    queues = [b.reports(d, 6) for d in devs]
    batch = []
    while any(queues):
        q = b.rng.choice([q for q in queues if q])
        batch.append(q.pop(0))
    b.ingest(batch[:15])
    b.checkpoint()
    b.ingest(batch[15:])
    b.checkpoint()


@case("interleaved", "five devices fully shuffled: each device's reordering shows as gaps and later acceptances")
def interleaved_reordered(b: Builder) -> None:
    devs = honest_setup(b, 5)
    batch = [r for d in devs for r in b.reports(d, 5)]
    b.rng.shuffle(batch)
    b.ingest(batch)
    b.ingest(batch)
    b.checkpoint()


@case("interleaved", "64 devices, one report each per checkpoint (the paper's scaling shape), three checkpoints")
def interleaved_one_report_per_device(b: Builder) -> None:
    devs = honest_setup(b, 64, tag_len=12)
    for _ in range(3):
        b.ingest([b.reports(d, disclosure_tag=False)[0] for d in devs])
        b.checkpoint()


@case("interleaved", "a device's report relabelled with another epoch or sequence number is refused")
def interleaved_relabelled(b: Builder) -> None:
    a, c = honest_setup(b, 2)
    r = b.reports(a, 2)
    b.ingest([r[0][:23] + (2).to_bytes(4, "big") + r[0][27:], r[0][:28] + (2).to_bytes(8, "big") + r[0][36:],
              r[0], r[1], *b.reports(c, 1)])
    b.checkpoint()


def mixed_stream(b: Builder, clocked: bool = False) -> None:
    """A seeded stream over 2-6 devices: honest reports with mutated copies and replays around them, reports held
    back and delivered late (gaps, then acceptance), epoch changes, revocations and checkpoints. ``clocked``: epochs
    registered with an open time and batches ingested with the controller's clock (some of them late)."""
    rng = b.rng
    b.open_controller(sig_alg=rng.choice((1, 1, 2)), **({"max_report_age": 20_000} if clocked else {}))
    devs = [b.device(i + 1, tag_len=rng.choice((8, 12, 16)), chain_length=256) for i in range(rng.randint(2, 6))]

    def opened() -> dict:
        return {"not_before": b.clock - rng.randint(0, 3_000)} if clocked else {}

    for d in devs:
        b.register(d, expiry=rng.choice((NO_EXPIRY, NO_EXPIRY, 1_000_000 + 1_000 * rng.randint(20, 80))),
                   **opened())
    held: list[list[bytes]] = [[] for _ in devs]  # a device's reports from a lost one onwards, awaiting resend
    seen: list[bytes] = []
    for _ in range(rng.randint(3, 6)):
        batch: list = []
        for _ in range(rng.randint(0, 24)):
            i = rng.randrange(len(devs))
            r = b.reports(devs[i], disclosure_tag=rng.random() < 0.7)[0]
            if held[i] or rng.random() < 0.06:
                held[i].append(r)
                if rng.random() < 0.3:
                    batch.append(r)  # overtakes the lost report: SEQ_GAP
            else:
                batch.append(r)
            if rng.random() < 0.3:
                batch.append(mutate(r, rng, seen[-16:]) if rng.random() < 0.75 or not seen else rng.choice(seen))
            if held[i] and rng.random() < 0.2:
                batch.extend(held[i])  # the resend, in order
                held[i] = []
            seen.append(r)
        clock = {"now": b.clock + rng.choice((0, 1_000, 15_000, 40_000))} if clocked else {}
        b.ingest(batch, framed=rng.random() < 0.3, **clock)
        roll = rng.random()
        if roll < 0.15:
            i = rng.randrange(len(devs))
            devs[i] = b.device(devs[i].dev_id, devs[i].epoch + rng.randint(1, 3), tag_len=rng.choice((8, 12, 16)),
                               chain_length=256)
            held[i] = []
            b.register(devs[i], **opened())
        elif roll < 0.22:
            b.revoke(devs[rng.randrange(len(devs))].dev_id)
        if rng.random() < 0.6:
            b.checkpoint()
    b.checkpoint()
