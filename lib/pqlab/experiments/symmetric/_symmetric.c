/* CPython binding of sym_timing (pqlab.experiments._symmetric): Table I's symmetric operations timed in C.
 *
 * Every integer argument is range-checked as a Python int before any conversion (pqlab_binding.h), the output
 * buffer's size is checked before it is computed, no C API call is made with an exception pending, and failures
 * raise pqlab.errors.SymmetricTimingError naming the argument, with the loop's sym_status name as its code. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <openssl/crypto.h>

#include "pqlab_binding.h"
#include "sym_timing.h"

static PyObject *SymmetricTimingError;

/* Raise SymmetricTimingError(message, field=field, code=<status name>) (MemoryError for SYM_E_NOMEM); NULL. */
static PyObject *raise_status(sym_status status, const char *field, const char *message) {
    if (status == SYM_E_NOMEM) return PyErr_NoMemory();
    return pq_raise(SymmetricTimingError, Py_BuildValue("{s:s,s:s}", "field", field, "code", sym_status_name(status)),
                    message ? message : sym_status_name(status));
}

static PyObject *invalid(const char *field, const char *message) {
    return raise_status(SYM_E_ARGUMENT, field, message);
}

/* An integer in [low, high] (a Python int of any size is range-checked, never wrapped), else SymmetricTimingError. */
static int bounded(PyObject *obj, long long low, long long high, const char *field, long long *out) {
    return pq_bounded_arg(obj, low, high, field, out, invalid);
}

static int parse_inputs(PyObject *key, PyObject *message, PyObject *sibling, sym_inputs *in) {
    if (!PyBytes_Check(key) || PyBytes_GET_SIZE(key) < 1 || PyBytes_GET_SIZE(key) > SYM_KEY_MAX) {
        raise_status(SYM_E_ARGUMENT, "key", "must be bytes of 1 to 128 octets");
        return -1;
    }
    if (!PyBytes_Check(message) || PyBytes_GET_SIZE(message) > SYM_MESSAGE_MAX) {
        raise_status(SYM_E_ARGUMENT, "message", "must be bytes of at most 65536 octets");
        return -1;
    }
    if (!PyBytes_Check(sibling) || PyBytes_GET_SIZE(sibling) != SYM_DIGEST_OCTETS) {
        raise_status(SYM_E_ARGUMENT, "sibling", "must be bytes of 32 octets");
        return -1;
    }
    in->key = (const uint8_t *)PyBytes_AS_STRING(key);
    in->key_len = (size_t)PyBytes_GET_SIZE(key);
    in->message = (const uint8_t *)PyBytes_AS_STRING(message);
    in->message_len = (size_t)PyBytes_GET_SIZE(message);
    in->sibling = (const uint8_t *)PyBytes_AS_STRING(sibling);
    return 0;
}

static PyObject *compute(PyObject *module, PyObject *args) {
    PyObject *op_obj, *key, *message, *sibling;
    long long op;
    sym_inputs in;
    uint8_t out[SYM_DIGEST_OCTETS];
    sym_status s;
    (void)module;
    if (!PyArg_ParseTuple(args, "OOOO", &op_obj, &key, &message, &sibling)) return NULL;
    if (bounded(op_obj, 0, SYM_OP_COUNT - 1, "op", &op) < 0 || parse_inputs(key, message, sibling, &in) < 0)
        return NULL;
    s = sym_compute((sym_op)op, &in, out);
    if (s != SYM_OK) return raise_status(s, "op", NULL);
    return PyBytes_FromStringAndSize((const char *)out, SYM_DIGEST_OCTETS);
}

static PyObject *measure(PyObject *module, PyObject *args) {
    PyObject *ops_obj, *key, *message, *sibling, *batch_obj, *samples_obj, *fast, *out;
    sym_op ops[SYM_OPS_MAX];
    long long batch, samples;
    Py_ssize_t n_ops;
    sym_inputs in;
    sym_status s;
    (void)module;
    if (!PyArg_ParseTuple(args, "OOOOOO", &ops_obj, &key, &message, &sibling, &batch_obj, &samples_obj)) return NULL;
    if (bounded(batch_obj, 1, SYM_BATCH_MAX, "batch", &batch) < 0 ||
        bounded(samples_obj, 1, SYM_SAMPLES_MAX, "samples", &samples) < 0 ||
        parse_inputs(key, message, sibling, &in) < 0)
        return NULL;
    if ((fast = PySequence_Fast(ops_obj, "ops must be a sequence of operation numbers")) == NULL) return NULL;
    n_ops = PySequence_Fast_GET_SIZE(fast);
    if (n_ops < 1 || n_ops > SYM_OPS_MAX) {
        Py_DECREF(fast);
        return raise_status(SYM_E_ARGUMENT, "ops", "must hold 1 to 16 operations");
    }
    for (Py_ssize_t i = 0; i < n_ops; i++) {
        long long op;
        if (bounded(PySequence_Fast_GET_ITEM(fast, i), 0, SYM_OP_COUNT - 1, "ops", &op) < 0) {
            Py_DECREF(fast);
            return NULL;
        }
        ops[i] = (sym_op)op;
    }
    Py_DECREF(fast);
    /* samples <= 2^24 and n_ops <= 16: the product times 8 octets stays far below PY_SSIZE_T_MAX; checked anyway */
    if ((size_t)samples > (size_t)PY_SSIZE_T_MAX / sizeof(double) / (size_t)n_ops)
        return raise_status(SYM_E_ARGUMENT, "samples", "too many samples for one buffer");
    out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((size_t)samples * (size_t)n_ops * sizeof(double)));
    if (out == NULL) return NULL;
    Py_BEGIN_ALLOW_THREADS
    s = sym_measure(ops, (size_t)n_ops, &in, (size_t)batch, (size_t)samples, (double *)PyBytes_AS_STRING(out));
    Py_END_ALLOW_THREADS
    if (s != SYM_OK) {
        Py_DECREF(out);
        return raise_status(s, "measure", NULL);
    }
    return out;
}

static PyObject *op_names(PyObject *module, PyObject *unused) {
    PyObject *out = PyTuple_New(SYM_OP_COUNT);
    (void)module;
    (void)unused;
    if (out == NULL) return NULL;
    for (int i = 0; i < SYM_OP_COUNT; i++) {
        PyObject *name = PyUnicode_FromString(sym_op_name((sym_op)i));
        if (name == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, name);
    }
    return out;
}

static PyObject *openssl_version(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    return PyUnicode_FromString(OpenSSL_version(OPENSSL_VERSION));
}

static PyMethodDef methods[] = {
    {"compute", compute, METH_VARARGS, "compute(op, key, message, sibling) -> the 32-octet output of one call"},
    {"measure", measure, METH_VARARGS,
     "measure(ops, key, message, sibling, batch, samples) -> samples x len(ops) float64 ns per call (bytes)"},
    {"op_names", op_names, METH_NOARGS, "the operation names in enum order"},
    {"openssl_version", openssl_version, METH_NOARGS, "the libcrypto this module runs against"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_symmetric",
                                        "AMORT-V1 Table I symmetric operations timed in a C loop (sym_timing)", -1,
                                        methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__symmetric(void) {
    PyObject *errors = PyImport_ImportModule("pqlab.errors");
    if (errors == NULL) return NULL;
    SymmetricTimingError = PyObject_GetAttrString(errors, "SymmetricTimingError");
    Py_DECREF(errors);
    if (SymmetricTimingError == NULL) return NULL;
    return PyModule_Create(&module_def);
}
