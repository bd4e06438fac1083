/* CPython binding of the Thread/MRP simulator core (sim_core.h): argument conversion, the GIL, signals, and
 * the mapping of sim_status codes to Python (CoreError(code, name, message), turned into
 * pqlab.transport.core.SimulationError by the Python API). The simulation itself lives in sim_core.c.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

#include "sim_core.h"

#define RUNS_PER_SIGNAL_CHECK 256  /* runs simulated without the GIL between two checks for Ctrl-C */
#define SIM_BINDING_MAX_UNITS 1000000      /* plan sizes the binding accepts (reference.validate: the same) */
#define SIM_BINDING_MAX_FRAMES 100000000

static PyObject *CoreError;

static PyObject *raise_status(sim_status status) {
    PyObject *args = Py_BuildValue("iss", (int)status, sim_error_name(status), sim_strerror(status));
    if (args) { PyErr_SetObject(CoreError, args); Py_DECREF(args); }
    return NULL;
}

/* One Python int into a C int: a value outside -(2^31-1) .. 2^31-1 is the plan error `refused` (the code
 * sim_validate gives that field), never a wrapped value; a non-integer is a TypeError. */
static int to_int(PyObject *item, int *out, sim_status refused) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow || v < -2147483647LL || v > 2147483647LL) { raise_status(refused); return -1; }
    *out = (int)v;
    return 0;
}

static int seq_to_ints(PyObject *obj, int *out, Py_ssize_t n, const char *name, sim_status refused) {
    PyObject *fast = PySequence_Fast(obj, name);
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) { Py_DECREF(fast); raise_status(refused); return -1; }
    for (Py_ssize_t i = 0; i < n; i++)
        if (to_int(PySequence_Fast_GET_ITEM(fast, i), &out[i], refused)) { Py_DECREF(fast); return -1; }
    Py_DECREF(fast);
    return 0;
}

static int fill_plan(SimPlan *p, PyObject *ints, PyObject *floats, PyObject *unit_len, PyObject *psdu,
                     PyObject *mode, PyObject *first, PyObject *nunits, PyObject *bitmap, PyObject *request,
                     PyObject *rejected, PyObject *ack_unit) {
    PyObject *fi = PySequence_Fast(ints, "ints"), *ff = PySequence_Fast(floats, "floats");
    if (!fi || !ff) { Py_XDECREF(fi); Py_XDECREF(ff); return -1; }
    if (PySequence_Fast_GET_SIZE(fi) != MI_COUNT || PySequence_Fast_GET_SIZE(ff) != MF_COUNT) {
        PyErr_SetString(PyExc_ValueError, "model vectors have the wrong length");
        Py_DECREF(fi); Py_DECREF(ff);
        return -1;
    }
    /* each conversion checked before the next C API call: never one with an error pending */
    int failed = 0;
    for (int i = 0; i < MI_COUNT && !failed; i++) {
        int overflow = 0;
        p->m[i] = PyLong_AsLongLongAndOverflow(PySequence_Fast_GET_ITEM(fi, i), &overflow);
        if (p->m[i] == -1 && PyErr_Occurred()) failed = 1;
        else if (overflow) { raise_status(SIM_ERR_MODEL_RANGE); failed = 1; }   /* beyond int64: out of range */
    }
    for (int i = 0; i < MF_COUNT && !failed; i++) {
        p->f[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(ff, i));
        if (p->f[i] == -1.0 && PyErr_Occurred()) failed = 1;
    }
    Py_DECREF(fi); Py_DECREF(ff);
    if (failed) return -1;
    Py_ssize_t nu = PySequence_Size(unit_len), np = PySequence_Size(psdu);
    if (nu < 0 || np < 0) return -1;
    if (nu == 0 || np == 0) { raise_status(SIM_ERR_PLAN_EMPTY); return -1; }
    if (nu > SIM_BINDING_MAX_UNITS || np > SIM_BINDING_MAX_FRAMES) { raise_status(SIM_ERR_CAPACITY); return -1; }
    p->n_units = (int)nu;
    p->n_psdu = (int)np;
    p->unit_len = malloc(sizeof(int) * (size_t)nu);
    p->unit_off = malloc(sizeof(int) * (size_t)nu);
    p->psdu = malloc(sizeof(int) * (size_t)np);
    if (!p->unit_len || !p->unit_off || !p->psdu) { PyErr_NoMemory(); return -1; }
    if (seq_to_ints(unit_len, p->unit_len, nu, "unit_len", SIM_ERR_PLAN_UNITS) ||
        seq_to_ints(psdu, p->psdu, np, "psdu", SIM_ERR_PLAN_PSDU) ||
        seq_to_ints(mode, p->mode, 4, "mode", SIM_ERR_PLAN_REFERENCE) ||
        seq_to_ints(first, p->first_unit, 4, "first_unit", SIM_ERR_PLAN_REFERENCE) ||
        seq_to_ints(nunits, p->n_msg_units, 4, "n_units", SIM_ERR_PLAN_REFERENCE) ||
        seq_to_ints(bitmap, p->bitmap_unit, 4, "bitmap_unit", SIM_ERR_PLAN_REFERENCE) ||
        seq_to_ints(request, p->request_unit, 4, "request_unit", SIM_ERR_PLAN_REFERENCE) ||
        seq_to_ints(rejected, p->rejected, 4, "rejected", SIM_ERR_PLAN_REFERENCE) ||
        to_int(ack_unit, &p->ack_unit, SIM_ERR_PLAN_REFERENCE))
        return -1;
    int64_t off = 0;
    for (Py_ssize_t i = 0; i < nu; i++) {   /* clamped into int: sim_validate refuses any offset that was clamped */
        p->unit_off[i] = (int)(off > 2147483647 ? 2147483647 : off < 0 ? -1 : off);
        off += p->unit_len[i];
    }
    return 0;
}

static PyObject *run_batch(PyObject *self, PyObject *args) {
    PyObject *ints, *floats, *unit_len, *psdu, *mode, *first, *nunits, *bitmap, *request, *rejected, *run0_obj;
    PyObject *ack_unit;
    unsigned long long seed, run0;
    Py_ssize_t count;
    int want_trace = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOKOn|p", &ints, &floats, &unit_len, &psdu, &mode, &first, &nunits, &bitmap,
                          &request, &rejected, &ack_unit, &seed, &run0_obj, &count, &want_trace))
        return NULL;
    /* "K" would wrap 2^64 to run 0 silently; an out-of-range index (negative or >= 2^64) is a range error */
    run0 = PyLong_AsUnsignedLongLong(run0_obj);
    if (run0 == (unsigned long long)-1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return NULL;
        PyErr_Clear();
        return raise_status(SIM_ERR_RUN_RANGE);
    }
    if (want_trace && count != 1) { PyErr_SetString(PyExc_ValueError, "a trace needs count == 1"); return NULL; }
    if (count < 0) { PyErr_SetString(PyExc_ValueError, "count must be >= 0"); return NULL; }
    if (run0 >= (1ULL << 63) || (unsigned long long)count > (1ULL << 63) - run0) return raise_status(SIM_ERR_RUN_RANGE);
    /* the batch's bytes, checked before they are computed */
    if ((size_t)count > (size_t)PY_SSIZE_T_MAX / (SIM_RESULT_FIELDS * sizeof(int64_t))) return raise_status(SIM_ERR_CAPACITY);
    SimPlan p;
    memset(&p, 0, sizeof p);
    PyObject *out = NULL;
    if (fill_plan(&p, ints, floats, unit_len, psdu, mode, first, nunits, bitmap, request, rejected, ack_unit)) goto done;
    p.seed = (uint64_t)seed;
    sim_status status = sim_validate(&p);
    if (status != SIM_OK) { raise_status(status); goto done; }
    out = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)(SIM_RESULT_FIELDS * sizeof(int64_t)));
    if (!out) goto done;
    int64_t *res = (int64_t *)PyBytes_AS_STRING(out);
    int64_t *trace = NULL;
    int n_trace = 0;
    for (Py_ssize_t start = 0; start < count && status == SIM_OK; start += RUNS_PER_SIGNAL_CHECK) {
        Py_ssize_t stop = start + RUNS_PER_SIGNAL_CHECK < count ? start + RUNS_PER_SIGNAL_CHECK : count;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = start; i < stop && status == SIM_OK; i++)
            status = sim_run(&p, (uint64_t)run0 + (uint64_t)i, res + SIM_RESULT_FIELDS * i,
                             want_trace ? &trace : NULL, &n_trace);
        Py_END_ALLOW_THREADS
        if (status == SIM_OK && PyErr_CheckSignals() < 0) { Py_CLEAR(out); free(trace); goto done; }
    }
    if (status != SIM_OK) { Py_CLEAR(out); free(trace); raise_status(status); goto done; }
    if (want_trace) {
        PyObject *tr = PyBytes_FromStringAndSize((const char *)trace, (Py_ssize_t)n_trace * 4 * (Py_ssize_t)sizeof(int64_t));
        free(trace);
        PyObject *pair = tr ? PyTuple_Pack(2, out, tr) : NULL;
        Py_XDECREF(tr);
        Py_DECREF(out);
        out = pair;
    }
done:
    free(p.unit_len); free(p.unit_off); free(p.psdu);
    return out;
}

static PyObject *error_names(PyObject *self, PyObject *unused) {
    (void)self; (void)unused;
    PyObject *names = PyTuple_New(SIM_ERR_COUNT);
    if (!names) return NULL;
    for (int i = 0; i < SIM_ERR_COUNT; i++) {
        PyObject *name = PyUnicode_FromString(sim_error_name((sim_status)i));
        if (!name) { Py_DECREF(names); return NULL; }
        PyTuple_SET_ITEM(names, i, name);
    }
    return names;
}

static PyMethodDef methods[] = {
    {"run_batch", run_batch, METH_VARARGS, "Simulate runs [run0, run0+count) of a plan; 8 int64 per run."},
    {"error_names", error_names, METH_NOARGS, "The names of the C core's sim_status codes, by value."},
    {NULL, NULL, 0, NULL},
};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_core", "Thread/MRP handshake simulator core.", -1, methods,
                                     NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    CoreError = PyErr_NewException("pqlab.transport._core.CoreError", NULL, NULL);
    if (!CoreError || PyModule_AddObject(m, "CoreError", CoreError) < 0) { Py_XDECREF(CoreError); Py_DECREF(m); return NULL; }
    return m;
}
