/* CPython binding of the control-cycle harness: pqlab.bench._cycle (the loop runs with the GIL released). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>
#include <time.h>

#include "cycle_core.h"
#include "cycle_evidence.h"

extern const int PQ_EVIDENCE_IS_PLACEHOLDER;

static int copy_exact(PyObject *bytes, uint8_t *dst, Py_ssize_t n, const char *name) {
    char *data;
    Py_ssize_t len;
    if (PyBytes_AsStringAndSize(bytes, &data, &len) < 0) return -1;
    if (len != n) {
        PyErr_Format(PyExc_ValueError, "%s must be %zd octets, got %zd", name, n, len);
        return -1;
    }
    memcpy(dst, data, (size_t)n);
    return 0;
}

/* (tags, k_evid, chain_seed, chain_length, dev_id, epoch, digest, policy_id, tag_len) -> config */
static int parse_evidence(PyObject *spec, pq_evidence_config *cfg) {
    PyObject *k_evid, *seed, *dev_id, *digest;
    unsigned int chain_length, epoch, policy_id, tag_len;
    memset(cfg, 0, sizeof *cfg);
    if (!PyArg_ParseTuple(spec, "iSSISISII;evidence spec", &cfg->tags, &k_evid, &seed, &chain_length, &dev_id,
                          &epoch, &digest, &policy_id, &tag_len))
        return -1;
    if (policy_id > 0xFFFF || tag_len > 32) {
        PyErr_SetString(PyExc_ValueError, "policy_id must fit 16 bits and tag_len be at most 32");
        return -1;
    }
    cfg->chain_length = chain_length;
    cfg->epoch = epoch;
    cfg->policy_id = (uint16_t)policy_id;
    cfg->tag_len = (uint8_t)tag_len;
    if (copy_exact(k_evid, cfg->k_evid, 32, "k_evid") || copy_exact(seed, cfg->chain_seed, 32, "chain_seed") ||
        copy_exact(dev_id, cfg->dev_id, (Py_ssize_t)sizeof cfg->dev_id, "dev_id") ||
        copy_exact(digest, cfg->digest, 32, "digest"))
        return -1;
    return 0;
}

static pq_evidence *new_evidence(PyObject *spec) {
    pq_evidence_config cfg;
    if (parse_evidence(spec, &cfg) < 0) return NULL;
    pq_evidence *ev = pq_evidence_new(&cfg);
    if (!ev) PyErr_SetString(PyExc_ValueError, "the evidence configuration was rejected by the device path");
    return ev;
}

static PyObject *py_run(PyObject *self, PyObject *args, PyObject *kwargs) {
    (void)self;
    static char *names[] = {"period_ns", "cycles", "warmup", "cpu", "try_fifo", "fifo_priority",
                            "workload_blocks", "evidence_every", "evidence", NULL};
    long long period_ns;
    unsigned int cycles, warmup, blocks, every;
    int cpu, try_fifo, priority;
    PyObject *spec = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LIIipiII|O", names, &period_ns, &cycles, &warmup, &cpu,
                                     &try_fifo, &priority, &blocks, &every, &spec))
        return NULL;
    pq_evidence *ev = NULL;
    if (every) {
        if (spec == Py_None) {
            PyErr_SetString(PyExc_ValueError, "evidence_every > 0 needs an evidence spec");
            return NULL;
        }
        if (!(ev = new_evidence(spec))) return NULL;
    }
    size_t n = cycles;
    PyObject *latency = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * sizeof(int64_t)));
    PyObject *work = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * sizeof(int64_t)));
    PyObject *evid = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * sizeof(int64_t)));
    PyObject *flag = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
    PyObject *cpus = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * sizeof(int32_t)));
    PyObject *result = NULL;
    if (!latency || !work || !evid || !flag || !cpus) goto done;
    pq_cycle_config cfg = {
        .period_ns = period_ns, .cycles = cycles, .warmup = warmup, .cpu = cpu, .try_fifo = try_fifo,
        .fifo_priority = priority, .workload_blocks = blocks, .evidence_every = every,
        .hook = every ? pq_evidence_hook : NULL, .hook_ctx = ev,
    };
    pq_cycle_samples samples = {
        (int64_t *)PyBytes_AS_STRING(latency), (int64_t *)PyBytes_AS_STRING(work),
        (int64_t *)PyBytes_AS_STRING(evid), (uint8_t *)PyBytes_AS_STRING(flag), (int32_t *)PyBytes_AS_STRING(cpus),
    };
    pq_cycle_report report;
    memset(&report, 0, sizeof report);
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = pq_cycle_run(&cfg, &samples, &report);
    Py_END_ALLOW_THREADS
    if (status == PQ_CYCLE_EINVAL) {
        PyErr_SetString(PyExc_ValueError, "control-cycle configuration out of range");
        goto done;
    }
    if (status == PQ_CYCLE_ENOMEM) {
        PyErr_NoMemory();
        goto done;
    }
    if (status != PQ_CYCLE_OK) {
        PyErr_Format(PyExc_RuntimeError, "control-cycle loop failed: status %d, clock errno %d, hook %d", status,
                     report.clock_errno, report.hook_status);
        goto done;
    }
    uint8_t last[PQ_EVIDENCE_MAX_REPORT];
    size_t last_len = ev ? pq_evidence_last(ev, last, sizeof last) : 0;
    result = Py_BuildValue(
        "{sOsOsOsOsOsisisisisisisisisLsLsLsKsy#}", "latency_ns", latency, "work_ns", work, "evidence_ns", evid,
        "evidence", flag, "cpu", cpus, "affinity_errno", report.affinity_errno, "affinity_cpus",
        report.affinity_cpus, "affinity_is_target", report.affinity_is_target, "fifo_errno", report.fifo_errno,
        "policy", report.policy, "priority", report.priority, "off_target_cycles", (int)report.off_target_cycles,
        "overruns", (int)report.overruns, "voluntary_switches", (long long)report.voluntary_switches,
        "involuntary_switches", (long long)report.involuntary_switches, "wall_ns", (long long)report.wall_ns,
        "workload_checksum", (unsigned long long)report.workload_checksum, "last_report", (const char *)last,
        (Py_ssize_t)last_len);
done:
    Py_XDECREF(latency);
    Py_XDECREF(work);
    Py_XDECREF(evid);
    Py_XDECREF(flag);
    Py_XDECREF(cpus);
    pq_evidence_free(ev);
    return result;
}

static PyObject *py_reports(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *spec, *stamps;
    if (!PyArg_ParseTuple(args, "OO", &spec, &stamps)) return NULL;
    PyObject *seq = PySequence_Fast(stamps, "timestamps must be a sequence");
    if (!seq) return NULL;
    pq_evidence *ev = new_evidence(spec);
    if (!ev) {
        Py_DECREF(seq);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(n);
    uint8_t anchor[32];
    pq_evidence_anchor(ev, anchor);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        unsigned long long stamp = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (PyErr_Occurred()) {
            Py_CLEAR(out);
            break;
        }
        int rc = pq_evidence_hook(ev, (uint64_t)(i + 1), (uint64_t)stamp);
        uint8_t buf[PQ_EVIDENCE_MAX_REPORT];
        size_t len = rc == 0 ? pq_evidence_last(ev, buf, sizeof buf) : 0;
        if (rc != 0 || len == 0) {
            PyErr_Format(PyExc_RuntimeError, "the device path failed on report %zd (status %d)", i + 1, rc);
            Py_CLEAR(out);
            break;
        }
        PyObject *item = PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)len);
        if (!item) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, item);
    }
    pq_evidence_free(ev);
    Py_DECREF(seq);
    if (!out) return NULL;
    PyObject *result = Py_BuildValue("(Oy#)", out, (const char *)anchor, (Py_ssize_t)32);
    Py_DECREF(out);
    return result;
}

static PyObject *py_time_reports(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *spec;
    unsigned int n;
    if (!PyArg_ParseTuple(args, "OI", &spec, &n)) return NULL;
    pq_evidence *ev = new_evidence(spec);
    if (!ev) return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((size_t)n * sizeof(int64_t)));
    int rc = 0;
    unsigned int i = 0;
    if (out) {
        int64_t *ns = (int64_t *)PyBytes_AS_STRING(out);
        Py_BEGIN_ALLOW_THREADS
        for (; i < n && rc == 0; i++) {
            struct timespec a, b;
            clock_gettime(CLOCK_MONOTONIC, &a);
            rc = pq_evidence_hook(ev, (uint64_t)i + 1, (uint64_t)a.tv_sec * 1000000000ULL + (uint64_t)a.tv_nsec);
            clock_gettime(CLOCK_MONOTONIC, &b);
            ns[i] = ((int64_t)b.tv_sec - (int64_t)a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
        }
        Py_END_ALLOW_THREADS
    }
    pq_evidence_free(ev);
    if (out && rc != 0) {
        Py_CLEAR(out);
        PyErr_Format(PyExc_RuntimeError, "the device path failed on report %u (status %d)", i, rc);
    }
    return out;
}

static PyObject *py_scan(PyObject *self, PyObject *args) {
    (void)self;
    unsigned int blocks, scans;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "IIK", &blocks, &scans, &seed)) return NULL;
    pq_scan_state *s = pq_scan_new(blocks, seed);
    if (!s) {
        PyErr_SetString(PyExc_ValueError, "blocks must be >= 1");
        return NULL;
    }
    uint64_t checksum = 0;
    for (unsigned int i = 0; i < scans; i++) checksum ^= pq_scan_once(s);
    pq_scan_free(s);
    return PyLong_FromUnsignedLongLong(checksum);
}

static PyObject *py_clock_pairs(PyObject *self, PyObject *args) {
    (void)self;
    unsigned int n;
    if (!PyArg_ParseTuple(args, "I", &n)) return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((size_t)n * sizeof(int64_t)));
    if (!out) return NULL;
    Py_BEGIN_ALLOW_THREADS
    pq_clock_pairs((int64_t *)PyBytes_AS_STRING(out), n);
    Py_END_ALLOW_THREADS
    return out;
}

static PyMethodDef methods[] = {
    {"run", (PyCFunction)(void (*)(void))py_run, METH_VARARGS | METH_KEYWORDS,
     "run(period_ns, cycles, warmup, cpu, try_fifo, fifo_priority, workload_blocks, evidence_every, evidence=None)"
     " -> dict: the periodic loop on one pinned core; per-cycle samples as bytes"},
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
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddIntConstant(m, "EVIDENCE_PLACEHOLDER", PQ_EVIDENCE_IS_PLACEHOLDER) < 0 ||
        PyModule_AddIntConstant(m, "ONE_TAG", PQ_EVIDENCE_ONE_TAG) < 0 ||
        PyModule_AddIntConstant(m, "TWO_TAGS", PQ_EVIDENCE_TWO_TAGS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
