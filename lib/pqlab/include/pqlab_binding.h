/* Shared by the native bindings (_amort_native, _cycle, _symmetric): raising a typed pqlab error with keyword
 * arguments, and range-checked integer arguments — a Python int of any size is compared with the bounds before any
 * conversion, so nothing wraps; a failure raises through the binding's own typed error. */
#ifndef PQLAB_BINDING_H
#define PQLAB_BINDING_H

#include <Python.h>
#include <stdio.h>

/* Raise cls(*args, **kwargs); args and kwargs are new references (consumed), either NULL when building it failed (an
 * exception is then set already). Returns NULL. */
static inline PyObject *pq_raise_with(PyObject *cls, PyObject *args, PyObject *kwargs) {
    PyObject *exc = NULL;
    if (args != NULL && kwargs != NULL) exc = PyObject_Call(cls, args, kwargs);
    if (exc != NULL) PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_XDECREF(exc);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    return NULL;
}

/* Raise cls(message, **kwargs); kwargs is a new reference (consumed), NULL when building it failed (an exception is
 * then set already). Returns NULL. */
static inline PyObject *pq_raise(PyObject *cls, PyObject *kwargs, const char *message) {
    if (kwargs == NULL) return NULL;
    return pq_raise_with(cls, Py_BuildValue("(s)", message), kwargs);
}

/* Raises the binding's typed error naming field; returns NULL. */
typedef PyObject *(*pq_arg_error)(const char *field, const char *message);

/* 0 and *out = the value when obj is an int (not a bool) in [low, high]; else -1 with an exception set. */
static inline int pq_bounded_arg(PyObject *obj, long long low, long long high, const char *field, long long *out,
                                 pq_arg_error fail) {
    int overflow = 0;
    long long value;
    char message[96];
    if (obj == NULL || !PyLong_Check(obj) || PyBool_Check(obj)) {
        fail(field, "must be an integer");
        return -1;
    }
    value = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (value == -1 && PyErr_Occurred()) return -1;
    if (overflow || value < low || value > high) {
        snprintf(message, sizeof message, "must be an integer in [%lld, %lld]", low, high);
        fail(field, message);
        return -1;
    }
    *out = value;
    return 0;
}

#endif /* PQLAB_BINDING_H */
