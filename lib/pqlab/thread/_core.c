/* CPython binding of the Thread/MRP simulator core (sim_core.h): argument conversion, the GIL, signals, and
 * the mapping of sim_status codes to Python (CoreError(code, name, message), turned into
 * pqlab.thread.core.SimulationError by the Python API). The simulation itself lives in sim_core.c.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

#include "sim_core.h"

#define RUNS_PER_SIGNAL_CHECK 256  /* runs simulated without the GIL between two checks for Ctrl-C */

static PyObject *CoreError;

static PyObject *raise_status(sim_status status) {
    PyObject *args = Py_BuildValue("iss", (int)status, sim_error_name(status), sim_strerror(status));
    if (args) { PyErr_SetObject(CoreError, args); Py_DECREF(args); }
    return NULL;
}

static int seq_to_ints(PyObject *obj, int *out, Py_ssize_t n, const char *name) {
    PyObject *fast = PySequence_Fast(obj, name);
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd values", name, n);
        Py_DECREF(fast);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(fast); return -1; }
        if (v < -2147483647L || v > 2147483647L) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] out of range", name, i);
            Py_DECREF(fast);
            return -1;
        }
        out[i] = (int)v;
    }
    Py_DECREF(fast);
    return 0;
}

static int fill_plan(SimPlan *p, PyObject *ints, PyObject *floats, PyObject *unit_len, PyObject *psdu,
                     PyObject *mode, PyObject *first, PyObject *nunits, PyObject *bitmap, PyObject *request,
                     PyObject *rejected) {
    PyObject *fi = PySequence_Fast(ints, "ints"), *ff = PySequence_Fast(floats, "floats");
    if (!fi || !ff) { Py_XDECREF(fi); Py_XDECREF(ff); return -1; }
    if (PySequence_Fast_GET_SIZE(fi) != MI_COUNT || PySequence_Fast_GET_SIZE(ff) != MF_COUNT) {
        PyErr_SetString(PyExc_ValueError, "model vectors have the wrong length");
        Py_DECREF(fi); Py_DECREF(ff);
        return -1;
    }
    for (int i = 0; i < MI_COUNT; i++) p->m[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fi, i));
    for (int i = 0; i < MF_COUNT; i++) p->f[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(ff, i));
    Py_DECREF(fi); Py_DECREF(ff);
    if (PyErr_Occurred()) return -1;
    Py_ssize_t nu = PySequence_Size(unit_len), np = PySequence_Size(psdu);
    if (nu < 0 || np < 0) return -1;
    if (nu == 0 || np == 0 || nu > 1000000 || np > 100000000) { raise_status(SIM_ERR_PLAN_EMPTY); return -1; }
    p->n_units = (int)nu;
    p->n_psdu = (int)np;
    p->unit_len = malloc(sizeof(int) * (size_t)nu);
    p->unit_off = malloc(sizeof(int) * (size_t)nu);
    p->psdu = malloc(sizeof(int) * (size_t)np);
    if (!p->unit_len || !p->unit_off || !p->psdu) { PyErr_NoMemory(); return -1; }
    if (seq_to_ints(unit_len, p->unit_len, nu, "unit_len") || seq_to_ints(psdu, p->psdu, np, "psdu") ||
        seq_to_ints(mode, p->mode, 4, "mode") || seq_to_ints(first, p->first_unit, 4, "first_unit") ||
        seq_to_ints(nunits, p->n_msg_units, 4, "n_units") || seq_to_ints(bitmap, p->bitmap_unit, 4, "bitmap_unit") ||
        seq_to_ints(request, p->request_unit, 4, "request_unit") || seq_to_ints(rejected, p->rejected, 4, "rejected"))
        return -1;
    int64_t off = 0;
    for (Py_ssize_t i = 0; i < nu; i++) { p->unit_off[i] = (int)(off < 2147483647 ? off : 2147483647); off += p->unit_len[i]; }
    return 0;
}

static PyObject *run_batch(PyObject *self, PyObject *args) {
    PyObject *ints, *floats, *unit_len, *psdu, *mode, *first, *nunits, *bitmap, *request, *rejected, *run0_obj;
    int ack_unit;
    unsigned long long seed, run0;
    Py_ssize_t count;
    int want_trace = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOiKOn|p", &ints, &floats, &unit_len, &psdu, &mode, &first, &nunits, &bitmap,
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
    SimPlan p;
    memset(&p, 0, sizeof p);
    PyObject *out = NULL;
    if (fill_plan(&p, ints, floats, unit_len, psdu, mode, first, nunits, bitmap, request, rejected)) goto done;
    p.ack_unit = ack_unit;
    p.seed = (uint64_t)seed;
    sim_status status = sim_validate(&p);
    if (status != SIM_OK) { raise_status(status); goto done; }
    out = PyBytes_FromStringAndSize(NULL, count * SIM_RESULT_FIELDS * (Py_ssize_t)sizeof(int64_t));
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
    CoreError = PyErr_NewException("pqlab.thread._core.CoreError", NULL, NULL);
    if (!CoreError || PyModule_AddObject(m, "CoreError", CoreError) < 0) { Py_XDECREF(CoreError); Py_DECREF(m); return NULL; }
    return m;
}
