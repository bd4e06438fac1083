/*
 * _amort_native.c — the thin CPython binding of amort_core (pqlab.amort.fastpath.native._amort_native).
 *
 * It converts Python objects to C arguments, releases the GIL around batch work, and maps every
 * amort_status to the exception the reference model raises: the 19 protocol codes to
 * pqlab.amort.errors.AmortError with the Code of the same name, argument errors to
 * pqlab.errors.PqlabError, misuse of the batch interface to pqlab.amort.errors.FastpathError.
 * The Python-facing contract is documented in pqlab/amort/fastpath/__init__.py.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amort_core.h"
#include "pqlab_binding.h"

static PyObject *AmortError, *CodeEnum, *FastpathError, *PqlabError;

/* ---- errors ----------------------------------------------------------------------------------------- */

/* Raise the exception for status, naming field; returns NULL. */
static PyObject *raise_status(amort_status status, const char *field, const char *message) {
    PyObject *code, *args = NULL, *kwargs;
    const char *text = message ? message : amort_strerror(status);
    if (status == AMORT_E_NOMEM) return PyErr_NoMemory();
    kwargs = Py_BuildValue("{s:s}", "field", field);
    if (kwargs == NULL) return NULL;
    if (status < 1 || status > AMORT_PROTOCOL_CODES) {
        return pq_raise((status == AMORT_E_ARGUMENT || status == AMORT_E_CRYPTO) ? PqlabError : FastpathError, kwargs,
                        text);
    }
    code = PyObject_CallFunction(CodeEnum, "s", amort_status_name(status));
    if (code != NULL) args = Py_BuildValue("(Os)", code, text);
    Py_XDECREF(code);
    return pq_raise_with(AmortError, args, kwargs);
}

/* ---- argument conversion ------------------------------------------------------------------------------ */

/* bytes or bytearray of exactly n octets (codec.Fixed), else PqlabError naming field. */
static int octets(PyObject *obj, size_t n, const char *field, uint8_t *out) {
    const char *data;
    Py_ssize_t len;
    if (PyBytes_Check(obj)) {
        data = PyBytes_AS_STRING(obj);
        len = PyBytes_GET_SIZE(obj);
    } else if (PyByteArray_Check(obj)) {
        data = PyByteArray_AS_STRING(obj);
        len = PyByteArray_GET_SIZE(obj);
    } else {
        len = -1;
        data = NULL;
    }
    if (len < 0 || (size_t)len != n) {
        char message[64];
        snprintf(message, sizeof message, "must be %zu octets", n);
        raise_status(AMORT_E_ARGUMENT, field, message);
        return 0;
    }
    memcpy(out, data, n);
    return 1;
}

/* An int (not bool) in [0, 2^bits) (codec.Uint), else the given status naming field. */
static int uint_arg(PyObject *obj, unsigned bits, const char *field, amort_status status, uint64_t *out) {
    unsigned long long v;
    if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        v = PyLong_AsUnsignedLongLong(obj);
        if (!(v == (unsigned long long)-1 && PyErr_Occurred()) && (bits == 64 || v < (1ULL << bits))) {
            *out = v;
            return 1;
        }
        PyErr_Clear();
    }
    {
        char message[64];
        snprintf(message, sizeof message, "must be an integer in [0, 2^%u)", bits);
        raise_status(status, field, message);
    }
    return 0;
}

static PyObject *hex_of(const uint8_t *p, size_t n) {
    static const char digits[] = "0123456789abcdef";
    char buf[2 * AMORT_HASH_OCTETS];
    for (size_t i = 0; i < n; i++) {
        buf[2 * i] = digits[p[i] >> 4];
        buf[2 * i + 1] = digits[p[i] & 15];
    }
    return PyUnicode_FromStringAndSize(buf, (Py_ssize_t)(2 * n));
}

/* ---- Controller ------------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    amort_controller *ctl;
    int busy; /* set while the GIL is released around batch work */
} ControllerObject;

static int controller_free_to_use(ControllerObject *self) {
    if (self->ctl == NULL) {
        raise_status(AMORT_E_STATE, "controller", "not initialised");
        return 0;
    }
    if (self->busy) {
        raise_status(AMORT_E_STATE, "controller", "in use by another thread");
        return 0;
    }
    return 1;
}

/* (wire_format, variant) octets into options, else PqlabError naming the field. */
static int options_arg(PyObject *wire_o, PyObject *variant_o, amort_options *o) {
    uint64_t wire, variant;
    amort_options_default(o);
    if (!uint_arg(wire_o, 1, "wire_format", AMORT_E_ARGUMENT, &wire) ||
        !uint_arg(variant_o, 1, "variant", AMORT_E_ARGUMENT, &variant))
        return 0;
    o->wire_format = (uint8_t)wire;
    o->variant = (uint8_t)variant;
    return 1;
}

static int Controller_init(ControllerObject *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"controller_id", "sig_alg", "wire_format", "variant", "max_report_age", NULL};
    PyObject *cid, *alg_o, *wire_o, *variant_o, *age_o;
    uint64_t sig_alg, age;
    uint8_t id[AMORT_ID_OCTETS];
    amort_options options;
    amort_status s;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOO", names, &cid, &alg_o, &wire_o, &variant_o, &age_o))
        return -1;
    if (!octets(cid, AMORT_ID_OCTETS, "controller_id", id) || !uint_arg(alg_o, 8, "sig_alg", AMORT_SIG_FAIL, &sig_alg) ||
        !options_arg(wire_o, variant_o, &options) || !uint_arg(age_o, 64, "max_report_age", AMORT_E_ARGUMENT, &age))
        return -1;
    options.max_report_age = age;
    if (self->ctl != NULL) {
        raise_status(AMORT_E_STATE, "controller", "already initialised");
        return -1;
    }
    s = amort_controller_new_ex(&self->ctl, id, (uint8_t)sig_alg, &options);
    if (s != AMORT_OK) {
        raise_status(s, s == AMORT_SIG_FAIL ? "sig_alg" : "options", NULL);
        return -1;
    }
    return 0;
}

static void Controller_dealloc(ControllerObject *self) {
    amort_controller_free(self->ctl);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Controller_register_epoch(ControllerObject *self, PyObject *args) {
    PyObject *dev, *epoch_o, *key, *tag_o, *expiry_o, *policy_o, *not_before_o;
    uint8_t dev_id[AMORT_ID_OCTETS], k_evid[AMORT_KEY_OCTETS];
    uint64_t epoch, tag_len, expiry, policy_id, not_before;
    amort_status s;
    if (!controller_free_to_use(self)) return NULL;
    if (!PyArg_ParseTuple(args, "OOOOOOO", &dev, &epoch_o, &key, &tag_o, &expiry_o, &policy_o, &not_before_o))
        return NULL;
    if (!octets(dev, AMORT_ID_OCTETS, "dev_id", dev_id) || !uint_arg(epoch_o, 32, "epoch", AMORT_E_ARGUMENT, &epoch) ||
        !octets(key, AMORT_KEY_OCTETS, "k_evid", k_evid) ||
        !uint_arg(tag_o, 8, "tag_len", AMORT_TAGLEN_DOWNGRADE, &tag_len) ||
        !uint_arg(expiry_o, 64, "expiry", AMORT_E_ARGUMENT, &expiry) ||
        !uint_arg(policy_o, 16, "policy_id", AMORT_E_ARGUMENT, &policy_id) ||
        !uint_arg(not_before_o, 64, "not_before", AMORT_E_ARGUMENT, &not_before))
        return NULL;
    s = amort_controller_register_epoch(self->ctl, dev_id, (uint32_t)epoch, k_evid, (uint8_t)tag_len, expiry,
                                           (uint16_t)policy_id, not_before);
    OPENSSL_cleanse(k_evid, sizeof k_evid);
    if (s != AMORT_OK) {
        const char *field = s == AMORT_EPOCH_STALE ? "epoch" : s == AMORT_TAGLEN_DOWNGRADE ? "tag_len"
                            : s == AMORT_E_ARGUMENT ? "epoch" : "dev_id";
        return raise_status(s, field, NULL);
    }
    Py_RETURN_NONE;
}

static PyObject *Controller_revoke(ControllerObject *self, PyObject *dev) {
    uint8_t dev_id[AMORT_ID_OCTETS];
    amort_status s;
    if (!controller_free_to_use(self) || !octets(dev, AMORT_ID_OCTETS, "dev_id", dev_id)) return NULL;
    s = amort_controller_revoke(self->ctl, dev_id);
    if (s != AMORT_OK) return raise_status(s, "dev_id", NULL);
    Py_RETURN_NONE;
}

/* (codes: bytes, fields: {index: "Field@offset"}) for n verdicts. */
static PyObject *verdict_result(const amort_verdict *v, size_t n) {
    PyObject *codes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n), *fields = PyDict_New(), *out = NULL;
    if (codes == NULL || fields == NULL) goto done;
    for (size_t i = 0; i < n; i++) {
        PyObject *key, *name;
        PyBytes_AS_STRING(codes)[i] = (char)v[i].code;
        if (v[i].code == AMORT_OK) continue;
        name = v[i].offset >= 0
                   ? PyUnicode_FromFormat("%s@%d", amort_field_name((amort_field)v[i].field), (int)v[i].offset)
                   : PyUnicode_FromString(amort_field_name((amort_field)v[i].field));
        key = PyLong_FromSize_t(i);
        if (name == NULL || key == NULL || PyDict_SetItem(fields, key, name) < 0) {
            Py_XDECREF(name);
            Py_XDECREF(key);
            goto done;
        }
        Py_DECREF(name);
        Py_DECREF(key);
    }
    out = PyTuple_Pack(2, codes, fields);
done:
    Py_XDECREF(codes);
    Py_XDECREF(fields);
    return out;
}

static PyObject *ingest_framed(ControllerObject *self, PyObject *batch, amort_verdict *verdicts) {
    Py_buffer view;
    size_t count = 0, bad = 0;
    amort_status s;
    if (PyObject_GetBuffer(batch, &view, PyBUF_SIMPLE) < 0) { /* a non-contiguous memoryview: use a copy */
        PyObject *copy, *result;
        if (!PyMemoryView_Check(batch) || !PyErr_ExceptionMatches(PyExc_BufferError)) return NULL;
        PyErr_Clear();
        if ((copy = PyBytes_FromObject(batch)) == NULL) return NULL;
        result = ingest_framed(self, copy, verdicts);
        Py_DECREF(copy);
        return result;
    }
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    s = amort_controller_ingest_framed(self->ctl, view.buf, (size_t)view.len, verdicts, &count, &bad);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    PyBuffer_Release(&view);
    if (s == AMORT_E_FRAME) {
        char field[48];
        snprintf(field, sizeof field, "batch@%zu", bad);
        return raise_status(s, field, "frame breaks off inside the buffer");
    }
    if (s == AMORT_E_LIMIT) return raise_status(s, "batch", "more than 1024 reports in one batch");
    if (s != AMORT_OK) return raise_status(s, s == AMORT_E_CLOCK ? "now" : "batch", NULL);
    return verdict_result(verdicts, count);
}

static PyObject *ingest_sequence(ControllerObject *self, PyObject *batch, amort_verdict *verdicts) {
    PyObject *seq = PySequence_Fast(batch, "a batch is a bytes buffer or a sequence of reports"), *result = NULL;
    PyObject **owned = NULL;
    const uint8_t **ptrs = NULL;
    size_t *lens = NULL, n, held = 0;
    amort_status s;
    if (seq == NULL) return NULL;
    n = (size_t)PySequence_Fast_GET_SIZE(seq);
    if (n > AMORT_BATCH_MAX) {
        Py_DECREF(seq);
        return raise_status(AMORT_E_LIMIT, "batch", "more than 1024 reports in one batch");
    }
    owned = PyMem_Calloc(n ? n : 1, sizeof *owned);
    ptrs = PyMem_Calloc(n ? n : 1, sizeof *ptrs);
    lens = PyMem_Calloc(n ? n : 1, sizeof *lens);
    if (owned == NULL || ptrs == NULL || lens == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* hold a bytes object per report (copies of bytearray / memoryview), so nothing moves without the GIL */
    for (size_t i = 0; i < n; i++, held++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)i);
        if (PyBytes_Check(item)) {
            Py_INCREF(item);
            owned[i] = item;
        } else if (PyByteArray_Check(item) || PyMemoryView_Check(item)) {
            if ((owned[i] = PyBytes_FromObject(item)) == NULL) goto done;
        } else {
            continue; /* not an octet string: TRUNCATED at "Report", as the reference Reader */
        }
        ptrs[i] = (const uint8_t *)PyBytes_AS_STRING(owned[i]);
        lens[i] = (size_t)PyBytes_GET_SIZE(owned[i]);
    }
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    s = amort_controller_ingest(self->ctl, ptrs, lens, n, verdicts);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (s != AMORT_OK) raise_status(s, s == AMORT_E_CLOCK ? "now" : "batch", NULL);
    else result = verdict_result(verdicts, n);
done:
    for (size_t i = 0; i < held; i++) Py_XDECREF(owned[i]);
    PyMem_Free(owned);
    PyMem_Free(ptrs);
    PyMem_Free(lens);
    Py_DECREF(seq);
    return result;
}

/* ingest(batch, now): now is the controller's time in ms; None (no clock) refuses the batch (E_CLOCK). */
static PyObject *Controller_ingest(ControllerObject *self, PyObject *args) {
    amort_verdict verdicts[AMORT_BATCH_MAX];
    PyObject *batch, *now_o;
    uint64_t now = 0;
    if (!controller_free_to_use(self)) return NULL;
    if (!PyArg_ParseTuple(args, "OO", &batch, &now_o)) return NULL;
    if (now_o != Py_None && !uint_arg(now_o, 64, "now", AMORT_E_ARGUMENT, &now)) return NULL;
    amort_controller_set_clock(self->ctl, now_o != Py_None, now);
    if (PyBytes_Check(batch) || PyByteArray_Check(batch) || PyMemoryView_Check(batch))
        return ingest_framed(self, batch, verdicts);
    return ingest_sequence(self, batch, verdicts);
}

static PyObject *Controller_checkpoint_body(ControllerObject *self, PyObject *unused) {
    const uint8_t *body;
    size_t len;
    amort_status s;
    (void)unused;
    if (!controller_free_to_use(self)) return NULL;
    s = amort_controller_checkpoint_body(self->ctl, &body, &len);
    if (s == AMORT_E_STATE) return raise_status(s, "checkpoint_body", "a checkpoint body is awaiting commit");
    if (s != AMORT_OK) return raise_status(s, "checkpoint_body", NULL);
    return PyBytes_FromStringAndSize((const char *)body, (Py_ssize_t)len);
}

static PyObject *Controller_commit(ControllerObject *self, PyObject *signature) {
    const uint8_t *out;
    size_t len;
    amort_status s;
    Py_ssize_t n;
    const char *data;
    if (!controller_free_to_use(self)) return NULL;
    if (!amort_controller_awaiting_commit(self->ctl))
        return raise_status(AMORT_E_STATE, "commit", "no checkpoint body to commit");
    if (PyBytes_Check(signature)) {
        data = PyBytes_AS_STRING(signature);
        n = PyBytes_GET_SIZE(signature);
    } else if (PyByteArray_Check(signature)) {
        data = PyByteArray_AS_STRING(signature);
        n = PyByteArray_GET_SIZE(signature);
    } else {
        n = -1;
        data = NULL;
    }
    if (n < 0 || n > (Py_ssize_t)AMORT_SIGNATURE_MAX)
        return raise_status(AMORT_E_ARGUMENT, "signature", "must be bytes shorter than 65536 octets");
    s = amort_controller_commit(self->ctl, (const uint8_t *)data, (size_t)n, &out, &len);
    if (s != AMORT_OK) return raise_status(s, "commit", NULL);
    return PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)len);
}

static PyObject *device_dict(const amort_device_info *info, int with_id) {
    PyObject *d = Py_BuildValue("{s:O,s:k,s:i,s:i,s:K,s:K,s:K,s:K,s:K}", "revoked", info->revoked ? Py_True : Py_False,
                                "epoch", (unsigned long)info->epoch, "tag_len", (int)info->tag_len, "policy_id",
                                (int)info->policy_id, "expiry", (unsigned long long)info->expiry, "not_before",
                                (unsigned long long)info->not_before, "last_seen",
                                (unsigned long long)info->last_seen, "last_committed",
                                (unsigned long long)info->last_committed, "last_timestamp",
                                (unsigned long long)info->last_timestamp);
    if (d != NULL && with_id) {
        PyObject *hex = hex_of(info->dev_id, AMORT_ID_OCTETS);
        if (hex == NULL || PyDict_SetItemString(d, "dev_id", hex) < 0) Py_CLEAR(d);
        Py_XDECREF(hex);
    }
    return d;
}

static PyObject *Controller_device(ControllerObject *self, PyObject *dev) {
    uint8_t dev_id[AMORT_ID_OCTETS];
    amort_device_info info;
    if (!controller_free_to_use(self) || !octets(dev, AMORT_ID_OCTETS, "dev_id", dev_id)) return NULL;
    if (amort_controller_device(self->ctl, dev_id, &info) != AMORT_OK)
        return raise_status(AMORT_DEVICE_UNKNOWN, "dev_id", "device is not registered");
    return device_dict(&info, 0);
}

static int cmp_info(const void *a, const void *b) {
    return memcmp(((const amort_device_info *)a)->dev_id, ((const amort_device_info *)b)->dev_id, AMORT_ID_OCTETS);
}

/* The same mapping as ReferenceBatchController.state(), key for key. */
static PyObject *Controller_state(ControllerObject *self, PyObject *unused) {
    uint8_t prev[AMORT_HASH_OCTETS], root[AMORT_HASH_OCTETS], pending[AMORT_HASH_OCTETS];
    size_t ndev, nclose;
    amort_device_info *infos;
    PyObject *devices = NULL, *closes = NULL, *out = NULL;
    PyObject *prev_hex = NULL, *root_hex = NULL, *pending_hex = NULL;
    (void)unused;
    if (!controller_free_to_use(self)) return NULL;
    amort_controller_prev_hash(self->ctl, prev);
    if (amort_controller_root(self->ctl, root) != AMORT_OK ||
        amort_controller_pending_digest(self->ctl, pending) != AMORT_OK)
        return raise_status(AMORT_E_CRYPTO, "state", NULL);
    ndev = amort_controller_device_count(self->ctl);
    infos = PyMem_Calloc(ndev ? ndev : 1, sizeof *infos);
    if (infos == NULL) return PyErr_NoMemory();
    for (size_t i = 0; i < ndev; i++) amort_controller_device_at(self->ctl, i, &infos[i]);
    qsort(infos, ndev, sizeof *infos, cmp_info);
    devices = PyList_New((Py_ssize_t)ndev);
    nclose = amort_controller_close_count(self->ctl);
    closes = PyList_New((Py_ssize_t)nclose);
    if (devices == NULL || closes == NULL) goto done;
    for (size_t i = 0; i < ndev; i++) {
        PyObject *d = device_dict(&infos[i], 1);
        if (d == NULL) goto done;
        PyList_SET_ITEM(devices, (Py_ssize_t)i, d);
    }
    for (size_t i = 0; i < nclose; i++) {
        amort_close_info c;
        PyObject *hex, *entry;
        amort_controller_close_at(self->ctl, i, &c);
        hex = hex_of(c.dev_id, AMORT_ID_OCTETS);
        entry = hex ? Py_BuildValue("[OkK]", hex, (unsigned long)c.epoch, (unsigned long long)c.last_seen) : NULL;
        Py_XDECREF(hex);
        if (entry == NULL) goto done;
        PyList_SET_ITEM(closes, (Py_ssize_t)i, entry);
    }
    prev_hex = hex_of(prev, AMORT_HASH_OCTETS);
    root_hex = hex_of(root, AMORT_HASH_OCTETS);
    pending_hex = hex_of(pending, AMORT_HASH_OCTETS);
    if (prev_hex == NULL || root_hex == NULL || pending_hex == NULL) goto done;
    out = Py_BuildValue("{s:K,s:O,s:K,s:O,s:n,s:O,s:O,s:O,s:O}", "index",
                        (unsigned long long)amort_controller_index(self->ctl), "prev_hash", prev_hex, "tree_size",
                        (unsigned long long)amort_controller_tree_size(self->ctl), "root", root_hex, "pending",
                        (Py_ssize_t)amort_controller_pending(self->ctl), "pending_leaves", pending_hex,
                        "awaiting_commit", amort_controller_awaiting_commit(self->ctl) ? Py_True : Py_False,
                        "closes", closes, "devices", devices);
done:
    PyMem_Free(infos);
    Py_XDECREF(devices);
    Py_XDECREF(closes);
    Py_XDECREF(prev_hex);
    Py_XDECREF(root_hex);
    Py_XDECREF(pending_hex);
    return out;
}

static PyObject *Controller_get_tree_size(ControllerObject *self, void *unused) {
    (void)unused;
    if (!controller_free_to_use(self)) return NULL;
    return PyLong_FromUnsignedLongLong(amort_controller_tree_size(self->ctl));
}

static PyObject *Controller_get_root(ControllerObject *self, void *unused) {
    uint8_t root[AMORT_HASH_OCTETS];
    (void)unused;
    if (!controller_free_to_use(self)) return NULL;
    if (amort_controller_root(self->ctl, root) != AMORT_OK) return raise_status(AMORT_E_CRYPTO, "root", NULL);
    return PyBytes_FromStringAndSize((const char *)root, AMORT_HASH_OCTETS);
}

static PyObject *Controller_get_index(ControllerObject *self, void *unused) {
    (void)unused;
    if (!controller_free_to_use(self)) return NULL;
    return PyLong_FromUnsignedLongLong(amort_controller_index(self->ctl));
}

static PyObject *Controller_get_prev_hash(ControllerObject *self, void *unused) {
    uint8_t prev[AMORT_HASH_OCTETS];
    (void)unused;
    if (!controller_free_to_use(self)) return NULL;
    amort_controller_prev_hash(self->ctl, prev);
    return PyBytes_FromStringAndSize((const char *)prev, AMORT_HASH_OCTETS);
}

static PyObject *Controller_get_pending(ControllerObject *self, void *unused) {
    (void)unused;
    if (!controller_free_to_use(self)) return NULL;
    return PyLong_FromSize_t(amort_controller_pending(self->ctl));
}

static PyObject *Controller_get_awaiting(ControllerObject *self, void *unused) {
    (void)unused;
    if (!controller_free_to_use(self)) return NULL;
    return PyBool_FromLong(amort_controller_awaiting_commit(self->ctl));
}

static PyMethodDef Controller_methods[] = {
    {"register_epoch", (PyCFunction)Controller_register_epoch, METH_VARARGS,
     "register_epoch(dev_id, epoch, k_evid, tag_len, expiry, policy_id, not_before)"},
    {"revoke", (PyCFunction)Controller_revoke, METH_O, "revoke(dev_id)"},
    {"ingest", (PyCFunction)Controller_ingest, METH_VARARGS,
     "ingest(batch, now) -> (codes, fields): one code octet per report (0 accepted) and {index: field} for refusals"},
    {"checkpoint_body", (PyCFunction)Controller_checkpoint_body, METH_NOARGS, "the to-be-signed checkpoint"},
    {"commit", (PyCFunction)Controller_commit, METH_O, "commit(signature) -> signed checkpoint"},
    {"device", (PyCFunction)Controller_device, METH_O, "device(dev_id) -> dict"},
    {"state", (PyCFunction)Controller_state, METH_NOARGS, "every piece of state as plain values"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Controller_getset[] = {
    {"tree_size", (getter)Controller_get_tree_size, NULL, "leaves in the tree", NULL},
    {"root", (getter)Controller_get_root, NULL, "tree head", NULL},
    {"index", (getter)Controller_get_index, NULL, "index of the next checkpoint body", NULL},
    {"prev_hash", (getter)Controller_get_prev_hash, NULL, "link hash of the last committed checkpoint", NULL},
    {"pending", (getter)Controller_get_pending, NULL, "accepted reports waiting for a body", NULL},
    {"awaiting_commit", (getter)Controller_get_awaiting, NULL, "a body waits for its signature", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ControllerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pqlab.amort.fastpath.native._amort_native.Controller",
    .tp_basicsize = sizeof(ControllerObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Controller(controller_id, sig_alg, wire_format, variant, max_report_age): the AMORT-V1 controller's "
              "per-report path in C",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Controller_init,
    .tp_dealloc = (destructor)Controller_dealloc,
    .tp_methods = Controller_methods,
    .tp_getset = Controller_getset,
};

/* ---- Device ----------------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    amort_device *dev;
} DeviceObject;

static int Device_init(DeviceObject *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"dev_id", "epoch", "k_evid", "chain_seed", "tag_len", "policy_id", "chain_length",
                            "wire_format", "variant", "next_seq", NULL};
    PyObject *dev_o, *epoch_o, *key_o, *seed_o, *tag_o, *policy_o, *length_o, *wire_o, *variant_o, *next_o;
    uint8_t dev_id[AMORT_ID_OCTETS], k_evid[AMORT_KEY_OCTETS], seed[AMORT_KEY_OCTETS];
    uint64_t epoch, tag_len, policy_id, length, next_seq;
    amort_options options;
    amort_status s;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOOOOOO", names, &dev_o, &epoch_o, &key_o, &seed_o, &tag_o,
                                     &policy_o, &length_o, &wire_o, &variant_o, &next_o))
        return -1;
    if (self->dev != NULL) {
        raise_status(AMORT_E_STATE, "device", "already initialised");
        return -1;
    }
    if (!octets(dev_o, AMORT_ID_OCTETS, "dev_id", dev_id) || !uint_arg(epoch_o, 32, "epoch", AMORT_E_ARGUMENT, &epoch) ||
        !octets(key_o, AMORT_KEY_OCTETS, "k_evid", k_evid) ||
        !uint_arg(tag_o, 8, "tag_len", AMORT_TAGLEN_DOWNGRADE, &tag_len) ||
        !uint_arg(policy_o, 16, "policy_id", AMORT_E_ARGUMENT, &policy_id) ||
        !uint_arg(length_o, 32, "chain_length", AMORT_E_ARGUMENT, &length) ||
        !options_arg(wire_o, variant_o, &options) || !uint_arg(next_o, 64, "next_seq", AMORT_E_ARGUMENT, &next_seq))
        return -1;
    if (!PyBytes_Check(seed_o) || PyBytes_GET_SIZE(seed_o) != AMORT_KEY_OCTETS) {
        raise_status(AMORT_CHAIN_FAIL, "seed", "chain needs a 32-octet seed and length >= 1");
        return -1;
    }
    memcpy(seed, PyBytes_AS_STRING(seed_o), AMORT_KEY_OCTETS);
    s = amort_device_new_ex(&self->dev, dev_id, (uint32_t)epoch, k_evid, seed, (uint8_t)tag_len,
                            (uint16_t)policy_id, (uint32_t)length, &options, next_seq);
    OPENSSL_cleanse(k_evid, sizeof k_evid);
    OPENSSL_cleanse(seed, sizeof seed);
    if (s != AMORT_OK) {
        raise_status(s, s == AMORT_TAGLEN_DOWNGRADE ? "tag_len" : s == AMORT_CHAIN_FAIL ? "seed"
                        : s == AMORT_E_ARGUMENT ? "next_seq" : "chain_length", NULL);
        return -1;
    }
    return 0;
}

static void Device_dealloc(DeviceObject *self) {
    amort_device_free(self->dev);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* report(digest, timestamp, flags=0, disclosure_tag=True): arguments checked in Record's field order. */
static PyObject *Device_report(DeviceObject *self, PyObject *const *args, Py_ssize_t nargs) {
    uint8_t digest[AMORT_HASH_OCTETS], out[AMORT_REPORT_MAX_OCTETS];
    uint64_t timestamp, flags = 0;
    int disclosure = 1;
    size_t len;
    amort_status s;
    if (self->dev == NULL) return raise_status(AMORT_E_STATE, "device", "not initialised");
    if (nargs < 2 || nargs > 4) {
        PyErr_SetString(PyExc_TypeError, "report(digest, timestamp, flags=0, disclosure_tag=True)");
        return NULL;
    }
    if (amort_device_seq(self->dev) == UINT64_MAX)
        return raise_status(AMORT_EPOCH_STALE, "seq", "sequence numbers are exhausted; open a new epoch");
    if (!uint_arg(args[1], 64, "timestamp", AMORT_E_ARGUMENT, &timestamp) ||
        !octets(args[0], AMORT_HASH_OCTETS, "digest", digest) ||
        (nargs > 2 && !uint_arg(args[2], 8, "flags", AMORT_E_ARGUMENT, &flags)))
        return NULL;
    if (nargs > 3 && (disclosure = PyObject_IsTrue(args[3])) < 0) return NULL;
    s = amort_device_report(self->dev, digest, timestamp, (uint8_t)flags, disclosure, out, &len);
    if (s == AMORT_CHAIN_FAIL) return raise_status(s, "j", "the report is beyond the disclosure chain");
    if (s != AMORT_OK) return raise_status(s, "report", NULL);
    return PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)len);
}

static PyObject *Device_chain_key(DeviceObject *self, PyObject *j_o) {
    uint64_t j;
    uint8_t key[AMORT_KEY_OCTETS];
    amort_status s;
    if (self->dev == NULL) return raise_status(AMORT_E_STATE, "device", "not initialised");
    if (!uint_arg(j_o, 64, "j", AMORT_CHAIN_FAIL, &j)) return NULL;
    s = amort_device_chain_key(self->dev, j, key);
    if (s != AMORT_OK) return raise_status(s, "j", s == AMORT_CHAIN_FAIL ? "beyond the chain" : NULL);
    return PyBytes_FromStringAndSize((const char *)key, AMORT_KEY_OCTETS);
}

static PyObject *Device_get_seq(DeviceObject *self, void *unused) {
    (void)unused;
    if (self->dev == NULL) return raise_status(AMORT_E_STATE, "device", "not initialised");
    return PyLong_FromUnsignedLongLong(amort_device_seq(self->dev));
}

static PyObject *Device_get_anchor(DeviceObject *self, void *unused) {
    uint8_t k0[AMORT_KEY_OCTETS];
    (void)unused;
    if (self->dev == NULL) return raise_status(AMORT_E_STATE, "device", "not initialised");
    amort_device_anchor(self->dev, k0);
    return PyBytes_FromStringAndSize((const char *)k0, AMORT_KEY_OCTETS);
}

static PyMethodDef Device_methods[] = {
    {"report", (PyCFunction)(void (*)(void))Device_report, METH_FASTCALL,
     "report(digest, timestamp, flags=0, disclosure_tag=True) -> encoded report"},
    {"chain_key", (PyCFunction)Device_chain_key, METH_O, "chain_key(j) -> K_j"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Device_getset[] = {
    {"seq", (getter)Device_get_seq, NULL, "sequence number of the last report", NULL},
    {"anchor", (getter)Device_get_anchor, NULL, "K_0", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject DeviceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pqlab.amort.fastpath.native._amort_native.Device",
    .tp_basicsize = sizeof(DeviceObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Device(dev_id, epoch, k_evid, chain_seed, tag_len, policy_id, chain_length, wire_format, variant, "
              "next_seq): the prover's report path",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Device_init,
    .tp_dealloc = (destructor)Device_dealloc,
    .tp_methods = Device_methods,
    .tp_getset = Device_getset,
};

/* ---- module functions ------------------------------------------------------------------------------- */

static PyObject *code_names(PyObject *module, PyObject *unused) {
    PyObject *out = PyTuple_New(AMORT_PROTOCOL_CODES);
    (void)module;
    (void)unused;
    if (out == NULL) return NULL;
    for (int i = 1; i <= AMORT_PROTOCOL_CODES; i++) {
        PyObject *name = PyUnicode_FromString(amort_status_name((amort_status)i));
        if (name == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i - 1, name);
    }
    return out;
}

static PyObject *openssl_version(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    return PyUnicode_FromString(OpenSSL_version(OPENSSL_VERSION));
}

static PyObject *time_primitives(PyObject *module, PyObject *arg) {
    amort_primitive_times t;
    amort_status s;
    uint64_t iterations;
    size_t n;
    (void)module;
    if (!uint_arg(arg, 64, "iterations", AMORT_E_ARGUMENT, &iterations)) return NULL;
    if (iterations == 0 || iterations > SIZE_MAX)
        return raise_status(AMORT_E_ARGUMENT, "iterations", "must be an integer in [1, SIZE_MAX]");
    n = (size_t)iterations;
    Py_BEGIN_ALLOW_THREADS
    s = amort_time_primitives(n, &t);
    Py_END_ALLOW_THREADS
    if (s != AMORT_OK) return raise_status(s, "iterations", NULL);
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d}", "hmac_ns", t.hmac_ns, "hmac_dup_ns", t.hmac_dup_ns, "leaf_ns",
                         t.leaf_ns, "node_ns", t.node_ns, "chain_ns", t.chain_ns);
}

static PyMethodDef module_methods[] = {
    {"code_names", code_names, METH_NOARGS, "the protocol code names in enum order (codes 1..19)"},
    {"openssl_version", openssl_version, METH_NOARGS, "the libcrypto this module runs against"},
    {"time_primitives", time_primitives, METH_O,
     "time_primitives(iterations) -> ns per keyed HMAC, dup HMAC, leaf hash, node hash, chain step"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_amort_native",
    "AMORT-V1 per-report fast path in C (amort_core) — use it through pqlab.amort.fastpath", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

static PyObject *import_attr(const char *module, const char *name) {
    PyObject *m = PyImport_ImportModule(module), *attr;
    if (m == NULL) return NULL;
    attr = PyObject_GetAttrString(m, name);
    Py_DECREF(m);
    return attr;
}

PyMODINIT_FUNC PyInit__amort_native(void) {
    PyObject *m;
    if ((AmortError = import_attr("pqlab.amort.errors", "AmortError")) == NULL ||
        (CodeEnum = import_attr("pqlab.amort.errors", "Code")) == NULL ||
        (FastpathError = import_attr("pqlab.amort.errors", "FastpathError")) == NULL ||
        (PqlabError = import_attr("pqlab.errors", "PqlabError")) == NULL)
        return NULL;
    if (PyType_Ready(&ControllerType) < 0 || PyType_Ready(&DeviceType) < 0) return NULL;
    m = PyModule_Create(&module_def);
    if (m == NULL) return NULL;
    Py_INCREF(&ControllerType);
    Py_INCREF(&DeviceType);
    if (PyModule_AddObject(m, "Controller", (PyObject *)&ControllerType) < 0 ||
        PyModule_AddObject(m, "Device", (PyObject *)&DeviceType) < 0 ||
        PyModule_AddIntConstant(m, "BATCH_MAX", AMORT_BATCH_MAX) < 0 ||
        PyModule_AddIntConstant(m, "CHAIN_MAX", AMORT_CHAIN_MAX) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
