/*
 * _proftop_fast.c - the zero-code helper's per-call paths in C: a CPython
 * extension module built against the stable ABI (Py_LIMITED_API 3.8), so
 * one build loads into every Python from 3.8 on. proftop_auto.py imports it
 * when it is there and keeps its pure-Python wrappers otherwise; the
 * behaviour is the same, the cost per call is not (docs/benchmarks.md).
 *
 * What it owns, each a callable that Python installs where the Python
 * wrapper would go, and which hands the Python wrapper (slow) every call it
 * does not take, before it has changed anything:
 *   - ModuleCall: nn.Module.__call__. A call below the outermost one on its
 *     thread records its operator (the label map of the thread's state, as
 *     proftop_phases._wrap_module_call does); the outermost call too, in a
 *     training loop's stride (root_setup: the Forward phase, the step's
 *     start, its input's samples); a call with no thread state yet, a
 *     thread that compiles and every other outermost call go to slow,
 *     which holds every rule about steps and phases.
 *   - StepCall: an optimizer's step and zero_grad, a scheduler's step,
 *     backward, in the same stride, called by the Python wrappers (which
 *     stay functions: torch and LR schedulers look for one).
 *   - FetchCall: a DataLoader iterator's __next__ without workers: the
 *     Dataloader phase, and the step that ends there (proftop_steps'
 *     _emit_step's common case: the probe's step span, the helper's own
 *     cost, a look at the control word).
 *   - Timed: a Dataset's __getitem__, a user range per call, named by the
 *     object's class (the ids dict); an unknown class goes to slow once.
 *   - Compose: torchvision's Compose.__call__, each transform a user range.
 *   - Stage: a fetcher's fetch and its collate_fn, a user range each.
 *   - TSBase: the C part of the helper's per-thread state (the fields the
 *     paths above read and write), which Python's _TS extends; bind_ts()
 *     files a thread's state in the thread's own state dict, where the C
 *     paths find it.
 *
 * In a real loop each call into the helper comes with the caches cold
 * (torch's kernels ran in between): a Python wrapper costs 5-15 us there
 * where its hot loop says 1-3 us; these paths touch a small part of that.
 *
 * The probe's entry points come as addresses from ctypes (the very library
 * the helper already calls), so this module links nothing but the
 * interpreter; the seven the helper calls most, and the four it calls
 * once a step, are here under their own names too (proftop_op_push_id...),
 * for its Python code (_HotLib). It never raises an error of its own into the program: what
 * goes wrong in its bookkeeping is cleared and the call goes on unrecorded;
 * the wrapped call's own result or exception passes through unchanged.
 * Everything here runs under the GIL (the counters and flags need nothing
 * more).
 */
#include "_proftop_fast.h"

push_fn op_push, range_push;
pop_fn op_pop, range_pop, phase_pop;
phase_fn phase_push;
now_fn clock_now, control_word;
span_fn step_span;
u64_fn step_tokens;
u64x2_fn helper_stats;
PyObject *g_globals;
PyObject *k_off, *k_dp_on, *k_ts, *k_transforms, *k_name;
PyObject *g_functype;
PyTypeObject *TSBase_T, *Bound_T;
unsigned long long g_calls;

static PyMemberDef ts_members[] = {
	{"depth", T_INT, offsetof(TSBase, depth), 0, NULL},
	{"compiling", T_INT, offsetof(TSBase, compiling), 0, NULL},
	{"names", T_OBJECT, offsetof(TSBase, names), 0, NULL},
	{"root", T_OBJECT, offsetof(TSBase, root), 0, NULL},
	{"start", T_OBJECT, offsetof(TSBase, start), 0, NULL},
	{"pending", T_OBJECT, offsetof(TSBase, pending), 0, NULL},
	{"bwd_end", T_OBJECT, offsetof(TSBase, bwd_end), 0, NULL},
	{"gen_open", T_OBJECT, offsetof(TSBase, gen_open), 0, NULL},
	{"in_bwd", T_OBJECT, offsetof(TSBase, in_bwd), 0, NULL},
	{"in_opt", T_OBJECT, offsetof(TSBase, in_opt), 0, NULL},
	{"in_fetch", T_OBJECT, offsetof(TSBase, in_fetch), 0, NULL},
	{"soft", T_OBJECT, offsetof(TSBase, soft), 0, NULL},
	{"held", T_OBJECT, offsetof(TSBase, held), 0, NULL},
	{"partial", T_OBJECT, offsetof(TSBase, partial), 0, NULL},
	{"loader_samples", T_LONGLONG, offsetof(TSBase, loader_samples), 0, NULL},
	{"loader_tokens", T_LONGLONG, offsetof(TSBase, loader_tokens), 0, NULL},
	{"fetches", T_LONGLONG, offsetof(TSBase, fetches), 0, NULL},
	{"fwd_samples", T_LONGLONG, offsetof(TSBase, fwd_samples), 0, NULL},
	{"fwd_tokens", T_LONGLONG, offsetof(TSBase, fwd_tokens), 0, NULL},
	{NULL, 0, 0, 0, NULL},
};

/* The end of every dealloc here: the memory back through the instance's own
 * type (a Python subclass of TSBase frees through the GC), and the type's
 * reference (an instance of a heap type holds its type). */
static void heap_free(PyObject *o)
{
	PyTypeObject *tp = Py_TYPE(o);
	freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
	f(o);
	Py_DECREF(tp);
}

static void ts_dealloc(PyObject *self)
{
	TSBase *ts = (TSBase *)self;
	Py_CLEAR(ts->names);
	Py_CLEAR(ts->root);
	Py_CLEAR(ts->start);
	Py_CLEAR(ts->pending);
	Py_CLEAR(ts->bwd_end);
	Py_CLEAR(ts->gen_open);
	Py_CLEAR(ts->in_bwd);
	Py_CLEAR(ts->in_opt);
	Py_CLEAR(ts->in_fetch);
	Py_CLEAR(ts->soft);
	Py_CLEAR(ts->held);
	Py_CLEAR(ts->partial);
	heap_free(self);
}


static PyType_Slot ts_slots[] = {
	{Py_tp_dealloc, (void *)ts_dealloc},
	{Py_tp_members, ts_members},
	{Py_tp_doc, "proftop's per-thread state (the C part)"},
	{0, NULL},
};

static PyType_Spec ts_spec = {"_proftop_fast.TSBase", sizeof(TSBase), 0,
			      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, ts_slots};



/* ---- a bound wrapper (getattr(obj, "__call__") and the like) */

typedef struct {
	PyObject_HEAD
	PyObject *func; /* one of the wrapper types below */
	PyObject *self;
} Bound;

static void bound_dealloc(PyObject *o)
{
	Bound *b = (Bound *)o;
	Py_CLEAR(b->func);
	Py_CLEAR(b->self);
	heap_free(o);
}

PyObject *call_with(PyObject *fn, PyObject *self, PyObject *args, PyObject *kw)
{
	if (!self)
		return PyObject_Call(fn, args, kw);
	Py_ssize_t n = PyTuple_Size(args);
	PyObject *all = PyTuple_New(n + 1);
	if (!all)
		return NULL;
	Py_INCREF(self);
	PyTuple_SetItem(all, 0, self);
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *a = PyTuple_GetItem(args, i);
		Py_INCREF(a);
		PyTuple_SetItem(all, i + 1, a);
	}
	PyObject *r = PyObject_Call(fn, all, kw);
	Py_DECREF(all);
	return r;
}

static PyObject *bound_call(PyObject *o, PyObject *args, PyObject *kw)
{
	Bound *b = (Bound *)o;
	return call_with(b->func, b->self, args, kw);
}

static PyType_Slot bound_slots[] = {
	{Py_tp_dealloc, (void *)bound_dealloc},
	{Py_tp_call, (void *)bound_call},
	{0, NULL},
};

static PyType_Spec bound_spec = {"_proftop_fast.bound", sizeof(Bound), 0, Py_TPFLAGS_DEFAULT,
				 bound_slots};


static void wrap_dealloc(PyObject *o)
{
	Wrap *w = (Wrap *)o;
	Py_CLEAR(w->orig);
	Py_CLEAR(w->slow);
	Py_CLEAR(w->aux);
	Py_CLEAR(w->aux2);
	heap_free(o);
}

/* A descriptor, as the function it replaces: looked up on an instance it
 * binds to it (the type's own call slot calls it unbound, with self first:
 * Py_TPFLAGS_METHOD_DESCRIPTOR). */
static PyObject *wrap_get(PyObject *o, PyObject *obj, PyObject *type)
{
	if (!obj || obj == Py_None) {
		Py_INCREF(o);
		return o;
	}
	Bound *b = PyObject_New(Bound, Bound_T);
	if (!b)
		return NULL;
	Py_INCREF(o);
	Py_INCREF(obj);
	b->func = o;
	b->self = obj;
	return (PyObject *)b;
}

/* The wrapped function's attributes (__name__, __doc__, __module__...) are
 * the wrapper's; __wrapped__ is the wrapped function itself. */
static PyObject *wrap_getattro(PyObject *o, PyObject *name)
{
	PyObject *r = PyObject_GenericGetAttr(o, name);
	if (r || !PyErr_ExceptionMatches(PyExc_AttributeError))
		return r;
	PyErr_Clear();
	Wrap *w = (Wrap *)o;
	if (PyUnicode_CompareWithASCIIString(name, "__wrapped__") == 0) {
		Py_INCREF(w->orig);
		return w->orig;
	}
	return PyObject_GetAttr(w->orig, name);
}

/* nn.Module.__call__ */
static PyObject *module_call(PyObject *o, PyObject *args, PyObject *kw)
{
	Wrap *w = (Wrap *)o;
	if (PyDict_GetItem(g_globals, k_off) != Py_False)
		return PyObject_Call(w->orig, args, kw);
	TSBase *ts = cur_ts();
	PyObject *res;
	if (ts && ts->depth == 0 && root_module_call(w, ts, args, kw, &res))
		return res;
	if (!ts || ts->depth <= 0 || ts->compiling)
		return PyObject_Call(w->slow, args, kw);
	PyObject *mod = PyTuple_GetItem(args, 0);
	if (!mod)
		return NULL;
	Py_INCREF(ts);
	int code = 0, d = ts->depth;
	PyObject *names = ts->names;
	if (names && names != Py_None) {
		Py_INCREF(names);
		PyObject *key = PyLong_FromVoidPtr(mod); /* id(mod), the map's key */
		PyObject *ent = key ? PyDict_GetItem(names, key) : NULL;
		Py_XDECREF(key);
		if (ent)
			Py_INCREF(ent);
		else
			ent = PyObject_CallFunctionObjArgs(w->aux, (PyObject *)ts, mod, NULL);
		if (ent && PyTuple_Check(ent) && PyTuple_Size(ent) >= 1) {
			unsigned long id = PyLong_AsUnsignedLong(PyTuple_GetItem(ent, 0));
			if (id && id <= UINT32_MAX) {
				op_push((uint32_t)id);
				code = 1;
			}
		}
		Py_XDECREF(ent);
		Py_DECREF(names);
		if (PyErr_Occurred())
			PyErr_Clear(); /* the helper's bookkeeping, never the program's */
	}
	ts->depth = d + 1;
	PyObject *r = PyObject_Call(w->orig, args, kw);
	ts->depth = d;
	if (code)
		op_pop();
	g_calls++;
	Py_DECREF(ts);
	return r;
}

/* A Dataset's __getitem__ */
static PyObject *timed_call(PyObject *o, PyObject *args, PyObject *kw)
{
	Wrap *w = (Wrap *)o;
	if (!flag_true(k_dp_on))
		return PyObject_Call(w->orig, args, kw);
	PyObject *self = PyTuple_GetItem(args, 0);
	if (!self)
		return NULL;
	PyObject *idv = PyDict_GetItem(w->aux, (PyObject *)Py_TYPE(self));
	unsigned long id = idv ? PyLong_AsUnsignedLong(idv) : 0;
	if (!id || id > UINT32_MAX) {
		if (PyErr_Occurred())
			PyErr_Clear();
		return PyObject_Call(w->slow, args, kw); /* names it, and next time it is here */
	}
	range_push((uint32_t)id);
	PyObject *r = PyObject_Call(w->orig, args, kw);
	range_pop();
	g_calls++;
	return r;
}

/* A stage of making a batch (proftop_data): a fetcher's fetch ("batch"; once
 * its instance says _proftop_timed, its collate_fn being timed: slow sees
 * to that first) and the collate_fn ("collate_fn"). aux: the stage ids by
 * text (proftop_data._dp_ids); aux2: (text, the instance's attribute that
 * must be true, or None). A stage not named yet goes to slow, which names it. */
static PyObject *stage_call(PyObject *o, PyObject *args, PyObject *kw)
{
	Wrap *w = (Wrap *)o;
	if (!flag_true(k_dp_on))
		return PyObject_Call(w->orig, args, kw);
	PyObject *text = PyTuple_GetItem(w->aux2, 0), *attr = PyTuple_GetItem(w->aux2, 1);
	if (!text || !attr)
		return NULL;
	if (attr != Py_None) {
		PyObject *self = PyTuple_Size(args) > 0 ? PyTuple_GetItem(args, 0) : NULL;
		PyObject *v = self ? PyObject_GetAttr(self, attr) : NULL;
		int yes = v ? PyObject_IsTrue(v) == 1 : 0;
		Py_XDECREF(v);
		if (PyErr_Occurred())
			PyErr_Clear();
		if (!yes)
			return PyObject_Call(w->slow, args, kw);
	}
	PyObject *idv = PyDict_GetItem(w->aux, text);
	unsigned long id = idv ? PyLong_AsUnsignedLong(idv) : 0;
	if (!id || id > UINT32_MAX) {
		if (PyErr_Occurred())
			PyErr_Clear();
		return PyObject_Call(w->slow, args, kw);
	}
	range_push((uint32_t)id);
	PyObject *r = PyObject_Call(w->orig, args, kw);
	range_pop();
	return r;
}

/* The stage id of one transform: by its class, or a function's by its name. */
static unsigned long transform_id(Wrap *w, PyObject *t)
{
	PyObject *key = (PyObject *)Py_TYPE(t), *name = NULL;
	if (key == g_functype) {
		name = PyObject_GetAttr(t, k_name);
		if (!name) {
			PyErr_Clear();
			return 0;
		}
		key = name;
	}
	PyObject *idv = PyDict_GetItem(w->aux, key);
	Py_XDECREF(name);
	if (idv)
		Py_INCREF(idv);
	else
		idv = PyObject_CallFunctionObjArgs(w->aux2, t, NULL);
	unsigned long id = idv ? PyLong_AsUnsignedLong(idv) : 0;
	Py_XDECREF(idv);
	if (PyErr_Occurred()) {
		PyErr_Clear();
		id = 0;
	}
	return id <= UINT32_MAX ? id : 0;
}

/* torchvision's Compose.__call__(self, img): each transform in turn */
static PyObject *compose_call(PyObject *o, PyObject *args, PyObject *kw)
{
	Wrap *w = (Wrap *)o;
	if (!flag_true(k_dp_on) || kw || PyTuple_Size(args) != 2)
		return PyObject_Call(w->slow, args, kw);
	PyObject *self = PyTuple_GetItem(args, 0);
	PyObject *tfs = PyObject_GetAttr(self, k_transforms);
	if (!tfs) {
		PyErr_Clear();
		return PyObject_Call(w->orig, args, kw);
	}
	if (!PyList_CheckExact(tfs)) {
		Py_DECREF(tfs);
		return PyObject_Call(w->orig, args, kw);
	}
	PyObject *img = PyTuple_GetItem(args, 1);
	Py_INCREF(img);
	for (Py_ssize_t i = 0; i < PyList_Size(tfs); i++) {
		PyObject *t = PyList_GetItem(tfs, i);
		Py_INCREF(t);
		unsigned long id = transform_id(w, t);
		if (id)
			range_push((uint32_t)id);
		PyObject *next = PyObject_CallFunctionObjArgs(t, img, NULL);
		if (id)
			range_pop();
		Py_DECREF(t);
		Py_DECREF(img);
		img = next;
		if (!img)
			break;
	}
	Py_DECREF(tfs);
	g_calls++;
	return img;
}

static PyMemberDef wrap_members[] = {
	{"orig", T_OBJECT, offsetof(Wrap, orig), READONLY, NULL},
	{"slow", T_OBJECT, offsetof(Wrap, slow), READONLY, NULL},
	{NULL, 0, 0, 0, NULL},
};

#define WRAP_SPEC(var, pyname, callfn)                                                        \
	static PyType_Slot var##_slots[] = {                                                  \
		{Py_tp_dealloc, (void *)wrap_dealloc}, {Py_tp_call, (void *)callfn},          \
		{Py_tp_descr_get, (void *)wrap_get},   {Py_tp_getattro, (void *)wrap_getattro}, \
		{Py_tp_members, wrap_members},         {0, NULL},                             \
	};                                                                                    \
	static PyType_Spec var##_spec = {"_proftop_fast." pyname, sizeof(Wrap), 0,            \
					 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_METHOD_DESCRIPTOR,   \
					 var##_slots}

WRAP_SPEC(mc, "ModuleCall", module_call);
WRAP_SPEC(tm, "Timed", timed_call);
WRAP_SPEC(cp, "Compose", compose_call);
WRAP_SPEC(sc, "StepCall", step_call);
WRAP_SPEC(fc, "FetchCall", fetch_call);
WRAP_SPEC(st, "Stage", stage_call);

static PyTypeObject *MC_T, *TM_T, *CP_T, *SC_T, *FC_T, *ST_T;

/* ---- module functions */

static PyObject *make_wrap(PyTypeObject *tp, PyObject *args)
{
	PyObject *orig, *slow, *aux, *aux2 = Py_None;
	if (!PyArg_ParseTuple(args, "OOO|O", &orig, &slow, &aux, &aux2))
		return NULL;
	Wrap *w = PyObject_New(Wrap, tp);
	if (!w)
		return NULL;
	Py_INCREF(orig);
	Py_INCREF(slow);
	Py_INCREF(aux);
	Py_INCREF(aux2);
	w->orig = orig;
	w->slow = slow;
	w->aux = aux;
	w->aux2 = aux2;
	return (PyObject *)w;
}

static PyObject *f_module_call(PyObject *m, PyObject *args)
{
	return make_wrap(MC_T, args);
}

static PyObject *f_timed(PyObject *m, PyObject *args)
{
	return make_wrap(TM_T, args);
}

static PyObject *f_compose(PyObject *m, PyObject *args)
{
	return make_wrap(CP_T, args);
}

static PyObject *f_stage(PyObject *m, PyObject *args)
{
	PyObject *orig, *slow, *ids, *how;
	if (!PyArg_ParseTuple(args, "OOOO", &orig, &slow, &ids, &how))
		return NULL;
	if (!PyDict_Check(ids) || !PyTuple_Check(how) || PyTuple_Size(how) != 2) {
		PyErr_SetString(PyExc_TypeError, "stage: ids a dict, (text, attribute or None)");
		return NULL;
	}
	return make_wrap(ST_T, args);
}

static PyObject *f_fetch_call(PyObject *m, PyObject *args)
{
	return make_wrap(FC_T, args);
}

static PyObject *f_step_call(PyObject *m, PyObject *args)
{
	PyObject *orig, *slow, *meth, *kind;
	if (!PyArg_ParseTuple(args, "OOOO", &orig, &slow, &meth, &kind))
		return NULL;
	long k = PyLong_AsLong(kind);
	if ((k == -1 && PyErr_Occurred()) || k < K_OPT_STEP || k > K_BACKWARD) {
		PyErr_Clear();
		PyErr_SetString(PyExc_ValueError, "step_call: kind 1 (step), 2 (extra), 3 (backward)");
		return NULL;
	}
	return make_wrap(SC_T, args);
}

/* setup(globals, (op_push_id, op_pop, range_push_id, range_pop, phase_push,
 * phase_pop, now), functype): the helper's globals and the probe's entry
 * points (their addresses, from ctypes). */
static PyObject *f_setup(PyObject *m, PyObject *args)
{
	PyObject *g, *ft;
	unsigned long long a, b, c, d, e, f, n;
	if (!PyArg_ParseTuple(args, "O(KKKKKKK)O", &g, &a, &b, &c, &d, &e, &f, &n, &ft))
		return NULL;
	if (!PyDict_Check(g) || !a || !b || !c || !d || !e || !f || !n) {
		PyErr_SetString(PyExc_ValueError, "setup: a dict and seven entry points");
		return NULL;
	}
	Py_INCREF(g);
	Py_XDECREF(g_globals);
	g_globals = g;
	Py_INCREF(ft);
	Py_XDECREF(g_functype);
	g_functype = ft;
	op_push = (push_fn)(uintptr_t)a;
	op_pop = (pop_fn)(uintptr_t)b;
	range_push = (push_fn)(uintptr_t)c;
	range_pop = (pop_fn)(uintptr_t)d;
	phase_push = (phase_fn)(uintptr_t)e;
	phase_pop = (pop_fn)(uintptr_t)f;
	clock_now = (now_fn)(uintptr_t)n;
	Py_RETURN_NONE;
}

/* step_calls((step_span, step_tokens, helper_stats, control)): the probe's
 * entry points called once a step, their addresses (0: the probe has not
 * that one; its function here is then not to be called). */
static PyObject *f_step_calls(PyObject *m, PyObject *args)
{
	unsigned long long a, b, c, d;
	if (!PyArg_ParseTuple(args, "(KKKK)", &a, &b, &c, &d))
		return NULL;
	step_span = (span_fn)(uintptr_t)a;
	step_tokens = (u64_fn)(uintptr_t)b;
	helper_stats = (u64x2_fn)(uintptr_t)c;
	control_word = (now_fn)(uintptr_t)d;
	Py_RETURN_NONE;
}

/* The probe's entry points the helper calls most, as the ctypes ones are
 * called (same names and arguments), at the cost of a C call. */
static PyObject *push_u32(push_fn fn, PyObject *arg)
{
	unsigned long x = PyLong_AsUnsignedLong(arg);
	if (x == (unsigned long)-1 && PyErr_Occurred())
		return NULL;
	fn((uint32_t)x); /* as ctypes' c_uint32 takes it: the low 32 bits */
	Py_RETURN_NONE;
}

static PyObject *f_op_push_id(PyObject *m, PyObject *arg)
{
	return push_u32(op_push, arg);
}

static PyObject *f_range_push_id(PyObject *m, PyObject *arg)
{
	return push_u32(range_push, arg);
}

static PyObject *f_phase_push(PyObject *m, PyObject *arg)
{
	long v = PyLong_AsLong(arg);
	if (v == -1 && PyErr_Occurred())
		return NULL;
	phase_push((int)v);
	Py_RETURN_NONE;
}

static PyObject *f_op_pop(PyObject *m, PyObject *noargs)
{
	op_pop();
	Py_RETURN_NONE;
}

static PyObject *f_range_pop(PyObject *m, PyObject *noargs)
{
	range_pop();
	Py_RETURN_NONE;
}

static PyObject *f_phase_pop(PyObject *m, PyObject *noargs)
{
	phase_pop();
	Py_RETURN_NONE;
}

static PyObject *f_now(PyObject *m, PyObject *noargs)
{
	return PyLong_FromUnsignedLongLong(clock_now());
}

/* The once-a-step ones: each takes its integers as ctypes' c_uint64 does
 * (the low 64 bits). */
static int no_entry(void *fn)
{
	if (fn)
		return 0;
	PyErr_SetString(PyExc_RuntimeError, "the probe has not this entry point");
	return 1;
}

static PyObject *f_step_span(PyObject *m, PyObject *args)
{
	unsigned long long a, b, n;
	if (no_entry((void *)step_span) || !PyArg_ParseTuple(args, "KKK", &a, &b, &n))
		return NULL;
	step_span(a, b, n);
	Py_RETURN_NONE;
}

static PyObject *f_step_tokens(PyObject *m, PyObject *arg)
{
	if (no_entry((void *)step_tokens))
		return NULL;
	unsigned long long n = PyLong_AsUnsignedLongLongMask(arg);
	if (n == (unsigned long long)-1 && PyErr_Occurred())
		return NULL;
	step_tokens(n);
	Py_RETURN_NONE;
}

static PyObject *f_helper_stats(PyObject *m, PyObject *args)
{
	unsigned long long a, b;
	if (no_entry((void *)helper_stats) || !PyArg_ParseTuple(args, "KK", &a, &b))
		return NULL;
	helper_stats(a, b);
	Py_RETURN_NONE;
}

static PyObject *f_control(PyObject *m, PyObject *noargs)
{
	if (no_entry((void *)control_word))
		return NULL;
	return PyLong_FromUnsignedLongLong(control_word());
}

/* bind_ts(ts): ts is the calling thread's state from now on. */
static PyObject *f_bind_ts(PyObject *m, PyObject *ts)
{
	if (!PyObject_TypeCheck(ts, TSBase_T)) {
		PyErr_SetString(PyExc_TypeError, "bind_ts: a TSBase");
		return NULL;
	}
	PyObject *d = PyThreadState_GetDict();
	if (!d) {
		PyErr_SetString(PyExc_RuntimeError, "bind_ts: no thread state dict");
		return NULL;
	}
	if (PyDict_SetItem(d, k_ts, ts) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *f_calls(PyObject *m, PyObject *noargs)
{
	return PyLong_FromUnsignedLongLong(g_calls);
}

static PyMethodDef methods[] = {
	{"setup", f_setup, METH_VARARGS, "setup(globals, (7 entry points' addresses), functype)"},
	{"module_call", f_module_call, METH_VARARGS, "module_call(orig, slow, label_miss)"},
	{"timed", f_timed, METH_VARARGS, "timed(orig, slow, ids_by_class)"},
	{"compose", f_compose, METH_VARARGS, "compose(orig, slow, ids, tf_id)"},
	{"stage", f_stage, METH_VARARGS, "stage(orig, slow, ids, (text, attribute or None))"},
	{"fetch_call", f_fetch_call, METH_VARARGS,
	 "fetch_call(orig, slow, None): a DataLoader iterator's __next__"},
	{"step_call", f_step_call, METH_VARARGS,
	 "step_call(orig, slow, meth, kind): called (self, args, kwargs), or (args, kwargs) for "
	 "kind 3"},
	{"bind_ts", f_bind_ts, METH_O, "bind_ts(ts): the calling thread's state"},
	{"taken", f_taken, METH_NOARGS, "taken(): (outermost, step, fetch) calls the C paths took"},
	{"root_setup", f_root_setup, METH_VARARGS,
	 "root_setup(steps_globals, phases_globals, compiler_globals, Tensor): outermost calls here"},
	{"calls", f_calls, METH_NOARGS, "calls(): wrapped calls handled here so far"},
	{"proftop_op_push_id", f_op_push_id, METH_O, NULL},
	{"proftop_op_pop", f_op_pop, METH_NOARGS, NULL},
	{"proftop_range_push_id", f_range_push_id, METH_O, NULL},
	{"proftop_range_pop", f_range_pop, METH_NOARGS, NULL},
	{"proftop_phase_push", f_phase_push, METH_O, NULL},
	{"proftop_phase_pop", f_phase_pop, METH_NOARGS, NULL},
	{"proftop_now", f_now, METH_NOARGS, NULL},
	{"step_calls", f_step_calls, METH_VARARGS,
	 "step_calls((step_span, step_tokens, helper_stats, control)): their addresses, 0 if absent"},
	{"proftop_step_span", f_step_span, METH_VARARGS, NULL},
	{"proftop_step_tokens", f_step_tokens, METH_O, NULL},
	{"proftop_helper_stats", f_helper_stats, METH_VARARGS, NULL},
	{"proftop_control", f_control, METH_NOARGS, NULL},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
	PyModuleDef_HEAD_INIT, "_proftop_fast", "proftop's zero-code helper, its per-call paths in C",
	-1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__proftop_fast(void);

PyMODINIT_FUNC PyInit__proftop_fast(void)
{
	PyObject *m = PyModule_Create(&moddef);
	if (!m)
		return NULL;
	k_off = PyUnicode_InternFromString("_off");
	k_dp_on = PyUnicode_InternFromString("_dp_on");
	k_ts = PyUnicode_InternFromString("proftop_auto._TS");
	k_transforms = PyUnicode_InternFromString("transforms");
	k_name = PyUnicode_InternFromString("__name__");
	if (fast_step_init() < 0)
		goto fail;
	TSBase_T = (PyTypeObject *)PyType_FromSpec(&ts_spec);
	Bound_T = (PyTypeObject *)PyType_FromSpec(&bound_spec);
	MC_T = (PyTypeObject *)PyType_FromSpec(&mc_spec);
	TM_T = (PyTypeObject *)PyType_FromSpec(&tm_spec);
	CP_T = (PyTypeObject *)PyType_FromSpec(&cp_spec);
	SC_T = (PyTypeObject *)PyType_FromSpec(&sc_spec);
	FC_T = (PyTypeObject *)PyType_FromSpec(&fc_spec);
	ST_T = (PyTypeObject *)PyType_FromSpec(&st_spec);
	if (!k_off || !k_dp_on || !k_ts || !k_transforms || !k_name || !TSBase_T || !Bound_T ||
	    !MC_T || !TM_T || !CP_T || !SC_T || !FC_T || !ST_T)
		goto fail;
	Py_INCREF(TSBase_T);
	if (PyModule_AddObject(m, "TSBase", (PyObject *)TSBase_T) < 0)
		goto fail;
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
