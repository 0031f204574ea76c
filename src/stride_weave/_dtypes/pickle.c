/* pickle.c: loading pickled descriptors, and which modules loading may
 * import.
 *
 * Owns _reconstruct(name, structure[, module]), the permanent module-level
 * function every descriptor's __reduce__ names.  It returns the receiving
 * process's registered identity only when the pickled structure matches
 * the registered one exactly; it treats its arguments as untrusted and
 * never runs code of the objects it was given.
 *
 * The optional `module` is the module that defined the descriptor (its
 * class's module, or the module that called a model class).  When the name
 * is not registered here, the reconstructor may import that module once
 * and look again, as unpickling a class imports the class's module.
 * Restricted unpicklers may allow the reconstructor, and importing runs
 * the module's code, so the hint is checked before any import machinery
 * runs: a dotted name of identifiers with no __main__ part, allowed by the
 * import policy, whose top-level package is importable here.  A refused or
 * failed import ends in LookupError.
 *
 * The import policy fails closed.  Its setting is True (any importable
 * module), False (none) or a tuple of module name prefixes the user allows
 * (set_unpickle_imports, or the environment variable, read when first
 * needed).  With prefixes, the modules that installed distributions declare
 * in an entry-point group are allowed too, read once, when first needed.
 * Both lazy values run code to compute, so each is computed with no lock
 * held and published in one immutable record, st->import_policy:
 *     Py_None               nothing read yet;
 *     (setting, Py_None)    the setting; the declarations are not read;
 *     (setting, declared)   declared: a sorted tuple of exact str.
 * A record is only ever replaced whole, by a thread that read the record it
 * replaces (sw_pickle_publish); a thread that lost that race uses the
 * winner's record.
 */
#include "pickle.h"
#include "descriptor.h"
#include "record.h"

#define SW_POLICY_ENV "STRIDE_WEAVE_UNPICKLE_IMPORTS"
#define SW_POLICY_GROUP "stride_weave.unpickle_imports"
#define SW_POLICY_EXPECTED \
    "expected 'any', 'none' or a comma-separated list of module name " \
    "prefixes (such as 'mylib,otherlib.formats')"
#define SW_POLICY_HOW \
    "allow it with stride_weave.dtypes.set_unpickle_imports, the " \
    "environment variable " SW_POLICY_ENV " or the entry-point group '" \
    SW_POLICY_GROUP "' of its distribution"

/* What a name is to the policy (sw_pickle_name_kind). */
typedef enum {
    SW_NAME_OK = 0,         /* a dotted name of identifiers: "a", "a.b_c" */
    SW_NAME_NOT_DOTTED,     /* "", ".a", "a..b", "a b", "a/b", "1a" */
    SW_NAME_MAIN,           /* a dotted name with a __main__ part */
} sw_name_kind;

/* Why a name of each kind is never imported. */
static const char *const sw_pickle_name_refusals[] = {
    NULL,
    "it is not a dotted name of identifiers",
    "__main__ is never imported",
};

/* The sw_name_kind of `s` (an exact str), or -1 with an exception.
 * Keywords count as identifiers: importlib imports such modules, and
 * refusing them would protect nothing.  __main__ is the main script (and
 * __mp_main__ multiprocessing's name for it), which would run again as a
 * module; a package's __main__ is its command line (unittest's runs test
 * discovery, then exits). */
static int
sw_pickle_name_kind(PyObject *s)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s), start = 0, i;
    int main_part = 0;

    if (n == 0) {
        return SW_NAME_NOT_DOTTED;
    }
    for (i = 0; i <= n; i++) {
        if (i == n || PyUnicode_READ_CHAR(s, i) == '.') {
            PyObject *part;
            int ok;

            if (i == start) {
                return SW_NAME_NOT_DOTTED;   /* "", ".a", "a..b", "a." */
            }
            part = PyUnicode_Substring(s, start, i);
            if (part == NULL) {
                return -1;
            }
            ok = PyUnicode_IsIdentifier(part);
            if (ok > 0
                && (PyUnicode_CompareWithASCIIString(part, "__main__") == 0
                    || PyUnicode_CompareWithASCIIString(part, "__mp_main__") == 0)) {
                main_part = 1;
            }
            Py_DECREF(part);
            if (ok <= 0) {
                return ok < 0 ? -1 : SW_NAME_NOT_DOTTED;
            }
            start = i + 1;
        }
    }
    return main_part ? SW_NAME_MAIN : SW_NAME_OK;
}

/* What is wrong with `item` (an exact str) as a module name prefix: a new
 * str ("'a..b' is not a dotted name of identifiers"), Py_None (new ref)
 * if nothing, NULL with an exception. */
static PyObject *
sw_pickle_prefix_problem(PyObject *item)
{
    int kind = sw_pickle_name_kind(item);

    if (kind < 0) {
        return NULL;
    }
    if (kind == SW_NAME_NOT_DOTTED) {
        return PyUnicode_FromFormat(
            "%R is not a dotted name of identifiers", item);
    }
    if (kind == SW_NAME_MAIN) {
        return PyUnicode_FromFormat(
            "%R has a __main__ component, and __main__ is never imported",
            item);
    }
    Py_RETURN_NONE;
}

/* `s` (an exact str) without leading and trailing whitespace (new ref). */
static PyObject *
sw_pickle_strip(PyObject *s)
{
    return PyObject_CallMethod(s, "strip", NULL);
}

/* The setting set_unpickle_imports(allow) asks for: Py_True, Py_False or a
 * new tuple of exact str (new ref). */
static PyObject *
sw_pickle_setting_from(PyObject *allow)
{
    PyObject *items, *result = NULL, *problem = NULL;
    Py_ssize_t i, n;

    if (allow == Py_True || allow == Py_False) {
        return Py_NewRef(allow);
    }
    if (PyUnicode_Check(allow) || PyBytes_Check(allow)) {
        /* A lone string would be iterated character by character. */
        PyErr_Format(PyExc_TypeError,
                     "set_unpickle_imports(): allow must be True, False or "
                     "an iterable of module name prefixes, got a single %s "
                     "(wrap it in a tuple)", Py_TYPE(allow)->tp_name);
        return NULL;
    }
    items = PySequence_Tuple(allow);
    if (items == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Format(PyExc_TypeError,
                         "set_unpickle_imports(): allow must be True, False "
                         "or an iterable of module name prefixes, got %s",
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

        if (!PyUnicode_Check(item)) {
            PyErr_Format(PyExc_TypeError,
                         "set_unpickle_imports(): each module name prefix "
                         "must be a str, got %s", Py_TYPE(item)->tp_name);
            goto error;
        }
        exact = sw_exact_str(item);
        if (exact == NULL) {
            goto error;
        }
        PyTuple_SET_ITEM(result, i, exact);
        problem = sw_pickle_prefix_problem(exact);
        if (problem == NULL) {
            goto error;
        }
        if (problem != Py_None) {
            PyErr_Format(PyExc_ValueError,
                         "set_unpickle_imports(): module name prefix %U",
                         problem);
            goto error;
        }
        Py_CLEAR(problem);
    }
    Py_DECREF(items);
    return result;

error:
    Py_XDECREF(problem);
    Py_XDECREF(result);
    Py_DECREF(items);
    return NULL;
}

/* Why `item` (an exact str, stripped) is not a module name prefix in the
 * environment variable although it is a dotted name (a new str), or
 * Py_None (new ref).  A yes/no word in any case ("true", "Off") is what
 * a switch variable takes: read as a module name it would silently allow
 * one module that is not there, and "ANY" or "None" would be a module
 * named so where the user meant the choice. */
static PyObject *
sw_pickle_env_word_problem(PyObject *item)
{
    static const char *const switches[] = {"true", "yes", "on", "false",
                                           "no", "off", NULL};
    PyObject *lower = PyObject_CallMethod(item, "lower", NULL);
    PyObject *problem = NULL;
    int i;

    if (lower == NULL) {
        return NULL;
    }
    for (i = 0; switches[i] != NULL; i++) {
        if (PyUnicode_CompareWithASCIIString(lower, switches[i]) == 0) {
            problem = PyUnicode_FromFormat(
                "%R is a yes/no word, not a module name prefix: write 'any' "
                "to allow any importable module, 'none' to allow none", item);
            goto done;
        }
    }
    if (PyUnicode_CompareWithASCIIString(lower, "any") == 0
        || PyUnicode_CompareWithASCIIString(lower, "none") == 0) {
        problem = PyUnicode_FromFormat(
            "%R is not a module name prefix here: 'any' and 'none' are "
            "written in lower case (only set_unpickle_imports can allow a "
            "module of that name)", item);
        goto done;
    }
    problem = Py_NewRef(Py_None);

done:
    Py_DECREF(lower);
    return problem;
}

/* The setting the environment variable asks for (new ref): unset or blank
 * is (), "any" True, "none" False, anything else a comma-separated list of
 * module name prefixes (whitespace around each is dropped).  A malformed
 * value is a ValueError: a typo never widens, nor silently narrows, what
 * unpickling imports; nor does a yes/no word ("true", "off"), which this
 * variable does not take.  getenv(), not Py_GETENV(): under -E and -I the
 * latter hides every variable, and isolated mode is the usual hardening
 * for a process that loads untrusted input.  The value is copied before
 * anything else runs. */
static PyObject *
sw_pickle_setting_from_env(void)
{
    const char *env = getenv(SW_POLICY_ENV);
    PyObject *raw = NULL, *text = NULL, *comma = NULL, *parts = NULL;
    PyObject *prefixes = NULL, *item = NULL, *problem = NULL, *result = NULL;
    Py_ssize_t i;

    if (env == NULL) {
        return PyTuple_New(0);
    }
    raw = PyUnicode_DecodeFSDefault(env);   /* as os.environ decodes it */
    if (raw == NULL) {
        return NULL;
    }
    text = sw_pickle_strip(raw);
    if (text == NULL) {
        goto done;
    }
    if (PyUnicode_GET_LENGTH(text) == 0) {
        result = PyTuple_New(0);
        goto done;
    }
    if (PyUnicode_CompareWithASCIIString(text, "any") == 0) {
        result = Py_NewRef(Py_True);
        goto done;
    }
    if (PyUnicode_CompareWithASCIIString(text, "none") == 0) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    comma = PyUnicode_FromString(",");
    parts = comma ? PyUnicode_Split(text, comma, -1) : NULL;
    prefixes = parts ? PyList_New(0) : NULL;
    if (prefixes == NULL) {
        goto done;
    }
    for (i = 0; i < PyList_GET_SIZE(parts); i++) {
        item = sw_pickle_strip(PyList_GET_ITEM(parts, i));
        if (item == NULL) {
            goto done;
        }
        if (PyUnicode_GET_LENGTH(item) == 0) {
            problem = PyUnicode_FromString("it has an empty item");
        }
        else if (PyUnicode_CompareWithASCIIString(item, "any") == 0
                 || PyUnicode_CompareWithASCIIString(item, "none") == 0) {
            problem = PyUnicode_FromString("'any' and 'none' stand alone");
        }
        else {
            problem = sw_pickle_prefix_problem(item);
            if (problem == Py_None) {
                Py_SETREF(problem, sw_pickle_env_word_problem(item));
            }
        }
        if (problem == NULL) {
            goto done;
        }
        if (problem != Py_None) {
            break;
        }
        Py_CLEAR(problem);
        if (PyList_Append(prefixes, item) < 0) {
            goto done;
        }
        Py_CLEAR(item);
    }
    if (problem != NULL) {
        PyErr_Format(PyExc_ValueError,
                     "environment variable " SW_POLICY_ENV ": "
                     SW_POLICY_EXPECTED ", got %R: %U", raw, problem);
        goto done;
    }
    result = PyList_AsTuple(prefixes);

done:
    Py_XDECREF(raw);
    Py_XDECREF(text);
    Py_XDECREF(comma);
    Py_XDECREF(parts);
    Py_XDECREF(prefixes);
    Py_XDECREF(item);
    Py_XDECREF(problem);
    return result;
}

/* Add to `notes` why the declaration `value` of entry point `ep` is not
 * used.  0, or -1 with an exception. */
static int
sw_pickle_note_named(PyObject *notes, PyObject *dist_name, PyObject *name,
                     PyObject *value, int kind)
{
    PyObject *note = PyUnicode_FromFormat(
        "the distribution %R declares %R (entry point %R of the group '"
        SW_POLICY_GROUP "'), which is not a module name prefix that can be "
        "imported on unpickle (%s); it is ignored", dist_name, value, name,
        sw_pickle_name_refusals[kind == SW_NAME_MAIN ? SW_NAME_MAIN
                                                     : SW_NAME_NOT_DOTTED]);
    int result = -1;

    if (note != NULL) {
        result = PyList_Append(notes, note);
        Py_DECREF(note);
    }
    return result;
}

static int
sw_pickle_note_declaration(PyObject *notes, PyObject *ep, PyObject *value,
                           int kind)
{
    PyObject *name = NULL, *dist = NULL, *dist_name = NULL;
    int result = -1;

    name = PyObject_GetAttrString(ep, "name");
    dist = name ? PyObject_GetAttrString(ep, "dist") : NULL;
    if (dist == NULL) {
        goto done;
    }
    dist_name = dist == Py_None ? Py_NewRef(Py_None)
                                : PyObject_GetAttrString(dist, "name");
    if (dist_name == NULL) {
        goto done;
    }
    result = sw_pickle_note_named(notes, dist_name, name, value, kind);

done:
    Py_XDECREF(name);
    Py_XDECREF(dist);
    Py_XDECREF(dist_name);
    return result;
}

/* One declared value: kept in `found` when it is a module name prefix,
 * else described in `notes` (by the distribution's and the entry point's
 * names, or through the entry point `ep` when given).  0, or -1. */
static int
sw_pickle_take_declared(PyObject *found, PyObject *notes, PyObject *value,
                        PyObject *ep, PyObject *dist_name, PyObject *name)
{
    PyObject *exact = NULL;
    int kind = SW_NAME_NOT_DOTTED, result = -1;

    if (PyUnicode_Check(value)) {
        exact = sw_exact_str(value);
        kind = exact ? sw_pickle_name_kind(exact) : -1;
    }
    if (kind < 0) {
        goto done;
    }
    if (kind == SW_NAME_OK) {
        /* exact str items: comparing them runs no code */
        int seen = PySequence_Contains(found, exact);
        if (seen < 0 || (!seen && PyList_Append(found, exact) < 0)) {
            goto done;
        }
    }
    else if ((ep != NULL ? sw_pickle_note_declaration(notes, ep, value, kind)
                         : sw_pickle_note_named(notes, dist_name, name, value, kind)) < 0) {
        goto done;
    }
    result = 0;

done:
    Py_XDECREF(exact);
    return result;
}

/* The group's declarations of one distribution, read from its
 * entry_points.txt without importlib.metadata's EntryPoint (CPython 3.15
 * refuses a whole listing when any entry point anywhere is malformed):
 * the lines `name = value` of the section [group].  0, or -1. */
static int
sw_pickle_read_dist(PyObject *dist, PyObject *found, PyObject *notes)
{
    PyObject *text = NULL, *lines = NULL, *dist_name = NULL;
    Py_ssize_t i, n;
    int in_group = 0, result = -1;

    text = PyObject_CallMethod(dist, "read_text", "s", "entry_points.txt");
    if (text == NULL) {
        return -1;
    }
    if (!PyUnicode_Check(text)) {
        Py_DECREF(text);
        return 0;       /* none */
    }
    dist_name = PyObject_GetAttrString(dist, "name");
    lines = dist_name ? PyUnicode_Splitlines(text, 0) : NULL;
    if (lines == NULL) {
        goto done;
    }
    n = PyList_GET_SIZE(lines);
    for (i = 0; i < n; i++) {
        PyObject *line = PyObject_CallMethod(PyList_GET_ITEM(lines, i), "strip", NULL);
        Py_ssize_t len, eq;
        int rc = 0;

        if (line == NULL || !PyUnicode_Check(line)) {
            Py_XDECREF(line);
            goto done;
        }
        len = PyUnicode_GET_LENGTH(line);
        if (len == 0 || PyUnicode_READ_CHAR(line, 0) == '#'
            || PyUnicode_READ_CHAR(line, 0) == ';') {
            Py_DECREF(line);
            continue;
        }
        if (PyUnicode_READ_CHAR(line, 0) == '[' && PyUnicode_READ_CHAR(line, len - 1) == ']') {
            PyObject *inner = PyUnicode_Substring(line, 1, len - 1), *group = NULL;
            group = inner ? PyObject_CallMethod(inner, "strip", NULL) : NULL;
            Py_XDECREF(inner);
            rc = group == NULL ? -1 : 0;
            in_group = group != NULL && PyUnicode_CompareWithASCIIString(
                group, SW_POLICY_GROUP) == 0;
            Py_XDECREF(group);
        }
        else if (in_group && (eq = PyUnicode_FindChar(line, '=', 0, len, 1)) >= 0) {
            PyObject *left = PyUnicode_Substring(line, 0, eq);
            PyObject *right = left ? PyUnicode_Substring(line, eq + 1, len) : NULL;
            PyObject *name = right ? PyObject_CallMethod(left, "strip", NULL) : NULL;
            PyObject *value = name ? PyObject_CallMethod(right, "strip", NULL) : NULL;
            rc = value == NULL ? -1 : sw_pickle_take_declared(found, notes, value, NULL,
                                                             dist_name, name);
            Py_XDECREF(left);
            Py_XDECREF(right);
            Py_XDECREF(name);
            Py_XDECREF(value);
        }
        Py_DECREF(line);
        if (rc < 0 || PyErr_Occurred()) {
            goto done;
        }
    }
    result = 0;

done:
    Py_XDECREF(text);
    Py_XDECREF(lines);
    Py_XDECREF(dist_name);
    return result;
}

/* Every distribution's declarations, one by one (sw_pickle_read_dist). */
static int
sw_pickle_read_dists(PyObject *metadata, PyObject *found, PyObject *notes)
{
    PyObject *dists = PyObject_CallMethod(metadata, "distributions", NULL);
    PyObject *iter = dists ? PyObject_GetIter(dists) : NULL, *dist;
    int result = iter ? 0 : -1;

    while (iter != NULL && (dist = PyIter_Next(iter)) != NULL) {
        result = sw_pickle_read_dist(dist, found, notes);
        Py_DECREF(dist);
        if (result < 0) {
            break;
        }
    }
    if (iter != NULL && result == 0 && PyErr_Occurred()) {
        result = -1;
    }
    Py_XDECREF(iter);
    Py_XDECREF(dists);
    return result;
}

/* The submodule `name` of importlib ("importlib.metadata", "importlib.util")
 * through the import system (new ref), or NULL with an exception.  The
 * import reads sys.modules["importlib"] (the parent package) unless the
 * submodule was imported before, so what it does would depend on what ran
 * earlier in the process: a stand-in there that is not a module object is
 * refused first, without touching it, whether or not the submodule is
 * imported yet.  The lookup uses an exact str key and runs no code. */
static PyObject *
sw_pickle_import_machinery(const char *name)
{
    PyObject *modules = PyImport_GetModuleDict();   /* borrowed */
    PyObject *parent = NULL;
    int found;

    found = PyDict_GetItemStringRef(modules, "importlib", &parent);
    if (found < 0) {
        return NULL;
    }
    if (found > 0 && !PyModule_CheckExact(parent)) {
        PyErr_Format(PyExc_ImportError,
                     "sys.modules['importlib'] holds an object of type %.200s, "
                     "not the importlib package: %s is not imported through it",
                     Py_TYPE(parent)->tp_name, name);
        Py_DECREF(parent);
        return NULL;
    }
    Py_XDECREF(parent);
    return PyImport_ImportModule(name);
}

/* The module name prefixes installed distributions declare in the entry-
 * point group (each entry point's value; its name is free), read through
 * importlib.metadata: a new sorted tuple of exact str without repeats.
 * This runs Python code.  A declaration that is not a module name prefix
 * is left out and described in *notes (a new list of str; the caller that
 * publishes the result warns about them); an error of the metadata
 * machinery itself propagates, never read as "allow all". */
static PyObject *
sw_pickle_read_declared(PyObject **notes)
{
    PyObject *metadata = NULL, *entry_points = NULL, *args = NULL;
    PyObject *kwargs = NULL, *eps = NULL, *iter = NULL, *ep = NULL;
    PyObject *value = NULL, *found = NULL, *result = NULL;

    *notes = PyList_New(0);
    found = PyList_New(0);
    args = PyTuple_New(0);
    kwargs = Py_BuildValue("{s:s}", "group", SW_POLICY_GROUP);
    if (*notes == NULL || found == NULL || args == NULL || kwargs == NULL) {
        goto done;
    }
    metadata = sw_pickle_import_machinery("importlib.metadata");
    if (metadata == NULL) {
        goto done;
    }
    entry_points = PyObject_GetAttrString(metadata, "entry_points");
    eps = entry_points ? PyObject_Call(entry_points, args, kwargs) : NULL;
    if (eps == NULL && PyErr_ExceptionMatches(PyExc_ValueError)) {
        /* a malformed entry point somewhere (CPython 3.15 validates them
         * all when listing): read the group distribution by distribution */
        PyErr_Clear();
        if (sw_pickle_read_dists(metadata, found, *notes) < 0) {
            goto done;
        }
        if (PyList_Sort(found) == 0) {
            result = PyList_AsTuple(found);
        }
        goto done;
    }
    iter = eps ? PyObject_GetIter(eps) : NULL;
    if (iter == NULL) {
        goto done;
    }
    while ((ep = PyIter_Next(iter)) != NULL) {
        value = PyObject_GetAttrString(ep, "value");
        if (value == NULL
            || sw_pickle_take_declared(found, *notes, value, ep, NULL, NULL) < 0) {
            goto done;
        }
        Py_CLEAR(value);
        Py_CLEAR(ep);
    }
    if (!PyErr_Occurred() && PyList_Sort(found) == 0) {
        result = PyList_AsTuple(found);
    }

done:
    Py_XDECREF(metadata);
    Py_XDECREF(entry_points);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    Py_XDECREF(eps);
    Py_XDECREF(iter);
    Py_XDECREF(ep);
    Py_XDECREF(value);
    Py_XDECREF(found);
    return result;
}

/* The policy record (new ref): Py_None or a (setting, declared) tuple.
 * The module's critical section (free-threaded builds) keeps a concurrent
 * publication from freeing it under us. */
static PyObject *
sw_pickle_load(PyObject *module, sw_state *st)
{
    PyObject *record;

    (void)module;   /* read only by the free-threaded critical section */
    Py_BEGIN_CRITICAL_SECTION(module);
    record = Py_XNewRef(st->import_policy);
    Py_END_CRITICAL_SECTION();
    if (record == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the stride_weave descriptor graph was finalized");
    }
    return record;
}

/* Replace the record `seen` (the caller holds a reference to it, so its
 * address cannot be reused meanwhile) by `fresh` (stolen) if the state
 * still holds it.  1 if stored, 0 if another thread stored first (`fresh`
 * is dropped), -1 with RuntimeError if the state was cleared.  The
 * replaced record is released after the critical section. */
static int
sw_pickle_publish(PyObject *module, sw_state *st, PyObject *seen,
                  PyObject *fresh)
{
    PyObject *replaced = NULL;
    int result;

    (void)module;
    Py_BEGIN_CRITICAL_SECTION(module);
    if (st->import_policy == seen) {
        replaced = st->import_policy;
        st->import_policy = fresh;
        fresh = NULL;
        result = 1;
    }
    else {
        result = st->import_policy == NULL ? -1 : 0;
    }
    Py_END_CRITICAL_SECTION();
    Py_XDECREF(replaced);
    Py_XDECREF(fresh);
    if (result < 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the stride_weave descriptor graph was finalized");
    }
    return result;
}

/* The policy record as a (setting, declared) tuple (new ref), reading the
 * environment variable if no setting was made yet, and, if
 * `with_declared`, the declarations when the setting is a tuple of
 * prefixes.  Each value is computed with nothing borrowed and no lock held,
 * then published over the record it was computed from; the winner of a
 * race warns about the declarations it left out. */
static PyObject *
sw_pickle_policy(PyObject *module, sw_state *st, int with_declared)
{
    PyObject *record = NULL, *setting = NULL, *declared = NULL;
    PyObject *notes = NULL, *fresh = NULL;
    Py_ssize_t i;
    int published_declared = 0;

    for (;;) {
        int adds_declared = 0, stored;

        record = sw_pickle_load(module, st);
        if (record == NULL) {
            goto error;
        }
        if (record == Py_None) {
            if (setting == NULL
                && (setting = sw_pickle_setting_from_env()) == NULL) {
                goto error;
            }
            fresh = PyTuple_Pack(2, setting, Py_None);
        }
        else if (with_declared && PyTuple_Check(PyTuple_GET_ITEM(record, 0))
                 && PyTuple_GET_ITEM(record, 1) == Py_None) {
            if (declared == NULL
                && (declared = sw_pickle_read_declared(&notes)) == NULL) {
                goto error;
            }
            fresh = PyTuple_Pack(2, PyTuple_GET_ITEM(record, 0), declared);
            adds_declared = 1;
        }
        else {
            break;
        }
        if (fresh == NULL) {
            goto error;
        }
        stored = sw_pickle_publish(module, st, record, fresh);
        fresh = NULL;
        if (stored < 0) {
            goto error;
        }
        published_declared |= stored && adds_declared;
        Py_CLEAR(record);
    }
    for (i = 0; published_declared && i < PyList_GET_SIZE(notes); i++) {
        if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "%U",
                             PyList_GET_ITEM(notes, i)) < 0) {
            goto error;
        }
    }
    Py_XDECREF(setting);
    Py_XDECREF(declared);
    Py_XDECREF(notes);
    return record;

error:
    Py_XDECREF(record);
    Py_XDECREF(setting);
    Py_XDECREF(declared);
    Py_XDECREF(notes);
    return NULL;
}

/* 1 if one of `prefixes` (a tuple of exact str) is `hint` or a package of
 * it: "mylib" covers "mylib" and "mylib.x", not "mylibrary". */
static int
sw_pickle_covers(PyObject *prefixes, PyObject *hint)
{
    Py_ssize_t i, len = PyUnicode_GET_LENGTH(hint);

    for (i = 0; i < PyTuple_GET_SIZE(prefixes); i++) {
        PyObject *prefix = PyTuple_GET_ITEM(prefixes, i);
        Py_ssize_t plen = PyUnicode_GET_LENGTH(prefix);

        if (plen <= len && PyUnicode_Tailmatch(hint, prefix, 0, plen, -1) == 1
            && (len == plen || PyUnicode_READ_CHAR(hint, plen) == '.')) {
            return 1;
        }
    }
    return 0;
}

/* Whether the policy `record` lets `hint` be imported: 1 yes, 0 no, 2 not
 * known before the declarations are read. */
static int
sw_pickle_allows(PyObject *record, PyObject *hint)
{
    PyObject *setting = PyTuple_GET_ITEM(record, 0);
    PyObject *declared = PyTuple_GET_ITEM(record, 1);

    if (setting == Py_True || setting == Py_False) {
        return setting == Py_True;
    }
    if (sw_pickle_covers(setting, hint)) {
        return 1;
    }
    return declared == Py_None ? 2 : sw_pickle_covers(declared, hint);
}

/* What unpickle_imports() reports for `record` (new ref): True, False, or
 * the user's prefixes followed by the declared ones they do not repeat. */
static PyObject *
sw_pickle_effective(PyObject *record)
{
    PyObject *setting = PyTuple_GET_ITEM(record, 0);
    PyObject *declared = PyTuple_GET_ITEM(record, 1);
    PyObject *all, *result;
    Py_ssize_t i;

    if (!PyTuple_Check(setting) || !PyTuple_Check(declared)
        || PyTuple_GET_SIZE(declared) == 0) {
        return Py_NewRef(setting);
    }
    all = PySequence_List(setting);
    if (all == NULL) {
        return NULL;
    }
    for (i = 0; i < PyTuple_GET_SIZE(declared); i++) {
        PyObject *prefix = PyTuple_GET_ITEM(declared, i);
        int seen = PySequence_Contains(setting, prefix);   /* exact str */
        if (seen < 0 || (!seen && PyList_Append(all, prefix) < 0)) {
            Py_DECREF(all);
            return NULL;
        }
    }
    result = PyList_AsTuple(all);
    Py_DECREF(all);
    return result;
}

/* Why the policy `record` refuses a module (a new str). */
static PyObject *
sw_pickle_policy_refusal(PyObject *record)
{
    PyObject *allowed, *reason;

    if (PyTuple_GET_ITEM(record, 0) == Py_False) {
        return PyUnicode_FromString(
            "importing on unpickle is turned off "
            "(stride_weave.dtypes.set_unpickle_imports)");
    }
    allowed = sw_pickle_effective(record);
    if (allowed == NULL) {
        return NULL;
    }
    reason = PyTuple_GET_SIZE(allowed) == 0
        ? PyUnicode_FromString("it is not under the allowed module prefixes, "
                               "and there are none (" SW_POLICY_HOW ")")
        : PyUnicode_FromFormat("it is not under the allowed module prefixes "
                               "%R (" SW_POLICY_HOW ")", allowed);
    Py_DECREF(allowed);
    return reason;
}

/* Raise the LookupError of a load whose hinted module raised while
 * `doing` ("importing", "finding") it, with that exception as __cause__;
 * always NULL.  Whatever it raised becomes the LookupError (a SystemExit
 * of a module's code must not end the process that loads a pickle),
 * except KeyboardInterrupt: the user's, delivered wherever the process
 * was, it propagates. */
static PyObject *
sw_pickle_import_failed(PyObject *name, PyObject *hint, const char *doing)
{
    PyObject *cause, *text, *exc;

    if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
        return NULL;
    }
    cause = PyErr_GetRaisedException();     /* owned, with its traceback */
    if (cause == NULL) {   /* not reached: the caller saw an exception */
        return NULL;
    }
    text = PyObject_Str(cause);
    if (text == NULL) {
        /* As a traceback shows an exception whose str() fails. */
        if (!PyErr_ExceptionMatches(PyExc_Exception)) {
            Py_DECREF(cause);
            return NULL;
        }
        PyErr_Clear();
        text = PyUnicode_FromString("<exception str() failed>");
        if (text == NULL) {
            Py_DECREF(cause);
            return NULL;
        }
    }
    PyErr_Format(PyExc_LookupError,
                 "cannot unpickle descriptor %R: no descriptor is registered "
                 "under that name in this process, and %s its module %R "
                 "raised %s: %U (import or register its definition before "
                 "loading)", name, doing, hint, Py_TYPE(cause)->tp_name, text);
    Py_DECREF(text);
    exc = PyErr_GetRaisedException();
    if (exc != NULL) {
        PyException_SetCause(exc, cause);   /* steals cause */
    }
    else {
        Py_DECREF(cause);
    }
    PyErr_SetRaisedException(exc);
    return NULL;
}

/* Why the module hint may not be imported (a new str), or Py_None (new
 * ref) when it may.  NULL with an exception that propagates: a malformed
 * environment variable, the metadata machinery's error, memory, or the
 * LookupError of a finder that raised. */
static PyObject *
sw_pickle_import_refusal(PyObject *module, sw_state *st, PyObject *name,
                         PyObject *hint)
{
    PyObject *record = NULL, *top = NULL, *modules, *util = NULL;
    PyObject *spec = NULL, *reason = NULL;
    Py_ssize_t dot;
    int kind, allowed;

    /* The name first: these are refused before the policy is read. */
    kind = sw_pickle_name_kind(hint);
    if (kind < 0) {
        return NULL;
    }
    if (kind != SW_NAME_OK) {
        return PyUnicode_FromString(sw_pickle_name_refusals[kind]);
    }
    record = sw_pickle_policy(module, st, 0);
    if (record == NULL) {
        return NULL;
    }
    allowed = sw_pickle_allows(record, hint);
    if (allowed == 2) {
        /* The setting is read: only reading the declarations can fail
         * here, and a load fails with its LookupError whatever the
         * metadata machinery (or sys.modules) holds; nothing is kept, so
         * a later load reads them again. */
        Py_SETREF(record, sw_pickle_policy(module, st, 1));
        if (record == NULL) {
            return sw_pickle_import_failed(
                name, hint, "reading which modules installed "
                "distributions declare, to decide on");
        }
        allowed = sw_pickle_allows(record, hint);
    }
    if (allowed != 1) {
        reason = sw_pickle_policy_refusal(record);
        Py_DECREF(record);
        return reason;
    }
    Py_CLEAR(record);
    /* Only a module importable by that name here: its top-level package is
     * already imported or has a spec on sys.path.  find_spec of a
     * top-level name imports nothing (it runs the finders). */
    dot = PyUnicode_FindChar(hint, '.', 0, PyUnicode_GET_LENGTH(hint), 1);
    if (dot == -2) {
        return NULL;
    }
    top = dot < 0 ? Py_NewRef(hint) : PyUnicode_Substring(hint, 0, dot);
    if (top == NULL) {
        return NULL;
    }
    modules = PyImport_GetModuleDict();   /* borrowed: the interpreter's */
    allowed = PyDict_Contains(modules, top);
    if (allowed < 0) {
        goto done;
    }
    if (!allowed) {
        util = sw_pickle_import_machinery("importlib.util");
        if (util == NULL) {
            sw_pickle_import_failed(name, hint, "finding");
            goto done;
        }
        spec = PyObject_CallMethod(util, "find_spec", "O", top);
        if (spec == NULL) {
            sw_pickle_import_failed(name, hint, "finding");
            goto done;
        }
        if (spec == Py_None) {
            reason = PyUnicode_FromFormat(
                "no top-level module %R is importable in this process", top);
            goto done;
        }
    }
    reason = Py_NewRef(Py_None);

done:
    Py_XDECREF(spec);
    Py_XDECREF(util);
    Py_DECREF(top);
    return reason;
}

/* The name is not registered: try the module hint.  Returns the
 * descriptor now registered under `name` (new ref), or NULL with
 * LookupError set (another exception only when it must propagate, such as
 * KeyboardInterrupt or a malformed policy variable). */
static PyObject *
sw_pickle_import_and_find(PyObject *module, sw_state *st, PyObject *name,
                          PyObject *hint)
{
    PyObject *reason, *imported, *found;

    if (hint == NULL) {
        PyErr_Format(PyExc_LookupError,
                     "cannot unpickle descriptor %R: no descriptor is "
                     "registered under that name in this process (import "
                     "or register its definition before loading)", name);
        return NULL;
    }
    reason = sw_pickle_import_refusal(module, st, name, hint);
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
        return sw_pickle_import_failed(name, hint, "importing");
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
    if (nargs < 2 || nargs > 4) {
        PyErr_Format(PyExc_TypeError,
                     "_reconstruct() takes 2 to 4 arguments (name, "
                     "structure[, module[, numeric records]]), or a record "
                     "and an optional module, got %zd", nargs);
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
    if (nargs >= 3 && sw_pickle_hint(args[2], exact, &hint) < 0) {
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
    /* The numeric records the pickle states, by the rule of a record's. */
    if (sw_record_check_stated(st, d, nargs == 4 && args[3] != Py_None
                                      ? args[3] : NULL) < 0) {
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

/* Nothing is read at import: a malformed variable is an error where the
 * policy is first needed, not a failed import of stride_weave, and
 * importlib.metadata is imported only if declarations are needed. */
int
sw_pickle_init_policy(sw_state *st)
{
    st->import_policy = Py_NewRef(Py_None);
    return 0;
}

static PyObject *
sw_pickle_imports(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    sw_state *st = sw_state_of_module(module);
    PyObject *record, *result;

    if (sw_state_check(st) < 0) {
        return NULL;
    }
    record = sw_pickle_policy(module, st, 1);
    if (record == NULL) {
        return NULL;
    }
    result = sw_pickle_effective(record);
    Py_DECREF(record);
    return result;
}

static PyObject *
sw_pickle_set_imports(PyObject *module, PyObject *allow)
{
    sw_state *st = sw_state_of_module(module);
    PyObject *setting, *record = NULL, *fresh, *previous = NULL;
    int stored = 0;

    if (sw_state_check(st) < 0) {
        return NULL;
    }
    setting = sw_pickle_setting_from(allow);
    if (setting == NULL) {
        return NULL;
    }
    /* The previous setting is returned, so the environment variable is
     * read if nothing was set yet.  The declarations already read stay. */
    while (!stored) {
        Py_XSETREF(record, sw_pickle_policy(module, st, 0));
        if (record == NULL) {
            goto done;
        }
        fresh = PyTuple_Pack(2, setting, PyTuple_GET_ITEM(record, 1));
        if (fresh == NULL) {
            goto done;
        }
        stored = sw_pickle_publish(module, st, record, fresh);
        if (stored < 0) {
            goto done;
        }
    }
    previous = Py_NewRef(PyTuple_GET_ITEM(record, 0));

done:
    Py_XDECREF(record);
    Py_DECREF(setting);
    return previous;
}

/* The setting the environment variable asks for now, read again whatever
 * the policy holds: stride_weave.workers checks it in the parent before
 * any worker starts, so a malformed value fails where the user is. */
static PyObject *
sw_pickle_environment_setting(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return sw_pickle_setting_from_env();
}

PyMethodDef sw_pickle_methods[] = {
    {"_reconstruct", SW_CFUNC(sw_pickle_reconstruct), METH_FASTCALL,
     PyDoc_STR("_reconstruct($module, name, structure, module=None, "
              "numeric=None, /)\n--\n\n"
              "Return the descriptor registered under name if its structure "
              "equals structure exactly, and the numeric records of the "
              "simple dtypes it defines equal those numeric states (when "
              "given).\n\n"
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
               "Return which modules unpickling a descriptor may import to "
               "find a name that is not registered: True (any importable "
               "module), False (none) or a tuple of module name prefixes, "
               "those set_unpickle_imports() (or the environment variable "
               SW_POLICY_ENV ") allows followed by those installed "
               "distributions declare in the entry-point group '"
               SW_POLICY_GROUP "'.\n\n"
               "The first use of the policy reads the variable (a malformed "
               "value is a ValueError) and, for prefixes, the declarations.")},
    {"set_unpickle_imports", sw_pickle_set_imports, METH_O,
     PyDoc_STR("set_unpickle_imports($module, allow, /)\n--\n\n"
               "Set which modules unpickling a descriptor may import to "
               "find a name that is not registered, and return the "
               "previous setting.\n\n"
               "allow is an iterable of module name prefixes ('mylib' "
               "allows mylib and mylib.*), to which the modules installed "
               "distributions declare in the entry-point group '"
               SW_POLICY_GROUP "' are added; () is the default.  True "
               "allows any importable module, False none (an unregistered "
               "name is then always LookupError).  A name that is not a "
               "dotted name of identifiers, or has a __main__ part, is "
               "never imported.  The environment variable " SW_POLICY_ENV
               " sets the initial value: 'any', 'none' or comma-separated "
               "prefixes.")},
    {"_unpickle_imports_environment", sw_pickle_environment_setting,
     METH_NOARGS,
     PyDoc_STR("_unpickle_imports_environment($module, /)\n--\n\n"
               "The setting the environment variable " SW_POLICY_ENV " asks "
               "for now: () when unset or blank, True for 'any', False for "
               "'none', else a tuple of module name prefixes.  ValueError "
               "when it is malformed, as at the policy's first use.  It "
               "reads the process environment again and changes nothing.")},
    {NULL, NULL, 0, NULL},
};
