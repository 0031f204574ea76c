/* pickle.c: loading pickled descriptors.
 *
 * Owns _reconstruct(name, structure[, module]), the permanent module-level
 * function every descriptor's __reduce__ names.  It returns the receiving
 * process's registered identity only when the pickled structure matches
 * the registered one exactly; it treats its arguments as untrusted and
 * never runs code of the objects it was given.
 *
 * The optional `module` is the module that defined the descriptor (its
 * class's module, or the module that called a model class).  When the name
 * is not registered here, the reconstructor imports that module once and
 * looks again, as unpickling a class imports the class's module.  Because
 * restricted unpicklers may allow the reconstructor, the hint is checked
 * first (the import policy below, a dotted identifier, never __main__, a
 * top-level package that is importable here), and a refused or failed
 * import ends in LookupError.
 */
#include "pickle.h"
#include "descriptor.h"
#include "record.h"

#define SW_POLICY_ENV "STRIDE_WEAVE_UNPICKLE_IMPORTS"

/* 1 if `s` (exact str) is a dotted name of identifiers: "a", "a.b_c". */
static int
sw_pickle_is_dotted_name(PyObject *s)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s), start = 0, i;

    if (n == 0) {
        return 0;
    }
    for (i = 0; i <= n; i++) {
        if (i == n || PyUnicode_READ_CHAR(s, i) == '.') {
            PyObject *part;
            int ok;

            if (i == start) {
                return 0;   /* empty part: "", ".a", "a..b", "a." */
            }
            part = PyUnicode_Substring(s, start, i);
            if (part == NULL) {
                return -1;
            }
            ok = PyUnicode_IsIdentifier(part);
            Py_DECREF(part);
            if (ok <= 0) {
                return ok;
            }
            start = i + 1;
        }
    }
    return 1;
}

/* Convert `allow` (True, False, or an iterable of module-name prefixes)
 * into a policy: Py_True, Py_False or a tuple of exact str (new ref). */
static PyObject *
sw_pickle_policy_from(PyObject *allow, const char *what)
{
    PyObject *items, *result = NULL;
    Py_ssize_t i, n;

    if (allow == Py_True || allow == Py_False) {
        return Py_NewRef(allow);
    }
    if (PyUnicode_Check(allow) || PyBytes_Check(allow)) {
        /* A lone string would be iterated character by character. */
        PyErr_Format(PyExc_TypeError,
                     "%s: allow must be True, False or an iterable of module "
                     "name prefixes, got a single %s (wrap it in a tuple)",
                     what, Py_TYPE(allow)->tp_name);
        return NULL;
    }
    items = PySequence_Tuple(allow);
    if (items == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Format(PyExc_TypeError,
                         "%s: allow must be True, False or an iterable of "
                         "module name prefixes, got %s", what,
                         Py_TYPE(allow)->tp_name);
        }
        return NULL;
    }
    n = PyTuple_GET_SIZE(items);
    result = PyTuple_New(n);
    if (result == NULL) {
        goto error;
    }
    for (i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(items, i), *exact;
        int ok;

        if (!PyUnicode_Check(item)) {
            PyErr_Format(PyExc_TypeError,
                         "%s: each module name prefix must be a str, got %s",
                         what, Py_TYPE(item)->tp_name);
            goto error;
        }
        exact = sw_exact_str(item);
        if (exact == NULL) {
            goto error;
        }
        PyTuple_SET_ITEM(result, i, exact);
        ok = sw_pickle_is_dotted_name(exact);
        if (ok < 0) {
            goto error;
        }
        if (!ok) {
            PyErr_Format(PyExc_ValueError,
                         "%s: module name prefix %R is not a dotted name of "
                         "identifiers (such as 'mylib' or 'mylib.formats')",
                         what, exact);
            goto error;
        }
    }
    Py_DECREF(items);
    return result;

error:
    Py_XDECREF(result);
    Py_DECREF(items);
    return NULL;
}

/* The initial policy, from the environment: unset, "" or "1" allow every
 * module, "0" none, anything else is a comma-separated list of module name
 * prefixes.  A malformed value fails the import of the module, so a typo
 * never silently widens or narrows what unpickling imports. */
int
sw_pickle_init_policy(sw_state *st)
{
    const char *env = Py_GETENV(SW_POLICY_ENV);
    PyObject *text = NULL, *parts = NULL, *prefixes = NULL;
    Py_ssize_t i;

    if (env == NULL || env[0] == '\0' || strcmp(env, "1") == 0) {
        st->import_policy = Py_NewRef(Py_True);
        return 0;
    }
    if (strcmp(env, "0") == 0) {
        st->import_policy = Py_NewRef(Py_False);
        return 0;
    }
    text = PyUnicode_DecodeFSDefault(env);
    if (text == NULL) {
        return -1;
    }
    /* Whitespace is dropped ("a, b" is "a,b"), then split at commas. */
    parts = PyUnicode_Split(text, NULL, -1);
    if (parts == NULL) {
        goto error;
    }
    {
        PyObject *empty = PyUnicode_FromString("");
        Py_SETREF(text, empty ? PyUnicode_Join(empty, parts) : NULL);
        Py_XDECREF(empty);
    }
    Py_CLEAR(parts);
    if (text == NULL) {
        goto error;
    }
    {
        PyObject *comma = PyUnicode_FromString(",");
        if (comma == NULL) {
            goto error;
        }
        parts = PyUnicode_Split(text, comma, -1);
        Py_DECREF(comma);
    }
    if (parts == NULL) {
        goto error;
    }
    prefixes = PyList_New(0);
    if (prefixes == NULL) {
        goto error;
    }
    for (i = 0; i < PyList_GET_SIZE(parts); i++) {
        PyObject *part = PyList_GET_ITEM(parts, i);
        if (PyUnicode_GET_LENGTH(part) > 0 && PyList_Append(prefixes, part) < 0) {
            goto error;
        }
    }
    st->import_policy = sw_pickle_policy_from(
        prefixes, "environment variable " SW_POLICY_ENV);
    if (st->import_policy == NULL) {
        goto error;
    }
    Py_DECREF(text);
    Py_DECREF(parts);
    Py_DECREF(prefixes);
    return 0;

error:
    Py_XDECREF(text);
    Py_XDECREF(parts);
    Py_XDECREF(prefixes);
    return -1;
}

/* The current policy, a new reference.  The module's critical section
 * (free-threaded builds) keeps a concurrent set from freeing it under us. */
static PyObject *
sw_pickle_get_policy(PyObject *module, sw_state *st)
{
    PyObject *policy;

    (void)module;   /* read only by the free-threaded critical section */
    Py_BEGIN_CRITICAL_SECTION(module);
    policy = Py_XNewRef(st->import_policy);
    Py_END_CRITICAL_SECTION();
    if (policy == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "stride_weave._dtypes is not initialized");
    }
    return policy;
}

/* Why the module hint may not be imported (a new str), or Py_None (new
 * ref) when it may; NULL with an exception only for errors the caller must
 * not turn into LookupError (memory, a BaseException from find_spec). */
static PyObject *
sw_pickle_import_refusal(PyObject *module, sw_state *st, PyObject *hint)
{
    PyObject *policy, *top = NULL, *modules, *util = NULL, *spec = NULL;
    Py_ssize_t dot;
    int ok;

    policy = sw_pickle_get_policy(module, st);
    if (policy == NULL) {
        return NULL;
    }
    if (policy == Py_False) {
        Py_DECREF(policy);
        return PyUnicode_FromString(
            "importing on unpickle is turned off "
            "(stride_weave.dtypes.set_unpickle_imports)");
    }
    ok = sw_pickle_is_dotted_name(hint);
    if (ok <= 0) {
        Py_DECREF(policy);
        return ok < 0 ? NULL
                      : PyUnicode_FromString("it is not a dotted name of "
                                             "identifiers");
    }
    dot = PyUnicode_FindChar(hint, '.', 0, PyUnicode_GET_LENGTH(hint), 1);
    if (dot == -2) {
        goto error;
    }
    top = dot < 0 ? Py_NewRef(hint) : PyUnicode_Substring(hint, 0, dot);
    if (top == NULL) {
        goto error;
    }
    /* The main script (and multiprocessing's alias of it) would run again
     * as a module: never. */
    if (PyUnicode_CompareWithASCIIString(top, "__main__") == 0
        || PyUnicode_CompareWithASCIIString(top, "__mp_main__") == 0) {
        Py_DECREF(policy);
        Py_DECREF(top);
        return PyUnicode_FromString("__main__ is never imported");
    }
    if (PyTuple_Check(policy)) {
        Py_ssize_t i, n = PyTuple_GET_SIZE(policy), len = PyUnicode_GET_LENGTH(hint);

        ok = 0;
        for (i = 0; i < n && !ok; i++) {
            PyObject *prefix = PyTuple_GET_ITEM(policy, i);
            Py_ssize_t plen = PyUnicode_GET_LENGTH(prefix);

            /* "mylib" allows "mylib" and "mylib.x", not "mylibrary". */
            if (PyUnicode_Tailmatch(hint, prefix, 0, plen, -1) == 1
                && (len == plen || PyUnicode_READ_CHAR(hint, plen) == '.')) {
                ok = 1;
            }
        }
        if (!ok) {
            PyObject *reason = PyUnicode_FromFormat(
                "it is not under the allowed module prefixes %R "
                "(stride_weave.dtypes.set_unpickle_imports)", policy);
            Py_DECREF(policy);
            Py_DECREF(top);
            return reason;
        }
    }
    Py_CLEAR(policy);
    /* Only a module importable by that name here: its top-level package is
     * already imported or has a spec on sys.path.  find_spec of a
     * top-level name imports nothing. */
    modules = PyImport_GetModuleDict();   /* borrowed */
    ok = PyDict_Contains(modules, top);
    if (ok < 0) {
        goto error;
    }
    if (!ok) {
        util = PyImport_ImportModule("importlib.util");
        if (util == NULL) {
            goto error;
        }
        spec = PyObject_CallMethod(util, "find_spec", "O", top);
        if (spec == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_Exception)) {
                goto error;
            }
            PyErr_Clear();
            spec = Py_NewRef(Py_None);
        }
        if (spec == Py_None) {
            PyObject *reason = PyUnicode_FromFormat(
                "no top-level module %R is importable in this process", top);
            Py_DECREF(top);
            Py_DECREF(util);
            Py_DECREF(spec);
            return reason;
        }
    }
    Py_XDECREF(spec);
    Py_XDECREF(util);
    Py_DECREF(top);
    Py_RETURN_NONE;

error:
    Py_XDECREF(policy);
    Py_XDECREF(top);
    Py_XDECREF(util);
    Py_XDECREF(spec);
    return NULL;
}

/* The name is not registered: try the module hint.  Returns the
 * descriptor now registered under `name` (new ref), or NULL with
 * LookupError set (another exception only when it must propagate, such as
 * KeyboardInterrupt raised by the imported module). */
static PyObject *
sw_pickle_import_and_find(PyObject *module, sw_state *st, PyObject *name,
                          PyObject *hint)
{
    PyObject *reason, *imported, *found, *cause = NULL;

    if (hint == NULL) {
        PyErr_Format(PyExc_LookupError,
                     "cannot unpickle descriptor %R: no descriptor is "
                     "registered under that name in this process (import "
                     "or register its definition before loading)", name);
        return NULL;
    }
    reason = sw_pickle_import_refusal(module, st, hint);
    if (reason == NULL) {
        return NULL;
    }
    if (reason != Py_None) {
        PyErr_Format(PyExc_LookupError,
                     "cannot unpickle descriptor %R: no descriptor is "
                     "registered under that name in this process, and its "
                     "module %R was not imported: %U (import or register "
                     "its definition before loading)", name, hint, reason);
        Py_DECREF(reason);
        return NULL;
    }
    Py_DECREF(reason);
    imported = PyImport_Import(hint);
    if (imported == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception)) {
            return NULL;   /* KeyboardInterrupt, SystemExit: not ours */
        }
        cause = PyErr_GetRaisedException();   /* owned, with its traceback */
        PyErr_Format(PyExc_LookupError,
                     "cannot unpickle descriptor %R: no descriptor is "
                     "registered under that name in this process, and "
                     "importing its module %R raised %s: %S (import or "
                     "register its definition before loading)", name, hint,
                     cause != NULL ? Py_TYPE(cause)->tp_name : "an error",
                     cause != NULL ? cause : Py_None);
        if (cause != NULL) {
            PyObject *exc = PyErr_GetRaisedException();

            if (exc != NULL) {
                PyException_SetCause(exc, cause);   /* steals cause */
            }
            else {
                Py_DECREF(cause);
            }
            PyErr_SetRaisedException(exc);
        }
        return NULL;
    }
    Py_DECREF(imported);
    found = sw_registry_lookup(&st->registry, name);
    if (found == NULL && !PyErr_Occurred()) {
        PyErr_Format(PyExc_LookupError,
                     "cannot unpickle descriptor %R: no descriptor is "
                     "registered under that name in this process, also after "
                     "importing its module %R (import or register its "
                     "definition before loading)", name, hint);
    }
    return found;
}

/* The module hint of a pickle: None, or a str (new ref to an exact str,
 * or NULL with an exception; *hint is NULL for None). */
static int
sw_pickle_hint(PyObject *arg, PyObject *name, PyObject **hint)
{
    *hint = NULL;
    if (arg == Py_None) {
        return 0;
    }
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError,
                     "_reconstruct(): module of %R must be a str or None, "
                     "got %s", name, Py_TYPE(arg)->tp_name);
        return -1;
    }
    *hint = sw_exact_str(arg);
    return *hint == NULL ? -1 : 0;
}

/* The registered descriptor under `name` (new ref), importing the hinted
 * module when the name is not registered yet. */
static PyObject *
sw_pickle_find(PyObject *module, sw_state *st, PyObject *name, PyObject *hint)
{
    PyObject *found = sw_registry_lookup(&st->registry, name);

    if (found == NULL && !PyErr_Occurred()) {
        found = sw_pickle_import_and_find(module, st, name, hint);
    }
    return found;
}

/* _reconstruct(record[, module]): a version-2 pickle (record.c). */
static PyObject *
sw_pickle_reconstruct_record(PyObject *module, sw_state *st,
                             PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *record = args[0], *name, *hint = NULL, *found = NULL;

    if (nargs > 2) {
        PyErr_Format(PyExc_TypeError,
                     "_reconstruct() takes a record and an optional module, "
                     "got %zd arguments", nargs);
        return NULL;
    }
    if (!PyTuple_CheckExact(record) || PyTuple_GET_SIZE(record) < 3) {
        PyErr_Format(PyExc_TypeError,
                     "_reconstruct(): record must be a tuple (name, kind, "
                     "..., extension), got %s of %zd items",
                     Py_TYPE(record)->tp_name, PyTuple_GET_SIZE(record));
        return NULL;
    }
    name = PyTuple_GET_ITEM(record, 0);
    if (!PyUnicode_CheckExact(name)) {
        PyErr_Format(PyExc_TypeError,
                     "_reconstruct(): the record's name must be a str, got %s",
                     Py_TYPE(name)->tp_name);
        return NULL;
    }
    if (nargs == 2 && sw_pickle_hint(args[1], name, &hint) < 0) {
        return NULL;
    }
    found = sw_pickle_find(module, st, name, hint);
    Py_XDECREF(hint);
    if (found != NULL
        && sw_record_check(st, (sw_descriptor *)found, record) < 0) {
        Py_CLEAR(found);
    }
    return found;
}

static PyObject *
sw_pickle_reconstruct(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    sw_state *st = sw_state_of_module(module);
    PyObject *name, *structure, *hint = NULL, *exact = NULL, *found = NULL;
    PyObject *diff = NULL;
    sw_descriptor *d;

    if (sw_state_check(st) < 0) {
        return NULL;
    }
    if (nargs >= 1 && PyTuple_Check(args[0])) {
        return sw_pickle_reconstruct_record(module, st, args, nargs);
    }
    if (nargs != 2 && nargs != 3) {
        PyErr_Format(PyExc_TypeError,
                     "_reconstruct() takes 2 or 3 arguments (name, "
                     "structure[, module]), or a record and an optional "
                     "module, got %zd", nargs);
        return NULL;
    }
    name = args[0];
    structure = args[1];
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError,
                     "_reconstruct(): name must be a str, got %s",
                     Py_TYPE(name)->tp_name);
        return NULL;
    }
    exact = sw_exact_str(name);
    if (exact == NULL) {
        return NULL;
    }
    if (!PyTuple_Check(structure)) {
        PyErr_Format(PyExc_TypeError,
                     "_reconstruct(): structure of %R must be a tuple, got %s",
                     exact, Py_TYPE(structure)->tp_name);
        goto error;
    }
    if (nargs == 3 && sw_pickle_hint(args[2], exact, &hint) < 0) {
        goto error;
    }
    found = sw_pickle_find(module, st, exact, hint);
    if (found == NULL) {
        goto error;
    }
    d = (sw_descriptor *)found;
    diff = sw_structure_diff(d->structure, structure);
    if (diff == NULL) {
        goto error;
    }
    if (diff != Py_None) {
        PyErr_Format(PyExc_ValueError,
                     "cannot unpickle descriptor %R: the pickled structure "
                     "differs from the one registered in this process %U",
                     exact, diff);
        goto error;
    }
    Py_DECREF(diff);
    Py_XDECREF(hint);
    Py_DECREF(exact);
    return found;

error:
    Py_XDECREF(diff);
    Py_XDECREF(found);
    Py_XDECREF(hint);
    Py_XDECREF(exact);
    return NULL;
}

static PyObject *
sw_pickle_imports(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    sw_state *st = sw_state_of_module(module);

    if (sw_state_check(st) < 0) {
        return NULL;
    }
    return sw_pickle_get_policy(module, st);
}

static PyObject *
sw_pickle_set_imports(PyObject *module, PyObject *allow)
{
    sw_state *st = sw_state_of_module(module);
    PyObject *policy, *previous;

    if (sw_state_check(st) < 0) {
        return NULL;
    }
    policy = sw_pickle_policy_from(allow, "set_unpickle_imports()");
    if (policy == NULL) {
        return NULL;
    }
    Py_BEGIN_CRITICAL_SECTION(module);
    previous = st->import_policy;   /* its reference moves to the caller */
    st->import_policy = policy;
    Py_END_CRITICAL_SECTION();
    return previous;
}

PyMethodDef sw_pickle_methods[] = {
    {"_reconstruct", SW_CFUNC(sw_pickle_reconstruct), METH_FASTCALL,
     PyDoc_STR("_reconstruct($module, name, structure, module=None, /)\n--\n\n"
              "Return the descriptor registered under name if its structure "
              "equals structure exactly.\n\n"
              "This is the pickle entry point of every descriptor; its path, "
              "stride_weave._dtypes._reconstruct, is permanent.  When name "
              "is not registered and module (the module that defined the "
              "descriptor) is given, imports it once, as the import policy "
              "allows (set_unpickle_imports), and looks again.  Raises "
              "TypeError for arguments of the wrong type, LookupError for an "
              "unknown name (saying which module was tried and why it did "
              "not help) and ValueError naming the first difference when "
              "the structures differ.")},
    {"unpickle_imports", sw_pickle_imports, METH_NOARGS,
     PyDoc_STR("unpickle_imports($module, /)\n--\n\n"
               "Return which modules unpickling a descriptor may import: "
               "True (any importable module), False (none) or a tuple of "
               "module name prefixes.")},
    {"set_unpickle_imports", sw_pickle_set_imports, METH_O,
     PyDoc_STR("set_unpickle_imports($module, allow, /)\n--\n\n"
               "Set which modules unpickling a descriptor may import to "
               "find an unregistered name, and return the previous "
               "setting.\n\nallow is True (any importable module, the "
               "default), False (none: an unregistered name is always "
               "LookupError) or an iterable of module name prefixes "
               "('mylib' allows mylib and mylib.*).  The environment "
               "variable " SW_POLICY_ENV " sets the initial value: 0, 1, or "
               "a comma-separated list of prefixes.")},
    {NULL, NULL, 0, NULL},
};
