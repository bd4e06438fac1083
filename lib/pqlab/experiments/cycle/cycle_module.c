/* CPython binding of the control-cycle harness: pqlab.experiments._cycle (the loop runs with the GIL released).
 *
 * Every integer argument is range-checked as a Python int before any conversion (no wrapping "I"/"K" formats),
 * every buffer size is checked before it is computed, no C API call is made with an exception pending, and
 * failures raise pqlab.errors.CycleError naming the argument, with the loop's pq_cycle_status name as its code. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "pqlab_binding.h"
#include "cycle_core.h"
#include "cycle_evidence.h"

extern const int PQ_EVIDENCE_IS_PLACEHOLDER;

static PyObject *CycleError;

/* Raise CycleError(message, field=field, code=code); returns NULL. */
static PyObject *cycle_error(const char *code, const char *field, const char *message) {
    return pq_raise(CycleError, Py_BuildValue("{s:s,s:s}", "field", field, "code", code), message);
}

static PyObject *invalid(const char *field, const char *message) {
    return cycle_error("PQ_CYCLE_EINVAL", field, message);
}

/* An integer in [low, high], of any Python int size (checked, never wrapped), else CycleError naming field. */
static int bounded(PyObject *obj, long long low, long long high, const char *field, long long *out) {
    return pq_bounded_arg(obj, low, high, field, out, invalid);
}

/* A non-negative integer below 2^64 (a seed or a timestamp), else CycleError naming field. */
static int unsigned64(PyObject *obj, const char *field, uint64_t *out) {
    unsigned long long value;
    if (obj == NULL || !PyLong_Check(obj) || PyBool_Check(obj)) {
        cycle_error("PQ_CYCLE_EINVAL", field, "must be an integer");
        return -1;
    }
    value = PyLong_AsUnsignedLongLong(obj);
    if (value == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear(); /* OverflowError for a negative or too large int: report it as the typed error */
        cycle_error("PQ_CYCLE_EINVAL", field, "must be an integer in [0, 2^64 - 1]");
        return -1;
    }
    *out = value;
    return 0;
}

static int copy_exact(PyObject *bytes, uint8_t *dst, Py_ssize_t n, const char *name) {
    char message[64];
    if (!PyBytes_Check(bytes) || PyBytes_GET_SIZE(bytes) != n) {
        snprintf(message, sizeof message, "must be bytes of %zd octets", n);
        cycle_error("PQ_CYCLE_EINVAL", name, message);
        return -1;
    }
    memcpy(dst, PyBytes_AS_STRING(bytes), (size_t)n);
    return 0;
}

/* (tags, k_evid, chain_seed, chain_length, dev_id, epoch, digest, policy_id, tag_len) -> config */
static int parse_evidence(PyObject *spec, pq_evidence_config *cfg) {
    static const char *const names[] = {"tags", "k_evid", "chain_seed", "chain_length", "dev_id",
                                        "epoch", "digest", "policy_id", "tag_len"};
    PyObject *item[9];
    long long tags, chain_length, epoch, policy_id, tag_len;
    memset(cfg, 0, sizeof *cfg);
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 9) {
        cycle_error("PQ_CYCLE_EINVAL", "evidence", "must be a 9-tuple (tags, k_evid, chain_seed, chain_length, "
                    "dev_id, epoch, digest, policy_id, tag_len)");
        return -1;
    }
    for (int i = 0; i < 9; i++) item[i] = PyTuple_GET_ITEM(spec, i);
    if (bounded(item[0], PQ_EVIDENCE_ONE_TAG, PQ_EVIDENCE_TWO_TAGS, names[0], &tags) < 0 ||
        copy_exact(item[1], cfg->k_evid, 32, names[1]) < 0 || copy_exact(item[2], cfg->chain_seed, 32, names[2]) < 0 ||
        bounded(item[3], 1, UINT32_MAX, names[3], &chain_length) < 0 ||
        copy_exact(item[4], cfg->dev_id, (Py_ssize_t)sizeof cfg->dev_id, names[4]) < 0 ||
        bounded(item[5], 0, UINT32_MAX, names[5], &epoch) < 0 || copy_exact(item[6], cfg->digest, 32, names[6]) < 0 ||
        bounded(item[7], 0, UINT16_MAX, names[7], &policy_id) < 0 || bounded(item[8], 1, 32, names[8], &tag_len) < 0)
        return -1;
    cfg->tags = (int)tags;
    cfg->chain_length = (uint32_t)chain_length;
    cfg->epoch = (uint32_t)epoch;
    cfg->policy_id = (uint16_t)policy_id;
    cfg->tag_len = (uint8_t)tag_len;
    return 0;
}

static pq_evidence *new_evidence(PyObject *spec) {
    pq_evidence_config cfg;
    pq_evidence *ev;
    if (parse_evidence(spec, &cfg) < 0) return NULL;
    if ((ev = pq_evidence_new(&cfg)) == NULL)
        cycle_error("PQ_CYCLE_EINVAL", "evidence", "the evidence configuration was rejected by the device path");
    return ev;
}

/* A bytes buffer of n items of size octets each (n already bounded by PQ_CYCLE_MAX_CYCLES; checked anyway). */
static PyObject *sample_buffer(size_t n, size_t size, const char *field) {
    if (size != 0 && n > (size_t)PY_SSIZE_T_MAX / size) return cycle_error("PQ_CYCLE_EINVAL", field, "too many samples");
    return PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * size));
}

/* (spec_one, spec_two) -> the rotation of no evidence, one tag and two tags (cycle_evidence.h) */
static pq_rotation *new_rotation(PyObject *pair) {
    pq_evidence_config one, two;
    pq_rotation *rot;
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
        cycle_error("PQ_CYCLE_EINVAL", "rotation", "must be a pair (one-tag spec, two-tag spec)");
        return NULL;
    }
    if (parse_evidence(PyTuple_GET_ITEM(pair, 0), &one) < 0 || parse_evidence(PyTuple_GET_ITEM(pair, 1), &two) < 0)
        return NULL;
    if ((rot = pq_rotation_new(&one, &two)) == NULL)
        cycle_error("PQ_CYCLE_EINVAL", "rotation", "needs a one-tag spec then a two-tag spec the device path accepts");
    return rot;
}

static PyObject *py_run(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"period_ns", "cycles", "warmup", "cpu", "try_fifo", "fifo_priority",
                            "workload_blocks", "evidence_every", "evidence", "rotation", "evidence_offset", NULL};
    PyObject *o_period, *o_cycles, *o_warmup, *o_cpu, *o_priority, *o_blocks, *o_every, *spec = Py_None;
    PyObject *pair = Py_None, *variants = NULL, *o_offset = NULL;
    long long offset = 0;
    PyObject *latency = NULL, *work = NULL, *evid = NULL, *flag = NULL, *cpus = NULL, *result = NULL;
    long long period_ns, cycles, warmup, cpu, priority, blocks, every;
    int try_fifo, status;
    pq_evidence *ev = NULL;
    pq_rotation *rot = NULL;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOpOOO|OOO", names, &o_period, &o_cycles, &o_warmup, &o_cpu,
                                     &try_fifo, &o_priority, &o_blocks, &o_every, &spec, &pair, &o_offset))
        return NULL;
    if (o_offset != NULL && bounded(o_offset, 0, PQ_CYCLE_MAX_CYCLES, "evidence_offset", &offset) < 0) return NULL;
    if (bounded(o_period, 10000, 10LL * 1000000000LL, "period_ns", &period_ns) < 0 ||
        bounded(o_cycles, 1, PQ_CYCLE_MAX_CYCLES, "cycles", &cycles) < 0 ||
        bounded(o_warmup, 0, PQ_CYCLE_MAX_CYCLES, "warmup", &warmup) < 0 ||
        bounded(o_cpu, 0, CPU_SETSIZE - 1, "cpu", &cpu) < 0 || bounded(o_priority, 1, 99, "fifo_priority", &priority) < 0 ||
        bounded(o_blocks, 1, PQ_SCAN_MAX_BLOCKS, "workload_blocks", &blocks) < 0 ||
        bounded(o_every, 0, UINT32_MAX, "evidence_every", &every) < 0)
        return NULL;
    if (pair != Py_None) {
        if (every != 1 || spec != Py_None)
            return cycle_error("PQ_CYCLE_EINVAL", "rotation", "a rotation runs on every cycle (evidence_every 1) "
                               "and replaces the evidence spec");
        if ((rot = new_rotation(pair)) == NULL) return NULL;
    } else if (every) {
        if (spec == Py_None) return cycle_error("PQ_CYCLE_EINVAL", "evidence", "evidence_every > 0 needs an evidence spec");
        if ((ev = new_evidence(spec)) == NULL) return NULL;
    }
    size_t n = (size_t)cycles;
    /* each allocation checked before the next C API call, so none runs with an exception pending */
    if ((latency = sample_buffer(n, sizeof(int64_t), "cycles")) == NULL ||
        (work = sample_buffer(n, sizeof(int64_t), "cycles")) == NULL ||
        (evid = sample_buffer(n, sizeof(int64_t), "cycles")) == NULL || (flag = sample_buffer(n, 1, "cycles")) == NULL ||
        (cpus = sample_buffer(n, sizeof(int32_t), "cycles")) == NULL)
        goto done;
    pq_cycle_config cfg = {
        .period_ns = period_ns, .cycles = (uint32_t)cycles, .warmup = (uint32_t)warmup, .cpu = (int)cpu,
        .try_fifo = try_fifo, .fifo_priority = (int)priority, .workload_blocks = (uint32_t)blocks,
        .evidence_every = (uint32_t)every, .evidence_offset = (uint32_t)offset,
        .hook = rot ? pq_rotation_hook : (every ? pq_evidence_hook : NULL),
        .hook_ctx = rot ? (void *)rot : (void *)ev,
    };
    pq_cycle_samples samples = {
        (int64_t *)PyBytes_AS_STRING(latency), (int64_t *)PyBytes_AS_STRING(work),
        (int64_t *)PyBytes_AS_STRING(evid), (uint8_t *)PyBytes_AS_STRING(flag), (int32_t *)PyBytes_AS_STRING(cpus),
    };
    pq_cycle_report report;
    memset(&report, 0, sizeof report);
    Py_BEGIN_ALLOW_THREADS
    status = pq_cycle_run(&cfg, &samples, &report);
    Py_END_ALLOW_THREADS
    if (status == PQ_CYCLE_ENOMEM) {
        PyErr_NoMemory();
        goto done;
    }
    if (status != PQ_CYCLE_OK) {
        char message[160];
        snprintf(message, sizeof message, "control-cycle loop failed: %s, clock errno %d, hook status %d",
                 pq_cycle_status_name(status), report.clock_errno, report.hook_status);
        cycle_error(pq_cycle_status_name(status), status == PQ_CYCLE_EHOOK ? "evidence" : "run", message);
        goto done;
    }
    uint8_t last[PQ_EVIDENCE_MAX_REPORT];
    size_t last_len = ev ? pq_evidence_last(ev, last, sizeof last) : 0;
    /* the variant each recorded cycle ran (all 0 without a rotation: the hook is called on every cycle then) */
    if ((variants = sample_buffer(n, 1, "cycles")) == NULL) goto done;
    for (size_t i = 0; i < n; i++) PyBytes_AS_STRING(variants)[i] = (char)(rot ? pq_rotation_variant(i) : 0);
    result = Py_BuildValue(
        "{sOsOsOsOsOsOsisisisisisisisisLsLsLsKsy#}", "latency_ns", latency, "work_ns", work, "evidence_ns", evid,
        "variant", variants,
        "evidence", flag, "cpu", cpus, "affinity_errno", report.affinity_errno, "affinity_cpus",
        report.affinity_cpus, "affinity_is_target", report.affinity_is_target, "fifo_errno", report.fifo_errno,
        "policy", report.policy, "priority", report.priority, "off_target_cycles", (int)report.off_target_cycles,
        "overruns", (int)report.overruns, "voluntary_switches", (long long)report.voluntary_switches,
        "involuntary_switches", (long long)report.involuntary_switches, "wall_ns", (long long)report.wall_ns,
        "workload_checksum", (unsigned long long)report.workload_checksum, "last_report", (const char *)last,
        (Py_ssize_t)last_len);
done:
    Py_XDECREF(variants);
    Py_XDECREF(latency);
    Py_XDECREF(work);
    Py_XDECREF(evid);
    Py_XDECREF(flag);
    Py_XDECREF(cpus);
    pq_evidence_free(ev);
    pq_rotation_free(rot);
    return result;
}

static PyObject *py_reports(PyObject *self, PyObject *args) {
    PyObject *spec, *stamps, *seq, *out;
    pq_evidence *ev;
    uint8_t anchor[32];
    (void)self;
    if (!PyArg_ParseTuple(args, "OO", &spec, &stamps)) return NULL;
    if ((seq = PySequence_Fast(stamps, "timestamps must be a sequence")) == NULL) return NULL;
    if ((ev = new_evidence(spec)) == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    out = PyList_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        uint64_t stamp;
        uint8_t buf[PQ_EVIDENCE_MAX_REPORT];
        PyObject *item;
        if (unsigned64(PySequence_Fast_GET_ITEM(seq, i), "timestamps", &stamp) < 0) {
            Py_CLEAR(out);
            break;
        }
        int rc = pq_evidence_hook(ev, (uint64_t)i + 1, stamp);
        size_t len = rc == 0 ? pq_evidence_last(ev, buf, sizeof buf) : 0;
        if (rc != 0 || len == 0) {
            char message[96];
            snprintf(message, sizeof message, "the device path failed on report %zd (status %d)", i + 1, rc);
            Py_CLEAR(out);
            cycle_error("PQ_CYCLE_EHOOK", "evidence", message);
            break;
        }
        if ((item = PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)len)) == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, item);
    }
    pq_evidence_anchor(ev, anchor);
    pq_evidence_free(ev);
    Py_DECREF(seq);
    if (out == NULL) return NULL;
    PyObject *result = Py_BuildValue("(Oy#)", out, (const char *)anchor, (Py_ssize_t)32);
    Py_DECREF(out);
    return result;
}

static PyObject *py_time_reports(PyObject *self, PyObject *args) {
    PyObject *spec, *count, *out;
    pq_evidence *ev;
    long long n;
    int rc = 0;
    uint32_t i = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO", &spec, &count)) return NULL;
    if (bounded(count, 0, PQ_CYCLE_MAX_CYCLES, "n", &n) < 0) return NULL;
    if ((ev = new_evidence(spec)) == NULL) return NULL;
    if ((out = sample_buffer((size_t)n, sizeof(int64_t), "n")) == NULL) {
        pq_evidence_free(ev);
        return NULL;
    }
    int64_t *ns = (int64_t *)PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    for (; i < (uint32_t)n && rc == 0; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        rc = pq_evidence_hook(ev, (uint64_t)i + 1, (uint64_t)a.tv_sec * 1000000000ULL + (uint64_t)a.tv_nsec);
        clock_gettime(CLOCK_MONOTONIC, &b);
        ns[i] = ((int64_t)b.tv_sec - (int64_t)a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
    }
    Py_END_ALLOW_THREADS
    pq_evidence_free(ev);
    if (rc != 0) {
        char message[96];
        snprintf(message, sizeof message, "the device path failed on report %u (status %d)", i, rc);
        Py_DECREF(out);
        return cycle_error("PQ_CYCLE_EHOOK", "evidence", message);
    }
    return out;
}

static PyObject *py_scan(PyObject *self, PyObject *args) {
    PyObject *o_blocks, *o_scans, *o_seed;
    long long blocks, scans;
    uint64_t seed, checksum = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOO", &o_blocks, &o_scans, &o_seed)) return NULL;
    if (bounded(o_blocks, 1, PQ_SCAN_MAX_BLOCKS, "blocks", &blocks) < 0 ||
        bounded(o_scans, 0, UINT32_MAX, "scans", &scans) < 0 || unsigned64(o_seed, "seed", &seed) < 0)
        return NULL;
    pq_scan_state *s = pq_scan_new((uint32_t)blocks, seed);
    if (s == NULL) return PyErr_NoMemory();
    for (long long i = 0; i < scans; i++) checksum ^= pq_scan_once(s);
    pq_scan_free(s);
    return PyLong_FromUnsignedLongLong(checksum);
}

static PyObject *py_clock_pairs(PyObject *self, PyObject *args) {
    PyObject *count, *out;
    long long n;
    (void)self;
    if (!PyArg_ParseTuple(args, "O", &count)) return NULL;
    if (bounded(count, 0, PQ_CYCLE_MAX_CYCLES, "n", &n) < 0) return NULL;
    if ((out = sample_buffer((size_t)n, sizeof(int64_t), "n")) == NULL) return NULL;
    Py_BEGIN_ALLOW_THREADS
    pq_clock_pairs((int64_t *)PyBytes_AS_STRING(out), (uint32_t)n);
    Py_END_ALLOW_THREADS
    return out;
}

static PyMethodDef methods[] = {
    {"run", (PyCFunction)(void (*)(void))py_run, METH_VARARGS | METH_KEYWORDS,
     "run(period_ns, cycles, warmup, cpu, try_fifo, fifo_priority, workload_blocks, evidence_every, evidence=None, "
     "rotation=None, evidence_offset=0) -> dict: the periodic loop on one pinned core; per-cycle samples as bytes "
     "(rotation: (one-tag spec, two-tag spec), no evidence / one tag / two tags cycle by cycle; evidence_offset: "
     "cycles of the configuration recorded before, so its evidence schedule continues)"},
    {"reports", py_reports, METH_VARARGS,
     "reports(evidence_spec, timestamps) -> (list of report octets for seq 1..n, anchor K0)"},
    {"clock_pairs", py_clock_pairs, METH_VARARGS,
     "clock_pairs(n) -> n int64 differences of back-to-back clock_gettime(CLOCK_MONOTONIC) calls"},
    {"time_reports", py_time_reports, METH_VARARGS,
     "time_reports(evidence_spec, n) -> n int64 durations (ns) of back-to-back evidence generations"},
    {"scan", py_scan, METH_VARARGS, "scan(blocks, scans, seed) -> checksum of the synthetic scan workload"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cycle", "Control-cycle harness (C).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__cycle(void) {
    PyObject *errors = PyImport_ImportModule("pqlab.errors"), *m;
    if (errors == NULL) return NULL;
    CycleError = PyObject_GetAttrString(errors, "CycleError");
    Py_DECREF(errors);
    if (CycleError == NULL) return NULL;
    if ((m = PyModule_Create(&module)) == NULL) return NULL;
    if (PyModule_AddIntConstant(m, "EVIDENCE_PLACEHOLDER", PQ_EVIDENCE_IS_PLACEHOLDER) < 0 ||
        PyModule_AddIntConstant(m, "ONE_TAG", PQ_EVIDENCE_ONE_TAG) < 0 ||
        PyModule_AddIntConstant(m, "TWO_TAGS", PQ_EVIDENCE_TWO_TAGS) < 0 ||
        PyModule_AddIntConstant(m, "MAX_CYCLES", PQ_CYCLE_MAX_CYCLES) < 0 ||
        PyModule_AddIntConstant(m, "MAX_BLOCKS", PQ_SCAN_MAX_BLOCKS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
